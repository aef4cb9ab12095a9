// The injected clock. Business time (backoff, leases, TTLs, signature timestamps, UUIDv7) always
// comes from a Clock so tests can move it; socket deadlines use std::chrono::steady_clock directly.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace webhooks {

// Wall-clock time as Unix milliseconds (UTC). The unit used for every stored time.
using UnixMillis = std::int64_t;

class Clock {
 public:
  virtual ~Clock() = default;
  // Current Unix time in milliseconds. Thread-safe.
  virtual UnixMillis now_ms() const = 0;
  // Current Unix time in whole seconds (floor), as used by `webhook-timestamp`.
  std::int64_t now_seconds() const { return now_ms() / 1000; }
};

// std::chrono::system_clock. Thread-safe; a process-wide instance is `system_clock()`.
class SystemClock final : public Clock {
 public:
  UnixMillis now_ms() const override;
};

// The process-wide SystemClock.
Clock& system_clock();

// A clock that only moves when told to. Thread-safe.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(UnixMillis start_ms = 1'700'000'000'000) : now_(start_ms) {}
  UnixMillis now_ms() const override { return now_.load(); }
  void set_ms(UnixMillis ms) { now_.store(ms); }
  void advance(std::chrono::milliseconds by) { now_.fetch_add(by.count()); }

 private:
  std::atomic<UnixMillis> now_;
};

}  // namespace webhooks
