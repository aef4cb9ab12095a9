// Retention: deletes delivered history older than Options::retention (docs/operations.md,
// "Retention"): events whose tasks are all finished (succeeded or dead), with their tasks and
// attempts, in batches of `batch` events, one short transaction each, `pause` of real time
// between batches, so claims and records wait at most one batch. A pending or delivering task is
// never deleted, nor its event. Entries of the audit log (audit_log.h) older than the same age go
// in the same transactions. Each pass that deleted something logs one line
//   {"event":"retention_purged","events":N,"tasks":N,"attempts":N,"audit":N,"batches":N,
//    "before":RFC 3339}
// and adds its counts to Metrics (webhooks_retention_purged_total).
//
//   Retention retention(store, clock, metrics, {std::chrono::hours(24 * 30)});
//   retention.run_once();   // one pass now (tests); start() runs one every `interval`
#pragma once

#include <chrono>

#include "ops/metrics.h"
#include "webhooks/clock.h"
#include "webhooks/periodic_task.h"
#include "webhooks/publisher/store.h"

namespace webhooks::publisher {

struct RetentionOptions {
  // Events created longer ago than this are purged once finished; 0: nothing is ever purged.
  // Default 30 days.
  std::chrono::milliseconds max_age{std::chrono::hours(24 * 30)};
  // Events per transaction (with their tasks and attempts, about 3.3 rows each). 500 take a
  // median 12 ms on SQLite, 17 ms on PostgreSQL (bench_publisher_disk). Default 500.
  int batch = 500;
  // Real time between two batches of one pass, which lets delivery's transactions in. Default
  // 100 ms.
  std::chrono::milliseconds pause{std::chrono::milliseconds(100)};
  // Real time between passes. Default 60 s.
  std::chrono::milliseconds interval{std::chrono::seconds(60)};
};

class Retention {
 public:
  // All references must outlive the Retention. Starts no thread.
  Retention(Store& store, const Clock& clock, Metrics& metrics, RetentionOptions options);
  ~Retention();  // stop()
  Retention(const Retention&) = delete;
  Retention& operator=(const Retention&) = delete;

  struct Pass {
    PurgeCounts purged;
    int batches = 0;  // transactions that deleted something
  };
  // One pass with `now` from the clock: batches until one deletes fewer than `batch` events (or
  // stop() is called). Throws Error(storage) (what earlier batches deleted stays deleted).
  Pass run_once();

  // Starts the thread: a pass every `interval` (the first one interval after start); a failed
  // pass is logged (retention_failed) and tried again at the next. Does nothing when max_age is 0.
  void start();
  // Ends the pass in progress after its current batch and joins the thread. Idempotent.
  void stop();

 private:
  Store& store_;
  const Clock& clock_;
  Metrics& metrics_;
  RetentionOptions options_;
  PeriodicTask task_;  // run_once every interval; its pause() between batches
};

}  // namespace webhooks::publisher
