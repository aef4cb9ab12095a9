#include "webhooks/console/throttle.h"

#include "webhooks/error.h"

namespace webhooks::console {

FailureThrottle::FailureThrottle(const Clock& clock, int max_failures, std::chrono::seconds window,
                                 std::size_t capacity)
    : clock_(clock),
      max_failures_(max_failures),
      window_ms_(std::chrono::duration_cast<std::chrono::milliseconds>(window).count()),
      capacity_(capacity) {
  if (max_failures < 1 || window < std::chrono::seconds(1) || capacity == 0) {
    throw Error(ErrorCode::invalid_argument,
                "FailureThrottle: max_failures and window must be positive, capacity non-zero");
  }
}

std::optional<std::chrono::seconds> FailureThrottle::retry_after(std::string_view address) const {
  const UnixMillis now = clock_.now_ms();
  const std::lock_guard lock(mutex_);
  const auto it = entries_.find(std::string(address));
  if (it == entries_.end() || it->second.failures < max_failures_) return std::nullopt;
  const UnixMillis left = it->second.window_start + window_ms_ - now;
  if (left <= 0) return std::nullopt;
  return std::chrono::seconds((left + 999) / 1000);
}

void FailureThrottle::record_failure(std::string_view address) {
  const UnixMillis now = clock_.now_ms();
  const std::lock_guard lock(mutex_);
  auto it = entries_.find(std::string(address));
  if (it != entries_.end() && now < it->second.window_start + window_ms_) {
    ++it->second.failures;
    return;
  }
  if (it != entries_.end()) {  // its window ended: a new one, the newest
    order_.splice(order_.end(), order_, it->second.order);
    it->second.window_start = now;
    it->second.failures = 1;
    return;
  }
  if (entries_.size() >= capacity_) {
    entries_.erase(order_.front());
    order_.pop_front();
  }
  order_.emplace_back(address);
  entries_.emplace(std::string(address), Entry{now, 1, std::prev(order_.end())});
}

std::size_t FailureThrottle::tracked() const {
  const std::lock_guard lock(mutex_);
  return entries_.size();
}

}  // namespace webhooks::console
