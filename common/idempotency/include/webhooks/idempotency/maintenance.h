// Background jobs that run inside every server that uses the idempotency core: the sweeper
// (in_progress records whose lease lapsed become failed) and the purge (records past expires_at
// are deleted). Each run's counts are logged through spdlog as one JSON line.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "webhooks/clock.h"
#include "webhooks/idempotency/store.h"

namespace webhooks::idempotency {

class Maintenance {
 public:
  // Runs sweep and purge every `interval` of real time (default 10 s), with `now` from `clock`.
  // Database errors are logged and retried at the next interval, never thrown.
  Maintenance(Store& store, const Clock& clock,
              std::chrono::milliseconds interval = std::chrono::seconds(10));
  ~Maintenance();  // stops the thread
  Maintenance(const Maintenance&) = delete;
  Maintenance& operator=(const Maintenance&) = delete;

  struct Counts {
    int swept = 0;   // leases lapsed: in_progress -> failed
    int purged = 0;  // expired records deleted
  };
  // One run, now (what the thread does each interval).
  Counts run_once();

 private:
  void run();

  Store& store_;
  const Clock& clock_;
  std::chrono::milliseconds interval_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace webhooks::idempotency
