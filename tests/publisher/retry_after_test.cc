#include "delivery/retry_after.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <tuple>

#include "webhooks/error.h"

using namespace webhooks;
using namespace webhooks::publisher;
using namespace std::chrono_literals;

namespace {
constexpr UnixMillis kNow = 1'700'000'000'000;  // Tue, 14 Nov 2023 22:13:20 GMT
}  // namespace

TEST_CASE("Retry-After in delay-seconds") {
  CHECK(parse_retry_after("120", kNow) == 120s);
  CHECK(parse_retry_after("1", kNow) == 1s);
  CHECK(parse_retry_after(" 30\t", kNow) == 30s);
  CHECK(parse_retry_after("0030", kNow) == 30s);
  CHECK(parse_retry_after("3599", kNow) == 3599s);
  // Clamped to the default bounds [1 s, 1 h].
  CHECK(parse_retry_after("0", kNow) == 1s);
  CHECK(parse_retry_after("3601", kNow) == 1h);
  CHECK(parse_retry_after("86400", kNow) == 1h);
  CHECK(parse_retry_after("999999999999999", kNow) == 1h);
  CHECK(parse_retry_after("99999999999999999999999999999", kNow) == 1h);
}

TEST_CASE("Retry-After as an HTTP date, relative to now") {
  // The value, the time it is read at, the wait it asks for.
  const std::tuple<const char*, UnixMillis, std::chrono::milliseconds> cases[] = {
      {"Tue, 14 Nov 2023 22:15:20 GMT", kNow, 120s},
      {"Tue, 14 Nov 2023 22:15:20 GMT", kNow + 500, 119'500ms},
      {"Tuesday, 14-Nov-23 22:15:20 GMT", kNow, 120s},
      {"Tue Nov 14 22:15:20 2023", kNow, 120s},
      {"  Tue, 14 Nov 2023 22:15:20 GMT  ", kNow, 120s},
      {"Tue, 14 Nov 2023 22:43:20 GMT", kNow, 30min},
      // A leap second counts as the next second.
      {"Tue, 14 Nov 2023 22:15:60 GMT", kNow, 160s},
      // The day name is not checked against the date.
      {"Mon, 14 Nov 2023 22:15:20 GMT", kNow, 120s},
      // In the past, or now: the minimum. Far ahead: the maximum.
      {"Tue, 14 Nov 2023 22:13:00 GMT", kNow, 1s},
      {"Tue, 14 Nov 2023 22:13:20 GMT", kNow, 1s},
      {"Sun, 06 Nov 1994 08:49:37 GMT", kNow, 1s},
      {"Fri, 01 Jan 2100 00:00:00 GMT", kNow, 1h},
  };
  for (const auto& [value, now, wait] : cases) {
    INFO(value << " at " << now);
    CHECK(parse_retry_after(value, now) == wait);
  }
}

TEST_CASE("the three HTTP-date forms of RFC 9110") {
  CHECK(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT", kNow) == 784'111'777'000);
  CHECK(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT", kNow) == 784'111'777'000);
  CHECK(parse_http_date("Sun Nov  6 08:49:37 1994", kNow) == 784'111'777'000);
  CHECK(parse_http_date("Thu, 29 Feb 2024 00:00:00 GMT", kNow) == 1'709'164'800'000);
  CHECK(parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT", kNow) == 0);
  // Two-digit years: up to 50 years ahead of now's year (2023) stay ahead; beyond, a century back.
  CHECK(parse_http_date("Tuesday, 14-Nov-73 22:15:20 GMT", kNow) == 3'277'923'320'000);
  CHECK(parse_http_date("Thursday, 14-Nov-74 22:15:20 GMT", kNow) == 153'699'320'000);
}

TEST_CASE("junk Retry-After values are ignored") {
  for (const char* junk : {
           "",
           "  ",
           "-5",
           "+5",
           "1.5",
           "5s",
           "120 seconds",
           "1 20",
           "0x10",
           "Tue, 14 Nov 2023 22:15:20 UTC",      // only GMT
           "Tue, 14 Nov 2023 22:15:20 gmt",      // case-sensitive
           "tue, 14 Nov 2023 22:15:20 GMT",      //
           "Tue, 14 nov 2023 22:15:20 GMT",      //
           "Tue, 14 Nov 2023 22:15:20 GMTx",     // trailing text
           "Tue, 14 Nov 2023 22:15:20",          // no zone
           "Tue, 4 Nov 2023 22:15:20 GMT",       // one-digit day
           "Tue,14 Nov 2023 22:15:20 GMT",       // missing space
           "Tue, 14 Nov 23 22:15:20 GMT",        // two-digit year in IMF-fixdate
           "Tue, 30 Feb 2023 22:15:20 GMT",      // no such day
           "Wed, 29 Feb 2023 00:00:00 GMT",      // not a leap year
           "Tue, 14 Nov 2023 24:00:00 GMT",      // hour 24
           "Tue, 14 Nov 2023 22:60:00 GMT",      // minute 60
           "Tue, 14 Nov 2023 22:15:61 GMT",      // second 61
           "Tue, 14 Nov 2023 22:15 GMT",         // no seconds
           "Sun, 06 Nov 1899 08:49:37 GMT",      // before 1900
           "Tuesday, 14 Nov 2023 22:15:20 GMT",  // long day name in IMF-fixdate
           "Tue, 14-Nov-23 22:15:20 GMT",        // short day name in rfc850-date
           "Tue Nov 14 22:15:20 2023 GMT",       // asctime has no zone
           "Tue Nov 6 22:15:20 2023",            // asctime pads one-digit days with a space
           "2023-11-14T22:15:20Z",               // RFC 3339 is not an HTTP-date
       }) {
    INFO(junk);
    CHECK(parse_retry_after(junk, kNow) == std::nullopt);
  }
}

TEST_CASE("Retry-After bounds are configurable") {
  const RetryAfterBounds wide{0ms, 10min};
  CHECK(parse_retry_after("0", kNow, wide) == 0ms);
  CHECK(parse_retry_after("599", kNow, wide) == 599s);
  CHECK(parse_retry_after("86400", kNow, wide) == 10min);
  CHECK(parse_retry_after("Tue, 14 Nov 2023 22:13:00 GMT", kNow, wide) == 0ms);
  const RetryAfterBounds fixed{5s, 5s};
  CHECK(parse_retry_after("1", kNow, fixed) == 5s);
  CHECK(parse_retry_after("100", kNow, fixed) == 5s);
  CHECK(parse_retry_after("junk", kNow, fixed) == std::nullopt);
  CHECK_THROWS_AS(parse_retry_after("1", kNow, RetryAfterBounds{2s, 1s}), Error);
  CHECK_THROWS_AS(parse_retry_after("1", kNow, RetryAfterBounds{-1ms, 1s}), Error);
}
