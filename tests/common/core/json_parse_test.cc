// The bounded parser (json_parse.h), the raw-number compact writer (json_compact.h) and how
// canonical JSON treats nesting and numbers a double cannot hold (docs/idempotency.md).
#include "webhooks/json_parse.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "webhooks/canonical_json.h"
#include "webhooks/error.h"
#include "webhooks/fingerprint.h"
#include "webhooks/json_body.h"
#include "webhooks/json_compact.h"

using namespace webhooks;

namespace {

std::string nested_arrays(std::size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

std::string nested_objects(std::size_t depth) {
  std::string text;
  for (std::size_t i = 0; i < depth; ++i) text += "{\"a\":";
  text += "1";
  text.append(depth, '}');
  return text;
}

const char* const kDepthMessage =
    "invalid JSON: nested deeper than the limit of 128 arrays and objects";

// The message of the invalid_json Error `f` throws.
template <typename F>
std::string refusal(F f) {
  try {
    f();
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::invalid_json);
    return e.what();
  }
  FAIL("accepted");
  return {};
}

bool printable_ascii(const std::string& s) {
  for (char c : s) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("128 levels of nesting parse; 129 and 100,000 are refused naming the limit") {
  CHECK(kMaxJsonDepth == 128);
  CHECK(parse_json(nested_arrays(128)).is_array());
  CHECK(parse_json(nested_objects(128)).is_object());
  CHECK(parse_ordered_json(nested_objects(128)).is_object());
  CHECK(canonicalize_json(nested_arrays(128)) == nested_arrays(128));
  CHECK(compact_json(nested_arrays(128)) == nested_arrays(128));
  for (const std::string& text : {nested_arrays(129), nested_objects(129), nested_arrays(100'000),
                                  nested_objects(100'000), std::string(100'000, '[')}) {
    CHECK(refusal([&] { parse_json(text); }) == kDepthMessage);
    CHECK(refusal([&] { parse_ordered_json(text); }) == kDepthMessage);
    CHECK(parse_json_or_discarded(text).is_discarded());
    CHECK(refusal([&] { canonicalize_json(text); }) == kDepthMessage);
    CHECK(refusal([&] { request_fingerprint("POST", "/orders", text); }) == kDepthMessage);
    CHECK(refusal([&] { compact_json(text); }) == kDepthMessage);
  }
  CHECK(refusal([&] { parse_json(nested_arrays(3), JsonParseOptions{.max_depth = 2}); }) ==
        "invalid JSON: nested deeper than the limit of 2 arrays and objects");
}

TEST_CASE("1 MiB of nested arrays is refused after its first 129 bytes") {
  // Before the limit, canonical JSON copied each level's text into its parent: ~19 s of CPU for
  // this body on orders-api. Now every reader stops at byte 129; bench/json_bench.cc measures it.
  const std::string body = nested_arrays(512 * 1024);
  REQUIRE(body.size() == 1024 * 1024);
  CHECK(refusal([&] { canonicalize_json(body); }) == kDepthMessage);
  CHECK(refusal([&] { parse_json(body); }) == kDepthMessage);
  CHECK(refusal([&] { compact_json(body); }) == kDepthMessage);
}

TEST_CASE("invalid UTF-8 in a string is invalid_json with a printable message") {
  for (const std::string bad : {"\xff", "\xc0\xaf", "\xed\xa0\x80"}) {
    const std::string text = "{\"reference\":\"a" + bad + "b\"}";
    INFO(text);
    for (const std::string& message :
         {refusal([&] { parse_json(text); }), refusal([&] { canonicalize_json(text); }),
          refusal([&] { compact_json(text); })}) {
      CHECK(message.starts_with("invalid JSON at byte "));
      CHECK(message.find("ill-formed UTF-8 byte") != std::string::npos);
      CHECK(printable_ascii(message));
    }
  }
}

TEST_CASE("a number beyond a double is refused without echoing its digits") {
  // Found by the red team: a 900,000-digit number in event data came back whole in the 400 body.
  const std::string huge = "{\"x\":" + std::string(900'000, '1') + "}";
  const std::string expected =
      "invalid JSON at byte 900005: number overflow: the number is beyond the range of a double";
  CHECK(refusal([&] { parse_json(huge); }) == expected);
  CHECK(refusal([&] { canonicalize_json(huge); }).size() < 200);
  CHECK(refusal([&] { compact_json(huge); }).size() < 200);
  CHECK(refusal([&] { parse_json("[1e400]"); }) ==
        "invalid JSON at byte 6: number overflow: the number is beyond the range of a double");
}

TEST_CASE("integral_floats_as_integers: exact integers up to 2^53 in any spelling") {
  const JsonParseOptions exact{.integral_floats_as_integers = true};
  const auto doc = parse_json(
      R"([1000.0, 1e3, -2.5e1, 9007199254740992.0, 9007199254740993.0, 9.007199254740993e15,
          1000.00000000000001, 0.5, 36893488147419103233, 12])",
      exact);
  CHECK(doc[0].is_number_unsigned());
  CHECK(doc[0].get<std::int64_t>() == 1000);
  CHECK(doc[1].is_number_unsigned());
  CHECK(doc[2].is_number_integer());
  CHECK(doc[2].get<std::int64_t>() == -25);
  CHECK(doc[3].is_number_unsigned());
  CHECK(doc[3].get<std::uint64_t>() == 9007199254740992ULL);
  CHECK(doc[4].is_number_float());
  CHECK(doc[5].is_number_float());
  CHECK(doc[6].is_number_float());
  CHECK(doc[7].is_number_float());
  CHECK(doc[8].is_number_float());
  CHECK(doc[9].is_number_unsigned());
  // Without the option nlohmann's own types stay.
  CHECK(parse_json("1000.0").is_number_float());
}

TEST_CASE("compact_json keeps every number token byte for byte") {
  CHECK(compact_json(" { \"amount\" : 36893488147419103233 ,\n \"list\":[ 1e3, 1.50, -0, 1E+2 ],"
                     "\"s\":\"\\u00e9\\n\\\"\", \"o\" : { } } ") ==
        "{\"amount\":36893488147419103233,\"list\":[1e3,1.50,-0,1E+2],\"s\":\"\xc3\xa9\\n\\\"\","
        "\"o\":{}}");
}

namespace {

// The compact text of member `name` of a body read by read_json_body, or std::nullopt.
std::optional<std::string> member_text(const JsonBody& body, std::string_view name) {
  const JsonBody::Member* member = body.find(name);
  if (member == nullptr) return std::nullopt;
  return std::string(body.text(*member));
}

}  // namespace

TEST_CASE(
    "read_json_body: one pass gives the compact text, each top-level member and the "
    "canonical form") {
  const std::string body =
      R"({"merchant_id":"m1","data":{"n":36893488147419103233,"x":[{"data":1}]},"type":"t"})";
  const JsonBody read = read_json_body(body, true);
  CHECK(read.compact ==
        R"({"merchant_id":"m1","data":{"n":36893488147419103233,"x":[{"data":1}]},"type":"t"})");
  CHECK(read.canonical == canonicalize_json(body));
  CHECK(read.canonical ==
        R"({"data":{"n":36893488147419103233,"x":[{"data":1}]},"merchant_id":"m1","type":"t"})");
  CHECK_FALSE(read.duplicate_name);
  CHECK(canonical_request_fingerprint("POST", "/v1/events", read.canonical) ==
        request_fingerprint("POST", "/v1/events", body));
  REQUIRE(read.members.size() == 3);
  CHECK(read.members[0].name == "merchant_id");
  CHECK(read.members[0].string == "m1");
  CHECK(read.members[1].name == "data");
  CHECK(read.members[1].string == std::nullopt);  // an object, not a string
  CHECK(member_text(read, "data") == R"({"n":36893488147419103233,"x":[{"data":1}]})");
  CHECK(member_text(read, "type") == "\"t\"");
  CHECK(member_text(read, "missing") == std::nullopt);
  // Without the canonical form: the same compact text and members, no canonical text.
  const JsonBody plain = read_json_body(body, false);
  CHECK(plain.compact == read.compact);
  CHECK(plain.canonical.empty());
  CHECK(member_text(plain, "data") == member_text(read, "data"));
  // Not an object: no members.
  const JsonBody array = read_json_body("[{\"data\":1}]", true);
  CHECK_FALSE(array.is_object());
  CHECK(array.members.empty());
  CHECK(array.canonical == "[{\"data\":1}]");
  // A repeated name: the last one is found (as a tree keeps it), no canonical form, flagged.
  const JsonBody repeated = read_json_body(R"({"data":1,"data":[2],"s":"a"})", true);
  CHECK(member_text(repeated, "data") == "[2]");
  CHECK(repeated.duplicate_name);
  CHECK(repeated.canonical.empty());
  CHECK(read_json_body(R"({"o":{"a":1,"a":2}})", true).duplicate_name);
  // Depth and validity as parse_json: 128 nested arrays pass, 129 do not.
  CHECK(read_json_body(nested_arrays(128), true).compact == nested_arrays(128));
  CHECK_THROWS_WITH(read_json_body(nested_arrays(129), true),
                    "invalid JSON: nested deeper than the limit of 128 arrays and objects");
  CHECK_THROWS_WITH(read_json_body("{\"a\":", false), Catch::Contains("invalid JSON"));
}

TEST_CASE("scan_json_object checks as parse_json does and reads one top-level string member") {
  const JsonObjectScan order =
      scan_json_object(R"({"id":"e1","type":"order.created","data":{"type":"inner"}})", "type");
  CHECK(order.is_object);
  CHECK(order.member == "order.created");
  CHECK(scan_json_object(R"({"type":"a\u0062c"})", "type").member == "abc");
  // The last of a repeated name counts; a value that is not a string is none.
  CHECK(scan_json_object(R"({"type":"a","type":"b"})", "type").member == "b");
  CHECK(scan_json_object(R"({"type":"a","type":{"b":1}})", "type").member == std::nullopt);
  CHECK(scan_json_object(R"({"type":7})", "type").member == std::nullopt);
  CHECK(scan_json_object(R"({"data":{"type":"inner"}})", "type").member == std::nullopt);
  const JsonObjectScan array = scan_json_object(R"(["type","x"])", "type");
  CHECK_FALSE(array.is_object);
  CHECK(array.member == std::nullopt);
  CHECK_FALSE(scan_json_object("\"type\"", "type").is_object);
  // The limits of parse_json: 128 nested arrays pass, 129 do not; invalid JSON and UTF-8 throw.
  CHECK_FALSE(scan_json_object(nested_arrays(128), "type").is_object);
  CHECK_THROWS_WITH(scan_json_object(nested_arrays(129), "type"),
                    "invalid JSON: nested deeper than the limit of 128 arrays and objects");
  CHECK_THROWS_WITH(scan_json_object("{\"type\":\"\xff\"}", "type"),
                    Catch::Contains("invalid JSON"));
  CHECK_THROWS_WITH(scan_json_object("{\"type\":\"a\"} x", "type"),
                    Catch::Contains("invalid JSON"));
}

TEST_CASE("compact_json re-escapes strings: exactly what docs/operations.md says changes") {
  // An escape of a character that needs none becomes the character, in UTF-8.
  CHECK(compact_json(R"(["\u00e9","a\/b","\u0041","\ud83d\ude00","\u20AC"])") ==
        "[\"\xc3\xa9\",\"a/b\",\"A\",\"\xf0\x9f\x98\x80\",\"\xe2\x82\xac\"]");
  // The two that must be escaped stay; controls are written \b \f \n \r \t, others \u00xx.
  CHECK(compact_json(R"(["\"\\","\u0008\u000C\u000a\u000D\u0009","\u001F","\u0000"])") ==
        R"(["\"\\","\b\f\n\r\t","\u001f","\u0000"])");
  // DEL and raw UTF-8 pass unchanged; names are strings too; member order and repeats are kept.
  CHECK(compact_json("{\"\\u006e\":\"\\u007f\xc3\xa9\",\"n\":1}") ==
        "{\"n\":\"\x7f\xc3\xa9\",\"n\":1}");
}

