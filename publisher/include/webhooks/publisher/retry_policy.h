// When to try a delivery again, and whether to: the retry schedule with jitter, the attempt and age
// limits, and the reading of an attempt's HTTP outcome.
// The decisions are in docs/publisher-delivery.md.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "webhooks/clock.h"
#include "webhooks/random.h"

namespace webhooks::publisher {

// What the worker does with a task after one attempt.
enum class AttemptOutcome {
  succeeded,  // 2xx: the task is `succeeded`.
  retryable,  // try again per the schedule: no response (network error, timeout, refused
              // address), 3xx (redirects are never followed), 408, 425, 429, 5xx, and every other
              // 4xx not configured permanent. Unknown codes (1xx, 600+) count here too.
  permanent,  // a 4xx configured permanent: the task is `dead` now, no further attempt.
  gone,       // 410: the endpoint is disabled (reason "410 Gone"). The task is scheduled as for
              // `retryable`, stays `pending` while the endpoint is disabled, and resumes if it is
              // enabled again; the age limit still applies.
};

// Stable name, e.g. "retryable".
std::string_view to_string(AttemptOutcome outcome) noexcept;

struct OutcomeRules {
  // 4xx statuses that end the task without retry, e.g. {400, 401, 403, 404, 422}. Default: none,
  // every 4xx is retried. 408, 425 and 429 are always retried and 410 always means gone, so listing
  // them, or anything outside 400..499, has no effect.
  std::vector<int> permanent_statuses;
};

// Reads one attempt. `status` is the HTTP status code, or 0 when no response arrived (network
// error, timeout, address refused at connect). Pure; thread-safe.
AttemptOutcome classify_attempt(int status, const OutcomeRules& rules = {});

// The retry schedule: delays[i] is the wait after attempt i+1 failed, so a schedule of n entries
// allows n+1 attempts. Immutable; thread-safe (the RandomSource passed in must be too).
class RetryPolicy {
 public:
  static constexpr std::string_view kDefaultSchedule = "5s,5m,30m,2h,5h,10h,10h";
  static constexpr std::chrono::milliseconds kDefaultMaxAge = std::chrono::hours(72);
  // Half-width of the jitter band as a fraction of the scheduled delay (0.2 = ±20 %).
  static constexpr double kDefaultJitter = 0.2;
  // Longest schedule accepted (entries); 101 attempts.
  static constexpr std::size_t kMaxEntries = 100;

  // kDefaultSchedule, kDefaultMaxAge, kDefaultJitter.
  RetryPolicy();

  // Throws webhooks::Error(ErrorCode::invalid_argument) when `delays` is empty or longer than
  // kMaxEntries, a delay is negative or over 365 days (the duration grammar's kMaxDuration),
  // `max_age` is not positive, or `jitter` is outside [0, 1].
  explicit RetryPolicy(std::vector<std::chrono::milliseconds> delays,
                       std::chrono::milliseconds max_age = kDefaultMaxAge,
                       double jitter = kDefaultJitter);

  // Parses a comma-separated schedule such as "5s,5m,30m,2h,5h,10h,10h" (each entry a whole
  // number and a unit, ms, s, m, h or d; no spaces). Throws Error(invalid_argument) naming the
  // entry at fault, e.g. `retry schedule entry 2 "5x" has unknown unit "x"; use ms, s, m, h or d`,
  // and for an empty schedule or an empty entry ("5s,,5m"). Other arguments as for the constructor.
  static RetryPolicy parse(std::string_view schedule,
                           std::chrono::milliseconds max_age = kDefaultMaxAge,
                           double jitter = kDefaultJitter);

  const std::vector<std::chrono::milliseconds>& delays() const { return delays_; }
  // delays().size() + 1.
  int max_attempts() const { return static_cast<int>(delays_.size()) + 1; }
  std::chrono::milliseconds max_age() const { return max_age_; }
  double jitter() const { return jitter_; }
  // The schedule in parse() form, e.g. "5s,5m,30m,2h,5h,10h,10h".
  std::string schedule_text() const;

  // The delay after attempt `attempt_number` (1-based) failed, before jitter; std::nullopt when
  // that was the last attempt allowed. Throws Error(invalid_argument) when attempt_number < 1.
  std::optional<std::chrono::milliseconds> scheduled_delay(int attempt_number) const;

  // scheduled_delay() with jitter: for a scheduled delay d, d + j·d·(2u − 1) with u drawn from
  // `random` (next_unit, uniform in [0, 1)), i.e. uniform over [d·(1−j), d·(1+j)], rounded to the
  // nearest millisecond and never below 0. Draws exactly one value when it returns a delay, none
  // when it returns std::nullopt.
  std::optional<std::chrono::milliseconds> next_delay(int attempt_number,
                                                      RandomSource& random) const;

  // True when a task created at `created_at` has reached its age limit at `now` (Unix ms):
  // now − created_at >= max_age. An expired task is `dead` and is not attempted again.
  bool expired(UnixMillis created_at, UnixMillis now) const;

  // When the next attempt is due after attempt `attempt_number` failed at `now`, or std::nullopt
  // when the task is `dead`: the attempts are used up, or the due time reaches
  // created_at + max_age. A Retry-After delay (already bounded by retry_after.h) can only push the
  // attempt later: due = now + max(next_delay(...), retry_after). Draws as next_delay().
  std::optional<UnixMillis> next_attempt_at(
      int attempt_number, UnixMillis created_at, UnixMillis now, RandomSource& random,
      std::optional<std::chrono::milliseconds> retry_after = std::nullopt) const;

 private:
  std::vector<std::chrono::milliseconds> delays_;
  std::chrono::milliseconds max_age_;
  double jitter_;
};

}  // namespace webhooks::publisher
