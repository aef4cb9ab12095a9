#include "console/overview_snapshot.h"

#include <algorithm>

#include "webhooks/log.h"

namespace webhooks::publisher {

OverviewSnapshot::OverviewSnapshot(Store& store, const Clock& clock,
                                   OverviewSnapshotOptions options)
    : store_(store),
      clock_(clock),
      options_(options),
      task_("overview_refresh_failed", [this] { return recount(); },
            {.after_failure = options_.refresh}) {}

OverviewSnapshot::~OverviewSnapshot() { stop(); }

OverviewSnapshot::Reading OverviewSnapshot::refresh() {
  const auto started = std::chrono::steady_clock::now();
  Reading reading;
  reading.taken_at = clock_.now_ms();
  reading.overview = store_.overview(reading.taken_at);
  const auto took = std::chrono::steady_clock::now() - started;
  std::lock_guard lock(mutex_);
  slow_ = options_.budget.count() == 0 || took > options_.budget;
  last_took_ = std::chrono::duration_cast<std::chrono::milliseconds>(took);
  if (!last_ || last_->taken_at <= reading.taken_at) last_ = reading;
  return reading;
}

OverviewSnapshot::Reading OverviewSnapshot::read() {
  {
    std::lock_guard lock(mutex_);
    if (slow_ && last_) return *last_;
  }
  return refresh();
}

bool OverviewSnapshot::using_snapshot() const {
  std::lock_guard lock(mutex_);
  return slow_;
}

// The first count at once, so the first page never waits for a slow one; then every `refresh`,
// or 10 times the last count's time if longer (the thread at most 10% of a core).
std::chrono::milliseconds OverviewSnapshot::recount() {
  bool count = false;
  {
    std::lock_guard lock(mutex_);
    count = !counted_ || slow_;
    counted_ = true;
  }
  if (count) refresh();
  std::lock_guard lock(mutex_);
  return std::max(options_.refresh, 10 * last_took_);
}

void OverviewSnapshot::start() {
  {
    std::lock_guard lock(mutex_);
    counted_ = false;
  }
  task_.start();
}

void OverviewSnapshot::stop() { task_.stop(); }

}  // namespace webhooks::publisher
