// Durations written as text, as in `--retry-schedule 5s,5m,30m`, `--max-age 3d` and every duration
// flag of every executable (`--lease 30s`, `--request-timeout 30s`; app/flags.h).
// Grammar (case-sensitive, no spaces, no signs, no fractions):
//   duration = 1*DIGIT unit
//   unit     = "ms" / "s" / "m" / "h" / "d"     ; milliseconds, seconds, minutes, hours, days
// A day is 86,400 s (no calendar arithmetic).
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace webhooks {

// The longest duration `parse_duration` accepts: 365 days. Longer values are surely mistakes, and
// the bound keeps every later sum of delays far from overflowing std::int64_t milliseconds.
inline constexpr std::chrono::milliseconds kMaxDuration = std::chrono::hours(24 * 365);

// Parses "250ms", "5s", "30m", "2h", "3d". Throws webhooks::Error(ErrorCode::invalid_argument)
// whose message quotes the text and says what is wrong: empty, no leading whole number, no unit,
// an unknown unit, or longer than kMaxDuration. `what` names the value in messages, e.g.
// "max age" gives `max age "3x" has unknown unit "x"; use ms, s, m, h or d`.
std::chrono::milliseconds parse_duration(std::string_view text, std::string_view what = "duration");

// The inverse: the largest unit that divides the value exactly, e.g. 300000 ms -> "5m",
// 1500 ms -> "1500ms", 0 -> "0s". REQUIRES: value >= 0.
std::string format_duration(std::chrono::milliseconds value);

}  // namespace webhooks
