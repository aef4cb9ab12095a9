#include "webhooks/publisher/retention.h"

#include "webhooks/log.h"
#include "webhooks/rfc3339.h"

namespace webhooks::publisher {

Retention::Retention(Store& store, const Clock& clock, Metrics& metrics, RetentionOptions options)
    : store_(store), clock_(clock), metrics_(metrics), options_(options) {}

Retention::~Retention() { stop(); }

bool Retention::pause(std::chrono::milliseconds delay) {
  std::unique_lock lock(mutex_);
  if (delay.count() > 0) wake_.wait_for(lock, delay, [this] { return stopping_; });
  return !stopping_;
}

Retention::Pass Retention::run_once() {
  Pass pass;
  if (options_.max_age.count() <= 0) return pass;
  const UnixMillis before = clock_.now_ms() - options_.max_age.count();
  for (;;) {
    const PurgeCounts batch = store_.purge(before, options_.batch);
    if (batch.events + batch.tasks + batch.attempts + batch.audit > 0) {
      ++pass.batches;
      pass.purged += batch;
      metrics_.purged(batch);
    }
    if ((batch.events < options_.batch && batch.audit < options_.batch) || !pause(options_.pause)) {
      break;
    }
  }
  if (pass.batches > 0) {
    log_event(spdlog::level::info, {{"event", "retention_purged"},
                                    {"events", pass.purged.events},
                                    {"tasks", pass.purged.tasks},
                                    {"attempts", pass.purged.attempts},
                                    {"audit", pass.purged.audit},
                                    {"batches", pass.batches},
                                    {"before", format_rfc3339(before)}});
  }
  return pass;
}

void Retention::start() {
  if (options_.max_age.count() <= 0 || thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = false;
  }
  thread_ = std::thread([this] {
    while (pause(options_.interval)) {
      try {
        run_once();
      } catch (const std::exception& e) {
        log_event(spdlog::level::err, {{"event", "retention_failed"}, {"error", e.what()}});
      }
    }
  });
}

void Retention::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace webhooks::publisher
