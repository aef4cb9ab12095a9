// Canonical JSON for request fingerprints: RFC 8785 (JSON Canonicalization Scheme), except that
// numbers a double cannot hold are not rounded through one (docs/idempotency.md, "Numbers and
// Unicode in the fingerprint").
// - Object members sorted by the UTF-16 code units of their names (RFC 8785 section 3.2.3).
// - No insignificant whitespace; strings escaped as RFC 8785 section 3.2.2.2 says; Unicode is not
//   normalised (NFC and NFD spellings stay different).
// - Numbers by their exact decimal value: an integer from -2^63 to 2^64-1 in any spelling is
//   printed exactly (1000.0, 1e3 -> 1000; 9007199254740993 stays itself); any other value with at
//   most 17 significant digits in ECMAScript Number-to-String form (section 3.2.2.3: 4.50 -> 4.5);
//   a value with more significant digits exactly, in the same layout (36893488147419103233 and
//   1000.00000000000001 stay themselves).
// - Duplicate object names, invalid UTF-8, lone surrogates, numbers outside the double range,
//   nesting deeper than kMaxJsonDepth (128, json_parse.h) and a raw NUL byte anywhere
//   (nlohmann/json would stop reading at it) are errors.
#pragma once

#include <string>
#include <string_view>

namespace webhooks {

// Returns the canonical form of the JSON text `json` (any JSON value, not only objects).
// Time linear in json.size().
// Throws webhooks::Error(ErrorCode::invalid_json) on invalid input; what() is printable ASCII with
// the reason and byte offset, e.g. "invalid JSON: nested deeper than the limit of 128 arrays and
// objects" or "invalid JSON: duplicate object member name".
std::string canonicalize_json(std::string_view json);

}  // namespace webhooks
