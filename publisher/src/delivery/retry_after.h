// The `Retry-After` response header: how long an endpoint asks us to wait.
// Source: RFC 9110, section 10.2.3 (Retry-After = HTTP-date / delay-seconds) and section 5.6.7
// (HTTP-date: IMF-fixdate, and the obsolete rfc850-date and asctime-date that recipients must
// accept): honoured within bounds, junk in it ignored (docs/publisher-delivery.md, "Retry-After").
// How the worker combines it with the schedule: RetryPolicy::next_attempt_at.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

#include "webhooks/clock.h"

namespace webhooks::publisher {

struct RetryAfterBounds {
  // Shortest wait honoured. A date in the past, or "0", means "now", which becomes this.
  std::chrono::milliseconds min{std::chrono::seconds(1)};
  // Longest wait honoured, so an endpoint cannot park its deliveries for days: a longer request is
  // cut to this (the regular schedule may still wait longer; see RetryPolicy::next_attempt_at).
  std::chrono::milliseconds max{std::chrono::hours(1)};
};

// The delay a Retry-After value asks for, relative to `now` (Unix milliseconds), clamped to
// [bounds.min, bounds.max]; std::nullopt when the value is junk, so the caller ignores it.
//
// Accepted, with optional spaces or tabs around the value:
//   delay-seconds  1*DIGIT, e.g. "120" -> 120 s. Any number of digits (a huge one clamps to max).
//   IMF-fixdate    "Sun, 06 Nov 1994 08:49:37 GMT"   -> date − now
//   rfc850-date    "Sunday, 06-Nov-94 08:49:37 GMT"  two-digit years are read as the year with
//                  those last digits nearest below now + 50 years (RFC 9110, section 5.6.7)
//   asctime-date   "Sun Nov  6 08:49:37 1994"
// Names of days and months and "GMT" are case-sensitive, as in the RFC. The day name must be a
// valid name in the right form (short or long) but is not checked against the date. Second 60
// (a leap second) is accepted and counts as the next second. Junk: empty, signs, fractions,
// trailing text, impossible dates (30 Feb), years before 1900 in any form.
//
// Throws webhooks::Error(ErrorCode::invalid_argument) when bounds.min is negative or greater than
// bounds.max (never for a bad header). Pure; thread-safe.
std::optional<std::chrono::milliseconds> parse_retry_after(std::string_view value, UnixMillis now,
                                                           const RetryAfterBounds& bounds = {});

// The HTTP-date alone, as Unix milliseconds (a whole second); std::nullopt when it is not one of
// the three forms above. `now` only resolves rfc850-date's two-digit year.
std::optional<UnixMillis> parse_http_date(std::string_view text, UnixMillis now);

}  // namespace webhooks::publisher
