#include "webhooks/rfc3339.h"

#include <catch2/catch.hpp>

using namespace webhooks;

TEST_CASE("RFC 3339 formatting is UTC with milliseconds") {
  CHECK(format_rfc3339(0) == "1970-01-01T00:00:00.000Z");
  CHECK(format_rfc3339(1'700'000'000'123) == "2023-11-14T22:13:20.123Z");
  CHECK(format_rfc3339(951'782'400'000) == "2000-02-29T00:00:00.000Z");
}

TEST_CASE("RFC 3339 parsing") {
  CHECK(parse_rfc3339("2023-11-14T22:13:20.123Z") == 1'700'000'000'123);
  CHECK(parse_rfc3339("2023-11-14T22:13:20Z") == 1'700'000'000'000);
  CHECK(parse_rfc3339("2023-11-14t22:13:20.1234567z") == 1'700'000'000'123);
  CHECK(parse_rfc3339("2023-11-15T00:13:20+02:00") == 1'700'000'000'000);
  CHECK(parse_rfc3339("2023-11-14T20:13:20-02:00") == 1'700'000'000'000);
  CHECK(parse_rfc3339("2000-02-29T00:00:00Z") == 951'782'400'000);
  for (const char* bad : {"", "2023-11-14", "2023-11-14T22:13:20", "2023-02-30T00:00:00Z",
                          "2023-11-14T24:00:00Z", "2023-11-14T22:13:20.Z", "2023-11-14T22:13:20Zx",
                          "2023-11-14T22:13:20+0200", "yesterday"}) {
    INFO(bad);
    CHECK_FALSE(parse_rfc3339(bad));
  }
}
