// What every duration flag with a unit (app::duration_text, webhooks/duration.h) answers to a bad
// value, for the flag tests of each executable: the value and CLI11's message after "--flag: ".
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace webhooks::test {

inline const std::vector<std::pair<std::string, std::string>>& bad_durations() {
  static const std::vector<std::pair<std::string, std::string>> cases{
      {"0s", "must be greater than 0, e.g. \"5s\""},
      {"-1",
       "duration \"-1\" does not start with a whole number; expected e.g. \"5s\" or "
       "\"250ms\""},
      {"1e-9", "duration \"1e-9\" has unknown unit \"e-9\"; use ms, s, m, h or d"},
      {"5 s", "duration \"5 s\" has unknown unit \" s\"; use ms, s, m, h or d"},
      {"366d", "duration \"366d\" is longer than the maximum of 365d"}};
  return cases;
}

}  // namespace webhooks::test
