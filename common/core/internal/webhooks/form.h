// application/x-www-form-urlencoded bodies: an HTML console's sign-in form, GitHub's form
// deliveries (payload=<JSON>).
// Source: WHATWG URL Standard, section 5.1, "application/x-www-form-urlencoded parsing".
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace webhooks {

// The (name, value) pairs of `body` in their order, repeated names kept: the body split on '&',
// empty pieces skipped, each piece split at its first '=' (none: the value is empty), then in
// names and values '+' read as a space, %XX (two hex digits, any case) as that byte, and a '%'
// not followed by two hex digits kept as it is. Bytes are not checked for UTF-8. Never throws
// but std::bad_alloc.
std::vector<std::pair<std::string, std::string>> parse_form(std::string_view body);

}  // namespace webhooks
