// `webhooks verify --headers-file`: a file of "name: value" lines read as the receiver reads a
// request's header fields (input.cc).
#pragma once

#include <string>

#include "webhooks/receiver/receiver.h"

namespace webhooks::cli {

// "name: value" lines in their order, as the receiver reads a request's fields
// (receiver::Headers), after a leading UTF-8 byte order mark. Blank lines and lines starting
// with '#' are skipped. Throws UsageError
// naming the line that has no colon. A second line of a header every server here takes once
// (http::single_header: the signature and id headers among them) is what the receiver answers 400
// bad_request: `refusal` is set to its message ("send one webhook-signature header (lines 3 and
// 5)"); so is a value holding a control character but HTAB (RFC 9110, section 5.5: "the value of
// header x-note holds a control character (line 3)"). Else `refusal` is left empty.
receiver::Headers parse_header_lines(const std::string& text, std::string& refusal);

}  // namespace webhooks::cli
