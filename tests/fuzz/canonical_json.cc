// Canonical JSON and the request fingerprint (webhooks/canonical_json.h, fingerprint.h).
// Input: any bytes, read as a JSON text.
// Properties: canonicalize_json either returns or throws webhooks::Error(invalid_json), nothing
// else; its output is canonical already (re-canonicalising gives the same bytes); the fingerprint
// of the input is the fingerprint of its canonical form, SHA-256 of "POST\n/p\n" + canonical, and
// throws exactly when canonicalize_json throws; an accepted text holds no raw NUL byte
// (nlohmann's lexer reads NUL as the end of input: corpus regression-nul-*); nesting is kept; where
// the nesting limit of issue 12 exists (webhooks/json_parse.h, kMaxJsonDepth), nothing nested
// deeper is accepted. The compact writer shares the string escaper: a text canonicalize_json
// accepts, compact_json and read_json_body accept too; the compact text parses to the same tree,
// is its own compact form and has the same canonical form; read_json_body gives both forms.
#include "webhooks/canonical_json.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "fuzz_check.h"
#include "webhooks/error.h"
#include "webhooks/fingerprint.h"
#include "webhooks/json_body.h"
#include "webhooks/json_compact.h"
// The nesting limit arrives with the bounded JSON parser (issue 12, item 1); until that header is
// part of the tree the depth property is not checked.
#if __has_include("webhooks/json_parse.h")
#include "webhooks/json_parse.h"
#define FUZZ_MAX_JSON_DEPTH webhooks::kMaxJsonDepth
#endif

namespace {

// The deepest nesting of arrays and objects in a valid JSON text (brackets inside strings skipped).
std::size_t nesting_depth(std::string_view json) {
  std::size_t depth = 0, deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using webhooks::Error;
  using webhooks::ErrorCode;
  const std::string_view input = fuzz::text(data, size);
  std::string canonical;
  try {
    canonical = webhooks::canonicalize_json(input);
  } catch (const Error& e) {
    FUZZ_CHECK(e.code() == ErrorCode::invalid_json);
    if (!input.empty()) {
      bool threw = false;
      try {
        webhooks::request_fingerprint("POST", "/p", input);
      } catch (const Error& f) {
        threw = f.code() == ErrorCode::invalid_json;
      }
      FUZZ_CHECK(threw);
    }
    return 0;
  }
  // A JSON text holds no raw NUL (nlohmann's lexer would stop at one and ignore the rest).
  FUZZ_CHECK(input.find('\0') == std::string_view::npos);
  FUZZ_CHECK(nesting_depth(canonical) == nesting_depth(input));
#ifdef FUZZ_MAX_JSON_DEPTH
  FUZZ_CHECK(nesting_depth(input) <= FUZZ_MAX_JSON_DEPTH);
#endif
  std::string again;
  try {
    again = webhooks::canonicalize_json(canonical);
  } catch (const Error&) {
    FUZZ_CHECK(!"the canonical form is not accepted by canonicalize_json");
  }
  FUZZ_CHECK(again == canonical);
  std::string compact;
  try {
    compact = webhooks::compact_json(input);
  } catch (const Error&) {
    FUZZ_CHECK(!"compact_json refused a text canonicalize_json accepts");
  }
  FUZZ_CHECK(webhooks::compact_json(compact) == compact);
  FUZZ_CHECK(webhooks::canonicalize_json(compact) == canonical);
  FUZZ_CHECK(nlohmann::json::parse(compact) == nlohmann::json::parse(input));
  const webhooks::JsonBody body = webhooks::read_json_body(input, true);
  FUZZ_CHECK(body.compact == compact);
  FUZZ_CHECK(body.canonical == canonical);
  FUZZ_CHECK(!body.duplicate_name);
  const std::string fingerprint = webhooks::request_fingerprint("POST", "/p", input);
  FUZZ_CHECK(fingerprint.size() == 64);
  if (!input.empty()) {
    FUZZ_CHECK(fingerprint == webhooks::request_fingerprint("POST", "/p", canonical));
    FUZZ_CHECK(fingerprint == webhooks::sha256_hex("POST\n/p\n" + canonical));
  }
  return 0;
}
