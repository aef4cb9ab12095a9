// Background jobs that run inside every server that uses the idempotency core: the sweeper
// (in_progress records whose lease lapsed become failed), the purge (records past expires_at
// are deleted) and the flush of the counted replays, 409s and 422s (Store::flush_counts). Each
// run's sweep and purge counts are logged through spdlog as one JSON line.
#pragma once

#include <chrono>

#include "webhooks/clock.h"
#include "webhooks/idempotency/store.h"
#include "webhooks/periodic_task.h"

namespace webhooks::idempotency {

class Maintenance {
 public:
  // Runs sweep and purge every `interval` of real time (default 10 s), with `now` from `clock`,
  // and flushes the store's counts every `counts_interval` (default 1 s: how long a counter may
  // lag). Database errors are logged and retried at the next interval, never thrown.
  Maintenance(Store& store, const Clock& clock,
              std::chrono::milliseconds interval = std::chrono::seconds(10),
              std::chrono::milliseconds counts_interval = std::chrono::seconds(1));
  ~Maintenance();  // stops the thread, then flushes the counts once more
  Maintenance(const Maintenance&) = delete;
  Maintenance& operator=(const Maintenance&) = delete;

  struct Counts {
    int swept = 0;    // leases lapsed: in_progress -> failed
    int purged = 0;   // expired records deleted
    int flushed = 0;  // keys whose counts were written
  };
  // One run, now: sweep, purge and flush (what the thread does each interval).
  Counts run_once();

 private:
  // The thread's step, every tick: run_once when the interval is up, else flush the counts.
  std::chrono::milliseconds tick();

  Store& store_;
  const Clock& clock_;
  std::chrono::milliseconds interval_;
  std::chrono::milliseconds counts_interval_;
  std::chrono::steady_clock::time_point next_run_;  // the thread's only
  PeriodicTask task_;                               // tick()
};

}  // namespace webhooks::idempotency
