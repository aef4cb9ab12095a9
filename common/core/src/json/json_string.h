// A JSON string's text, as both of our writers emit it (compact_json and canonicalize_json).
#pragma once

#include <string>
#include <string_view>

namespace webhooks::detail {

// Appends `s` (UTF-8, already validated by the parser) to `out` as a quoted JSON string: `"` and
// `\` escaped, \b \f \n \r \t for those controls, \u00xx (lowercase hex) for the other code points
// below U+0020, every other byte as it is. This is RFC 8785 section 3.2.2.2 (JSON.stringify's
// form) and byte for byte what nlohmann::json::dump() writes without ensure_ascii. Never throws
// but std::bad_alloc.
void append_json_string(std::string& out, std::string_view s);

}  // namespace webhooks::detail
