#include "webhooks/canonical_json.h"

#include <catch2/catch.hpp>

#include "support/test_env.h"
#include "webhooks/error.h"

using namespace webhooks;

TEST_CASE("the published RFC 8785 vectors canonicalise byte for byte") {
  const char* names[] = {"arrays", "french", "structures", "unicode", "values", "weird"};
  for (const char* name : names) {
    INFO(name);
    const std::string dir = test::vectors_dir() + "/rfc8785/";
    const std::string input = test::read_file(dir + name + ".in.json");
    const std::string expected = test::read_file(dir + name + ".out.json");
    CHECK(canonicalize_json(input) == expected);
  }
}

TEST_CASE("key order follows UTF-16 code units, not UTF-8 bytes") {
  // U+E000 (UTF-8 EE 80 80) sorts after U+1F600 (UTF-8 F0 9F 98 80) in UTF-16 (D83D < E000).
  CHECK(canonicalize_json("{\"\xee\x80\x80\":1,\"\xf0\x9f\x98\x80\":2}") ==
        "{\"\xf0\x9f\x98\x80\":2,\"\xee\x80\x80\":1}");
  CHECK(canonicalize_json("{\"b\":1,\"a\":{\"d\":[3,{\"z\":0,\"y\":1}],\"c\":null}}") ==
        "{\"a\":{\"c\":null,\"d\":[3,{\"y\":1,\"z\":0}]},\"b\":1}");
}

TEST_CASE("whitespace and unicode escapes normalise") {
  CHECK(canonicalize_json(" { \"a\" :\t[ 1 , 2 ]\n} ") == "{\"a\":[1,2]}");
  CHECK(canonicalize_json("\"\\u0041\\u00e9\\ud83d\\ude00\"") == "\"A\xc3\xa9\xf0\x9f\x98\x80\"");
  CHECK(canonicalize_json("\"\\u001f\\n\\/\\u007f\\u2028\"") == "\"\\u001f\\n/\x7f\xe2\x80\xa8\"");
  CHECK(canonicalize_json("\"\\\"\\\\\\b\\f\\r\\t\"") == "\"\\\"\\\\\\b\\f\\r\\t\"");
}

TEST_CASE("numbers take the ECMAScript form; integers stay exact") {
  CHECK(canonicalize_json("[1,1.0,1e0,10E-1,-0,-0.0]") == "[1,1,1,1,0,0]");
  CHECK(canonicalize_json("[1000,1000.0,1e3]") == "[1000,1000,1000]");
  CHECK(canonicalize_json("[0.1,1e21,1e20,1e-7,0.000001,123.456e5,-1.5e-10]") ==
        "[0.1,1e+21,100000000000000000000,1e-7,0.000001,12345600,-1.5e-10]");
  CHECK(canonicalize_json("9007199254740993") == "9007199254740993");
  CHECK(canonicalize_json("9007199254740992") == "9007199254740992");
  CHECK(canonicalize_json("-9223372036854775808") == "-9223372036854775808");
  CHECK(canonicalize_json("18446744073709551615") == "18446744073709551615");
  CHECK(canonicalize_json("5e-324") == "5e-324");
  CHECK(canonicalize_json("1.7976931348623157e308") == "1.7976931348623157e+308");
}

TEST_CASE("invalid documents are errors") {
  const char* bad[] = {
      "{\"a\":1,\"a\":2}",                  // duplicate names
      "{\"x\":{\"a\":1,\"b\":2,\"a\":3}}",  // nested duplicates
      "\"\xff\"",                           // invalid UTF-8
      "\"\xc3\"",                           // truncated UTF-8
      "\"\\ud800\"",                        // lone surrogate
      "{\"a\":1",                           // truncated
      "1e400",                              // outside the double range
      "",
      "[1,]",
      "{\"a\":1} x",
  };
  for (const char* text : bad) {
    INFO(text);
    try {
      canonicalize_json(text);
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::invalid_json);
    }
  }
  CHECK_THROWS_WITH(canonicalize_json("{\"a\":1,\"a\":2}"),
                    "invalid JSON: duplicate object member name");
  // The same name in sibling objects is fine.
  CHECK(canonicalize_json("[{\"a\":1},{\"a\":2}]") == "[{\"a\":1},{\"a\":2}]");
}

TEST_CASE(
    "a NUL byte is an error, not the end of the document (fuzz: "
    "canonical_json/regression-nul-after-value)") {
  // nlohmann's lexer reads NUL as the end of input: "{}\0junk" was accepted as "{}".
  using namespace std::string_literals;
  for (const std::string& text : {"{}\0x"s, "{\"a\":1}\0{\"b\":2}"s, "1\0"s, "\0"s, "[\0]"s}) {
    INFO(text.size() << " bytes");
    try {
      canonicalize_json(text);
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::invalid_json);
    }
  }
  CHECK_THROWS_WITH(
      canonicalize_json("{\"a\":1}\0{\"b\":2}"s),
      "invalid JSON: NUL byte at byte offset 7 (write it as \\u0000 inside a string)");
  CHECK(canonicalize_json("\"\\u0000\"") == "\"\\u0000\"");
}