TEST_CASE("strings with every ASCII code point are written as nlohmann::json::dump writes them") {
  // Each code point U+0000..U+007F escaped as \u00xx in the input, between plain text, as a
  // member name and as a value: the compact and canonical writers share one escaper.
  std::string input = "\"<", decoded = "<";
  for (int c = 0; c < 0x80; ++c) {
    char escape[8];
    std::snprintf(escape, sizeof escape, "\\u%04x", c);
    input += escape;
    decoded.push_back(static_cast<char>(c));
  }
  input += ">\"";
  decoded += ">";
  const std::string dumped = nlohmann::json(decoded).dump();
  CHECK(dumped.size() == 2 + 2 + 128 + 27 * 5 + 7);  // 27 \u00xx, 7 two-byte escapes
  CHECK(compact_json(input) == dumped);
  CHECK(canonicalize_json(input) == dumped);
  const std::string object = "{" + input + ":" + input + ",\"a\":[-0,0,-12,18446744073709551615]}";
  const std::string expected =
      "{" + dumped + ":" + dumped + ",\"a\":[-0,0,-12,18446744073709551615]}";
  CHECK(compact_json(object) == expected);
  CHECK(read_json_body(object, false).compact == expected);
  // Canonical: members sorted by UTF-16 code units ('<' before 'a'), -0 written 0.
  CHECK(canonicalize_json(object) ==
        "{" + dumped + ":" + dumped + ",\"a\":[0,0,-12,18446744073709551615]}");
}

