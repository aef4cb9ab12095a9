#include "ops/retention.h"

#include "webhooks/log.h"
#include "webhooks/rfc3339.h"

namespace webhooks::publisher {

Retention::Retention(Store& store, const Clock& clock, Metrics& metrics, RetentionOptions options)
    : store_(store),
      clock_(clock),
      metrics_(metrics),
      options_(options),
      task_("retention_failed",
            [this] {
              run_once();
              return options_.interval;
            },
            {.first_wait = options_.interval}) {}

Retention::~Retention() { stop(); }

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
    if ((batch.events < options_.batch && batch.audit < options_.batch) ||
        !task_.pause(options_.pause)) {
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
  if (options_.max_age.count() > 0) task_.start();
}

void Retention::stop() { task_.stop(); }

}  // namespace webhooks::publisher
