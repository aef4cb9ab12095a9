#include "webhooks/idempotency/lease_keeper.h"

#include "webhooks/log.h"

namespace webhooks::idempotency {

LeaseKeeper::LeaseKeeper(Store& store, const Clock& clock, std::chrono::milliseconds interval)
    : store_(store),
      clock_(clock),
      interval_(interval.count() > 0 ? interval : store.settings().lease / 3) {
  if (interval_.count() < 1) interval_ = std::chrono::milliseconds(1);
  thread_ = std::thread([this] { run(); });
}

LeaseKeeper::~LeaseKeeper() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

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

void LeaseKeeper::run() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, interval_, [this] { return stopping_; });
    if (stopping_) break;
    lock.unlock();
    renew_all();
    lock.lock();
  }
}

}  // namespace webhooks::idempotency