TEST_CASE("canonical numbers: beyond a double's digits, values stay exact") {
  // Integers beyond 64 bits: distinct tokens, distinct canonical forms and fingerprints.
  CHECK(canonicalize_json("36893488147419103233") == "36893488147419103233");
  CHECK(canonicalize_json("36893488147419103234") == "36893488147419103234");
  CHECK(request_fingerprint("POST", "/v1/events", R"({"data":{"n":36893488147419103233}})") !=
        request_fingerprint("POST", "/v1/events", R"({"data":{"n":36893488147419103234}})"));
  // Equal values agree whatever their spelling.
  CHECK(canonicalize_json("[36893488147419103233.0,3.6893488147419103233e19]") ==
        "[36893488147419103233,36893488147419103233]");
  CHECK(canonicalize_json("[9007199254740993.0,9.007199254740993e15,9007199254740993]") ==
        "[9007199254740993,9007199254740993,9007199254740993]");
  CHECK(canonicalize_json("[1000.00000000000001,1000]") == "[1000.00000000000001,1000]");
  CHECK(canonicalize_json("[-1.000000000000000000001e-30,1.0000000000000000000010e40]") ==
        "[-1.000000000000000000001e-30,1.000000000000000000001e+40]");
  // 17 significant digits or fewer: the double, as RFC 8785 writes it (the published vector).
  CHECK(canonicalize_json("[333333333.33333329,4.50,2e-3,1E30,100000000000000000000]") ==
        "[333333333.3333333,4.5,0.002,1e+30,100000000000000000000]");
  CHECK(refusal([] { canonicalize_json("1.00000000000000000001e-1234567890123456"); }) ==
        "invalid JSON: a number's exponent has over 15 digits");
}

