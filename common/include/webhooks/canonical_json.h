// Canonical JSON for request fingerprints: RFC 8785 (JSON Canonicalization Scheme) with one
// deliberate difference, integers are kept exact instead of being rounded through a double.
// - Object members sorted by the UTF-16 code units of their names (RFC 8785 section 3.2.3).
// - No insignificant whitespace; strings escaped as RFC 8785 section 3.2.2.2 says.
// - Numbers in ECMAScript Number-to-String form (section 3.2.2.3), so 1, 1.0 and 1e0 are "1";
//   but a number written without fraction or exponent that fits a 64-bit integer is printed
//   exactly, so 9007199254740993 and 9007199254740992 stay different.
// - Duplicate object names, invalid UTF-8, lone surrogates, numbers outside the double range and
//   a raw NUL byte anywhere (nlohmann/json would stop reading at it) are errors.
#pragma once

#include <string>
#include <string_view>

namespace webhooks {

// Returns the canonical form of the JSON text `json` (any JSON value, not only objects).
// Throws webhooks::Error(ErrorCode::invalid_json) with the reason and byte offset on invalid input.
std::string canonicalize_json(std::string_view json);

}  // namespace webhooks
