// Failed-authentication throttling per client address (docs/security.md, "Throttling"): after
// `max_failures` failures of one address in a window that starts at its first failure, every
// authentication attempt of that address (the right token too) is refused until the window ends,
// with the seconds left for `Retry-After` (RFC 9110 section 10.2.3, delay-seconds).
//
//   FailureThrottle throttle(clock);                     // 10 failures a minute
//   if (auto wait = throttle.retry_after(address)) ... answer 429, Retry-After: wait->count()
//   if (!right) throttle.record_failure(address);
//
// Memory is bounded: at most `capacity` addresses are tracked; a new one beyond that evicts the
// address whose window started first. In memory, per process. Thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "webhooks/clock.h"

namespace webhooks::console {

// Failures of one address that start its refusals.
inline constexpr int kMaxFailures = 10;
// The window those failures are counted in, from the first of them.
inline constexpr std::chrono::seconds kFailureWindow = std::chrono::minutes(1);
// How many addresses are tracked at most.
inline constexpr std::size_t kThrottleCapacity = 10'000;

class FailureThrottle {
 public:
  // `clock` must outlive the throttle. Throws Error(invalid_argument) when `max_failures` < 1,
  // `window` < 1 s or `capacity` is 0.
  explicit FailureThrottle(const Clock& clock, int max_failures = kMaxFailures,
                           std::chrono::seconds window = kFailureWindow,
                           std::size_t capacity = kThrottleCapacity);

  // Whole seconds (>= 1, rounded up) until `address` may authenticate again, or std::nullopt when
  // it may now.
  std::optional<std::chrono::seconds> retry_after(std::string_view address) const;
  // Counts a failed authentication of `address` (the first after a window ended starts a new one).
  void record_failure(std::string_view address);
  // How many addresses are tracked now (<= capacity).
  std::size_t tracked() const;

 private:
  struct Entry {
    UnixMillis window_start;
    int failures;
    std::list<std::string>::iterator order;  // its place in order_
  };

  const Clock& clock_;
  int max_failures_;
  UnixMillis window_ms_;
  std::size_t capacity_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Entry> entries_;
  std::list<std::string> order_;  // addresses, oldest window start first
};

}  // namespace webhooks::console
