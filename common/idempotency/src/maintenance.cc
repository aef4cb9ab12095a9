#include "webhooks/idempotency/maintenance.h"

#include <algorithm>

#include "webhooks/log.h"

namespace webhooks::idempotency {
namespace {

// Flushes the counts; a failure is logged (the counts stay for the next flush).
int flush_logged(Store& store) {
  try {
    return store.flush_counts();
  } catch (const std::exception& e) {
    log_event(spdlog::level::err,
              {{"event", "idempotency_counts_flush_failed"}, {"error", e.what()}});
    return 0;
  }
}

}  // namespace

Maintenance::Maintenance(Store& store, const Clock& clock, std::chrono::milliseconds interval,
                         std::chrono::milliseconds counts_interval)
    : store_(store), clock_(clock), interval_(interval), counts_interval_(counts_interval) {
  thread_ = std::thread([this] { run(); });
}

Maintenance::~Maintenance() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  flush_logged(store_);  // a clean stop loses no count
}

Maintenance::Counts Maintenance::run_once() {
  Counts counts;
  counts.swept = store_.sweep(clock_.now_ms());
  counts.purged = store_.purge(clock_.now_ms());
  if (counts.swept > 0 || counts.purged > 0) {
    log_event(
        spdlog::level::info,
        {{"event", "idempotency_maintenance"}, {"swept", counts.swept}, {"purged", counts.purged}});
  }
  counts.flushed = store_.flush_counts();
  return counts;
}

void Maintenance::run() {
  using std::chrono::steady_clock;
  const auto tick = std::max(std::chrono::milliseconds(1), std::min(interval_, counts_interval_));
  auto next_run = steady_clock::now() + interval_;
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, tick, [this] { return stopping_; });
    if (stopping_) break;
    lock.unlock();
    if (steady_clock::now() < next_run) {
      flush_logged(store_);
    } else {
      next_run = steady_clock::now() + interval_;
      try {
        run_once();
      } catch (const std::exception& e) {
        log_event(spdlog::level::err,
                  {{"event", "idempotency_maintenance_failed"}, {"error", e.what()}});
      }
    }
    lock.lock();
  }
}

}  // namespace webhooks::idempotency
