#include "webhooks/idempotency/service.h"

#include <utility>

namespace webhooks::idempotency {

Service::Service(std::shared_ptr<db::Database> db, const Clock& clock, ServiceOptions options)
    : clock_(clock),
      store_(std::move(db), options.settings),
      keeper_(store_, clock),
      guard_(store_, keeper_, clock, options.guard) {
  if (options.maintenance_interval.count() > 0) start_maintenance(options.maintenance_interval);
}

Service::~Service() { stop_maintenance(); }

void Service::start_maintenance(std::chrono::milliseconds interval) {
  maintenance_.reset();
  maintenance_ = std::make_unique<Maintenance>(store_, clock_, interval);
}

void Service::stop_maintenance() { maintenance_.reset(); }

}  // namespace webhooks::idempotency
