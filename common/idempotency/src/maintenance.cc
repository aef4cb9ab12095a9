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
    : store_(store),
      clock_(clock),
      interval_(interval),
      counts_interval_(counts_interval),
      next_run_(std::chrono::steady_clock::now() + interval),
      task_("idempotency_maintenance_failed", [this] { return tick(); },
            {.first_wait =
                 std::max(std::chrono::milliseconds(1), std::min(interval, counts_interval))}) {
  task_.start();
}

Maintenance::~Maintenance() {
  task_.stop();
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

std::chrono::milliseconds Maintenance::tick() {
  using std::chrono::steady_clock;
  const auto wait = std::max(std::chrono::milliseconds(1), std::min(interval_, counts_interval_));
  if (steady_clock::now() < next_run_) {
    flush_logged(store_);
    return wait;
  }
  next_run_ = steady_clock::now() + interval_;
  run_once();  // a failure is logged by the task (idempotency_maintenance_failed)
  return wait;
}

}  // namespace webhooks::idempotency
