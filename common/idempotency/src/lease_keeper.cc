#include "webhooks/idempotency/lease_keeper.h"

#include <algorithm>

#include "webhooks/log.h"

namespace webhooks::idempotency {

LeaseKeeper::LeaseKeeper(Store& store, const Clock& clock, std::chrono::milliseconds interval)
    : store_(store),
      clock_(clock),
      interval_(std::max(std::chrono::milliseconds(1),
                         interval.count() > 0 ? interval : store.settings().lease / 3)),
      task_("lease_renewal_failed",
            [this] {
              renew_all();
              return interval_;
            },
            {.first_wait = interval_}) {
  task_.start();
}

LeaseKeeper::~LeaseKeeper() { task_.stop(); }

LeaseKeeper::Hold LeaseKeeper::hold(const Lease& lease) {
  std::lock_guard lock(mutex_);
  const std::uint64_t id = next_id_++;
  held_.emplace(id, lease);
  return Hold(this, id);
}

LeaseKeeper::Hold::~Hold() {
  if (!keeper_) return;
  std::lock_guard lock(keeper_->mutex_);
  keeper_->held_.erase(id_);
}

int LeaseKeeper::renew_all() {
  std::vector<std::pair<std::uint64_t, Lease>> leases;
  {
    std::lock_guard lock(mutex_);
    leases.assign(held_.begin(), held_.end());
  }
  int renewed = 0;
  for (const auto& [id, lease] : leases) {
    try {
      if (store_.renew(lease, clock_.now_ms())) {
        ++renewed;
        continue;
      }
      std::lock_guard lock(mutex_);
      if (held_.count(id) == 0) continue;  // released (settled) meanwhile: nothing was lost
      log_event(spdlog::level::warn,
                {{"event", "lease_lost"}, {"scope", lease.scope}, {"key", lease.key}});
    } catch (const std::exception& e) {
      log_event(spdlog::level::err,
                {{"event", "lease_renew_failed"}, {"scope", lease.scope}, {"error", e.what()}});
    }
  }
  return renewed;
}

}  // namespace webhooks::idempotency
