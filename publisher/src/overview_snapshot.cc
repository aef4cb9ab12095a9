#include "webhooks/publisher/overview_snapshot.h"

#include <algorithm>

#include "webhooks/log.h"

namespace webhooks::publisher {

OverviewSnapshot::OverviewSnapshot(Store& store, const Clock& clock,
                                   OverviewSnapshotOptions options)
    : store_(store), clock_(clock), options_(options) {}

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

void OverviewSnapshot::start() {
  if (thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = false;
  }
  // The first count at once, so the first page never waits for a slow one; then every
  // `refresh`, or 10 times the last count's time if longer (the thread at most 10% of a core).
  thread_ = std::thread([this] {
    for (bool first = true;; first = false) {
      {
        std::unique_lock lock(mutex_);
        const auto wait =
            first ? std::chrono::milliseconds(0) : std::max(options_.refresh, 10 * last_took_);
        wake_.wait_for(lock, wait, [this] { return stopping_; });
        if (stopping_) return;
        if (!first && !slow_) continue;
      }
      try {
        refresh();
      } catch (const std::exception& e) {
        log_event(spdlog::level::err, {{"event", "overview_refresh_failed"}, {"error", e.what()}});
      }
    }
  });
}

void OverviewSnapshot::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace webhooks::publisher
