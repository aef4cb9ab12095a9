// The body of every error answer the toolkit's servers send (DESIGN.md, "Errors"):
// `{"error":{"code":"<code>","message":"<message>"}}`.
#pragma once

#include <string>
#include <string_view>

namespace webhooks {

// `{"error":{"code":code,"message":message}}`, compact JSON. Bytes of `code` or `message` that are
// not UTF-8 become U+FFFD (a message may quote a client's bytes). Does not throw but
// std::bad_alloc.
std::string error_body(std::string_view code, std::string_view message);

}  // namespace webhooks
