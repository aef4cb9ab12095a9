#include "webhooks/idempotency/maintenance.h"

#include "webhooks/log.h"

namespace webhooks::idempotency {

Maintenance::Maintenance(Store& store, const Clock& clock, std::chrono::milliseconds interval)
    : store_(store), clock_(clock), interval_(interval) {
  thread_ = std::thread([this] { run(); });
}

Maintenance::~Maintenance() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
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
  return counts;
}

void Maintenance::run() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, interval_, [this] { return stopping_; });
    if (stopping_) break;
    lock.unlock();
    try {
      run_once();
    } catch (const std::exception& e) {
      log_event(spdlog::level::err,
                {{"event", "idempotency_maintenance_failed"}, {"error", e.what()}});
    }
    lock.lock();
  }
}

}  // namespace webhooks::idempotency