TEST_CASE("Unicode policy: canonical JSON does not normalise (NFC and NFD differ)") {
  const std::string nfc = "{\"reference\":\"caf\xc3\xa9\"}";   // U+00E9
  const std::string nfd = "{\"reference\":\"cafe\xcc\x81\"}";  // e + U+0301
  const std::string nfd_escaped = "{\"reference\":\"cafe\\u0301\"}";
  CHECK(canonicalize_json(nfc) == nfc);
  CHECK(canonicalize_json(nfd) == nfd);
  CHECK(canonicalize_json(nfd_escaped) == nfd);
  CHECK(request_fingerprint("POST", "/orders", nfc) != request_fingerprint("POST", "/orders", nfd));
}

TEST_CASE("every reader refuses a raw NUL byte instead of stopping at it") {
  // The class of fuzz: canonical_json/regression-nul-after-value: nlohmann's lexer reads NUL as
  // the end of input, so "{\"a\":1}\0{\"b\":2}" parsed as {"a":1}.
  using namespace std::string_literals;
  const std::string text = "{\"a\":1}\0{\"b\":2}"s;
  const char* const message =
      "invalid JSON: NUL byte at byte offset 7 (write it as \\u0000 inside a string)";
  CHECK_THROWS_WITH(parse_json(text), message);
  CHECK_THROWS_WITH(parse_ordered_json(text), message);
  CHECK(parse_json_or_discarded(text).is_discarded());
  CHECK_THROWS_WITH(compact_json(text), message);
  CHECK_THROWS_WITH(read_json_body(text, true), message);
  CHECK_THROWS_WITH(scan_json_object(text, "a"), message);
  // Escaped, it is an ordinary character.
  CHECK(parse_json("\"\\u0000\"") == nlohmann::json("\0"s));
}
