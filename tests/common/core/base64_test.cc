#include "webhooks/base64.h"

#include <catch2/catch.hpp>

using namespace webhooks;

namespace {
std::vector<std::uint8_t> bytes(std::string_view s) { return {s.begin(), s.end()}; }
}  // namespace

TEST_CASE("base64 follows RFC 4648 section 10 test vectors") {
  const std::pair<const char*, const char*> cases[] = {{"", ""},
                                                       {"f", "Zg=="},
                                                       {"fo", "Zm8="},
                                                       {"foo", "Zm9v"},
                                                       {"foob", "Zm9vYg=="},
                                                       {"fooba", "Zm9vYmE="},
                                                       {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : cases) {
    CHECK(base64_encode(bytes(plain)) == encoded);
    CHECK(base64_decode(encoded) == bytes(plain));
  }
}

TEST_CASE("base64 decoding is strict") {
  CHECK_FALSE(base64_decode("Zg="));   // length not a multiple of 4
  CHECK_FALSE(base64_decode("Zm 9"));  // whitespace
  CHECK_FALSE(base64_decode("Zm9v\n"));
  CHECK_FALSE(base64_decode("Z==="));  // too much padding
  CHECK_FALSE(base64_decode("Zg=a"));  // padding in the middle
  CHECK_FALSE(base64_decode("Zm-_"));  // URL-safe alphabet
  CHECK_FALSE(base64_decode("===="));
}
