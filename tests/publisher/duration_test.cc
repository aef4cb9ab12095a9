#include "webhooks/duration.h"

#include <catch2/catch.hpp>
#include <utility>

#include "support/thrown_code.h"
#include "webhooks/error.h"

using namespace webhooks;
using namespace std::chrono_literals;
using Catch::Matchers::Message;

TEST_CASE("durations parse in every unit") {
  CHECK(parse_duration("250ms") == 250ms);
  CHECK(parse_duration("5s") == 5000ms);
  CHECK(parse_duration("30m") == 1'800'000ms);
  CHECK(parse_duration("2h") == 7'200'000ms);
  CHECK(parse_duration("3d") == 259'200'000ms);
  CHECK(parse_duration("0s") == 0ms);
  CHECK(parse_duration("007s") == 7000ms);
  CHECK(parse_duration("365d") == kMaxDuration);
  CHECK(parse_duration("31536000000ms") == kMaxDuration);
}

TEST_CASE("junk durations are refused with the reason") {
  const std::pair<const char*, const char*> refused[] = {
      {"", "duration is empty; expected a whole number and a unit, e.g. \"5s\""},
      {"5", "duration \"5\" has no unit; use ms, s, m, h or d"},
      {"5x", "duration \"5x\" has unknown unit \"x\"; use ms, s, m, h or d"},
      {"5S", "duration \"5S\" has unknown unit \"S\"; use ms, s, m, h or d"},
      {"5 s", "duration \"5 s\" has unknown unit \" s\"; use ms, s, m, h or d"},
      {"1.5h", "duration \"1.5h\" has unknown unit \".5h\"; use ms, s, m, h or d"},
      {"-5s",
       "duration \"-5s\" does not start with a whole number; expected e.g. "
       "\"5s\" or \"250ms\""},
  };
  for (const auto& [text, message] : refused) {
    INFO(text);
    CHECK_THROWS_MATCHES(parse_duration(text), Error, Message(message));
  }
  CHECK_THROWS_MATCHES(
      parse_duration("s", "max age"), Error,
      Message(
          "max age \"s\" does not start with a whole number; expected e.g. \"5s\" or \"250ms\""));
  CHECK_THROWS_MATCHES(parse_duration("366d"), Error,
                       Message("duration \"366d\" is longer than the maximum of 365d"));
  CHECK_THROWS_MATCHES(parse_duration("99999999999999999999999999h"), Error,
                       Message("duration \"99999999999999999999999999h\" is longer than the "
                               "maximum of 365d"));
  CHECK(webhooks::test::thrown_code([] { parse_duration("x"); }) == ErrorCode::invalid_argument);
}

TEST_CASE("durations format in the largest exact unit") {
  CHECK(format_duration(0ms) == "0s");
  CHECK(format_duration(1500ms) == "1500ms");
  CHECK(format_duration(5000ms) == "5s");
  CHECK(format_duration(300'000ms) == "5m");
  CHECK(format_duration(7'200'000ms) == "2h");
  CHECK(format_duration(259'200'000ms) == "3d");
  CHECK(format_duration(90'000ms) == "90s");
  for (const char* text : {"250ms", "5s", "30m", "10h", "7d"}) {
    CHECK(format_duration(parse_duration(text)) == text);
  }
}
