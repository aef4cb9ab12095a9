// Checks every JSON reader makes on the raw text before nlohmann/json sees it.
#pragma once

#include <string_view>

namespace webhooks::detail {

// nlohmann/json's lexer takes a raw NUL byte for the end of the input, so "{}\0junk" would read
// as "{}" and two different bodies would parse alike. A JSON text never holds a raw NUL (RFC 8259:
// it is not whitespace, and inside a string it must be escaped as \u0000).
// Throws webhooks::Error(ErrorCode::invalid_json, "invalid JSON: NUL byte at byte offset N (write
// it as \u0000 inside a string)") when `text` holds one; returns otherwise.
void refuse_nul_byte(std::string_view text);

}  // namespace webhooks::detail
