#include "webhooks/publisher/retry_policy.h"

#include <algorithm>
#include <cmath>

#include "webhooks/duration.h"
#include "webhooks/enum_names.h"
#include "webhooks/error.h"

namespace webhooks::publisher {

using std::chrono::milliseconds;

constexpr EnumNames<AttemptOutcome, 4> kOutcomeNames{
    {"succeeded", "retryable", "permanent", "gone"}, "unknown"};
std::string_view to_string(AttemptOutcome outcome) noexcept { return kOutcomeNames.name(outcome); }

AttemptOutcome classify_attempt(int status, const OutcomeRules& rules) {
  if (status >= 200 && status <= 299) return AttemptOutcome::succeeded;
  if (status == 410) return AttemptOutcome::gone;
  if (status == 408 || status == 425 || status == 429) return AttemptOutcome::retryable;
  if (status >= 400 && status <= 499 &&
      std::find(rules.permanent_statuses.begin(), rules.permanent_statuses.end(), status) !=
          rules.permanent_statuses.end()) {
    return AttemptOutcome::permanent;
  }
  return AttemptOutcome::retryable;
}

RetryPolicy::RetryPolicy() : RetryPolicy(parse(kDefaultSchedule)) {}

RetryPolicy::RetryPolicy(std::vector<milliseconds> delays, milliseconds max_age, double jitter)
    : delays_(std::move(delays)), max_age_(max_age), jitter_(jitter) {
  if (delays_.empty()) {
    throw Error(ErrorCode::invalid_argument, "retry schedule needs at least one delay");
  }
  if (delays_.size() > kMaxEntries) {
    throw Error(ErrorCode::invalid_argument,
                "retry schedule has " + std::to_string(delays_.size()) + " entries; at most " +
                    std::to_string(kMaxEntries) + " are allowed");
  }
  for (milliseconds d : delays_) {
    if (d.count() < 0 || d > kMaxDuration) {
      throw Error(ErrorCode::invalid_argument,
                  "retry delay of " + std::to_string(d.count()) + " ms is outside 0ms..365d");
    }
  }
  if (max_age_.count() <= 0) {
    throw Error(ErrorCode::invalid_argument, "max age must be positive");
  }
  if (!(jitter_ >= 0.0 && jitter_ <= 1.0)) {
    throw Error(ErrorCode::invalid_argument, "jitter must be a fraction between 0 and 1");
  }
}

RetryPolicy RetryPolicy::parse(std::string_view schedule, milliseconds max_age, double jitter) {
  if (schedule.empty()) {
    throw Error(ErrorCode::invalid_argument,
                "retry schedule is empty; expected comma-separated delays such as \"5s,5m,30m\"");
  }
  std::vector<milliseconds> delays;
  std::size_t start = 0;
  for (int entry = 1;; ++entry) {
    const std::size_t comma = schedule.find(',', start);
    const std::string_view text = schedule.substr(start, comma - start);
    delays.push_back(parse_duration(text, "retry schedule entry " + std::to_string(entry)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return RetryPolicy(std::move(delays), max_age, jitter);
}

std::string RetryPolicy::schedule_text() const {
  std::string text;
  for (milliseconds d : delays_) {
    if (!text.empty()) text += ',';
    text += format_duration(d);
  }
  return text;
}

std::optional<milliseconds> RetryPolicy::scheduled_delay(int attempt_number) const {
  if (attempt_number < 1) {
    throw Error(ErrorCode::invalid_argument, "attempt numbers start at 1");
  }
  if (attempt_number >= max_attempts()) return std::nullopt;
  return delays_[static_cast<std::size_t>(attempt_number - 1)];
}

std::optional<milliseconds> RetryPolicy::next_delay(int attempt_number,
                                                    RandomSource& random) const {
  const auto scheduled = scheduled_delay(attempt_number);
  if (!scheduled) return std::nullopt;
  const double u = random.next_unit();
  const double d = static_cast<double>(scheduled->count());
  const double offset = d * jitter_ * (2.0 * u - 1.0);
  const auto jittered = scheduled->count() + std::llround(offset);
  return milliseconds(std::max<std::int64_t>(0, jittered));
}

bool RetryPolicy::expired(UnixMillis created_at, UnixMillis now) const {
  return now - created_at >= max_age_.count();
}

std::optional<UnixMillis> RetryPolicy::next_attempt_at(
    int attempt_number, UnixMillis created_at, UnixMillis now, RandomSource& random,
    std::optional<milliseconds> retry_after) const {
  auto delay = next_delay(attempt_number, random);
  if (!delay) return std::nullopt;
  if (retry_after && *retry_after > *delay) delay = std::min(*retry_after, kMaxDuration);
  const UnixMillis due = now + delay->count();
  if (expired(created_at, due)) return std::nullopt;
  return due;
}

}  // namespace webhooks::publisher
