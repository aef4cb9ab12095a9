// The heartbeat: renews the leases of running operations so that a slow but live operation is
// never taken over, while a crashed one becomes retryable one lease after its last heartbeat.
#pragma once

#include <chrono>
#include <map>
#include <mutex>

#include "webhooks/clock.h"
#include "webhooks/idempotency/store.h"
#include "webhooks/periodic_task.h"

namespace webhooks::idempotency {

class LeaseKeeper {
 public:
  // Renews every held lease each `interval` of real time (default: a third of the store's lease).
  // Lease times come from `clock`. Starts its thread at once.
  explicit LeaseKeeper(Store& store, const Clock& clock,
                       std::chrono::milliseconds interval = std::chrono::milliseconds(0));
  ~LeaseKeeper();  // stops the thread; held leases are no longer renewed
  LeaseKeeper(const LeaseKeeper&) = delete;
  LeaseKeeper& operator=(const LeaseKeeper&) = delete;

  // Keeps `lease` renewed while the returned object lives. Thread-safe.
  class Hold {
   public:
    Hold(Hold&& other) noexcept : keeper_(other.keeper_), id_(other.id_) {
      other.keeper_ = nullptr;
    }
    Hold(const Hold&) = delete;
    ~Hold();

   private:
    friend class LeaseKeeper;
    Hold(LeaseKeeper* keeper, std::uint64_t id) : keeper_(keeper), id_(id) {}
    LeaseKeeper* keeper_;
    std::uint64_t id_;
  };
  Hold hold(const Lease& lease);

  // Renews every held lease now (what the thread does each interval). Returns how many renewed.
  int renew_all();

 private:
  Store& store_;
  const Clock& clock_;
  std::chrono::milliseconds interval_;
  std::mutex mutex_;  // held_, next_id_
  std::map<std::uint64_t, Lease> held_;
  std::uint64_t next_id_ = 1;
  PeriodicTask task_;  // renew_all every interval_
};

}  // namespace webhooks::idempotency
