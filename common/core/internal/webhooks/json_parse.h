// The one way the toolkit turns JSON text into a tree: nlohmann's iterative parser with a nesting
// limit, so no later recursive walk (dump, comparison, a handler's own code) can overflow the
// stack, and a clean error message that never echoes the client's bytes. docs/security.md.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace webhooks {

// The deepest nesting of arrays and objects accepted anywhere: `[]` and `{}` have depth 1,
// `{"a":[1]}` depth 2. Deeper documents are refused as invalid JSON.
inline constexpr std::size_t kMaxJsonDepth = 128;

struct JsonParseOptions {
  // Arrays and objects nested deeper than this are refused (see kMaxJsonDepth).
  std::size_t max_depth = kMaxJsonDepth;
  // When true, a number written with a fraction or an exponent whose exact decimal value is an
  // integer of magnitude at most 2^53 (`1000.0`, `1e3`) is stored as an integer; every other
  // number with a fraction or exponent (`1000.00000000000001`, `9007199254740993.0`) stays a
  // float. A reader can then require an exact integer in any spelling by refusing floats.
  bool integral_floats_as_integers = false;
};

// Parses the whole of `text` (one JSON value, surrounding whitespace allowed) into a tree.
// Time and memory linear in text.size().
// Throws webhooks::Error(ErrorCode::invalid_json) when the text is not JSON (RFC 8259, strict
// UTF-8), or nests deeper than options.max_depth; what() is printable ASCII, e.g.
// "invalid JSON: nested deeper than the limit of 128 arrays and objects" or
// "invalid JSON at byte 12: syntax error while parsing value - invalid string: ill-formed UTF-8
// byte".
nlohmann::json parse_json(std::string_view text, const JsonParseOptions& options = {});

// The same, into an object type that keeps the members in document order.
nlohmann::ordered_json parse_ordered_json(std::string_view text,
                                          const JsonParseOptions& options = {});

// parse_json(), except that a refused text gives a discarded value (is_discarded() is true)
// instead of throwing, as nlohmann::json::parse(text, nullptr, false) does.
nlohmann::json parse_json_or_discarded(std::string_view text, const JsonParseOptions& options = {});

// The message of a refused nesting depth: "invalid JSON: nested deeper than the limit of N arrays
// and objects". Shared by every parser so clients see one wording.
std::string json_depth_message(std::size_t max_depth);

// A printable-ASCII message for an error nlohmann reported while parsing: its reason without the
// "last read" excerpt of the input (which may hold invalid UTF-8) and without the number token an
// overflow quotes ("number overflow: the number is beyond the range of a double"), at most 200
// characters of reason, prefixed "invalid JSON at byte N: ". It never repeats the client's bytes.
std::string json_parse_error_message(std::size_t byte, const std::exception& ex);

}  // namespace webhooks
