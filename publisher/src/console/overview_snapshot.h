// The overview the console and GET /v1/overview show, kept cheap under a big queue
// (docs/console.md, "The overview under load").
//
// Store::overview counts the queue and the last hour's tasks: about 1 ms with a small queue, but
// linear in what it counts (150 ms with 140,000 pending tasks and 360,000 events in the last
// hour, bench_console_pages). So the overview is computed per request only while that is cheap:
// once a computation took longer than `budget`, requests are answered from the last snapshot, and
// a thread takes a new one every `refresh`. When computations become cheap again, requests compute
// their own again. A page thus never counts a big queue, and always says how old its figures are.
//
//   OverviewSnapshot overview(store, clock, {});
//   overview.start();                          // the refresh thread (Publisher::start does it)
//   OverviewSnapshot::Reading r = overview.read();   // r.overview, r.taken_at
#pragma once

#include <chrono>
#include <mutex>
#include <optional>

#include "webhooks/clock.h"
#include "webhooks/periodic_task.h"
#include "webhooks/publisher/store.h"

namespace webhooks::publisher {

struct OverviewSnapshotOptions {
  // A computation that took longer than this (real, steady time) switches requests to the
  // snapshot; 0: always the snapshot (the first request computes it). Default 20 ms.
  std::chrono::milliseconds budget{20};
  // How often the thread takes a new snapshot while requests use it (real time), so a page's
  // figures are at most this old. Default 5 s.
  std::chrono::milliseconds refresh{std::chrono::seconds(5)};
};

class OverviewSnapshot {
 public:
  // `store` and `clock` must outlive it. Starts no thread.
  OverviewSnapshot(Store& store, const Clock& clock, OverviewSnapshotOptions options);
  ~OverviewSnapshot();  // stop()
  OverviewSnapshot(const OverviewSnapshot&) = delete;
  OverviewSnapshot& operator=(const OverviewSnapshot&) = delete;

  struct Reading {
    Overview overview;
    UnixMillis taken_at = 0;  // the clock's time the figures were read at (Unix ms)
  };
  // The overview: computed now (taken_at = now) while computations are cheap, else the last
  // snapshot. Throws Error(storage) when it has to compute and the database fails. Thread-safe.
  Reading read();
  // Computes the overview now and keeps it as the snapshot. Throws Error(storage). Thread-safe.
  Reading refresh();
  // True while requests are answered from the snapshot (the last computation was over budget).
  bool using_snapshot() const;

  // Starts the thread: a count at once, then a new snapshot every `refresh` (or every 10 times
  // the last count's time, if longer) while using_snapshot(); a failed one is logged
  // (overview_refresh_failed) and tried again at the next. stop() joins it; idempotent.
  void start();
  void stop();

 private:
  Store& store_;
  const Clock& clock_;
  OverviewSnapshotOptions options_;
  // The thread's step: a count while using_snapshot() (or the first time); the wait until the
  // next.
  std::chrono::milliseconds recount();

  mutable std::mutex mutex_;
  std::optional<Reading> last_;
  bool slow_ = false;
  bool counted_ = false;                    // by the thread since start()
  std::chrono::milliseconds last_took_{0};  // the last count's real time
  PeriodicTask task_;                       // recount()
};

}  // namespace webhooks::publisher
