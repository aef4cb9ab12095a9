// The idempotency core's parts built in one place, for each of its users in this tree
// (webhooks-publisherd's ingest, orders-api's POST /orders and /payouts, the webhook receiver):
// the record store, the lease keeper, the guard with its group commit and replay cache, and the
// maintenance loop (lapsed leases swept, expired records purged, counted duplicates flushed).
// docs/idempotency.md.
//
//   Service idempotency(db, clock, {.settings = {30s, 24h}});
//   idempotency::handle(idempotency.guard(), req, res, scope, operation);   // http.h
#pragma once

#include <chrono>
#include <memory>

#include "webhooks/clock.h"
#include "webhooks/db.h"
#include "webhooks/idempotency/guard.h"
#include "webhooks/idempotency/lease_keeper.h"
#include "webhooks/idempotency/maintenance.h"
#include "webhooks/idempotency/store.h"

namespace webhooks::idempotency {

struct ServiceOptions {
  Settings settings;   // a record's lease and TTL
  GuardOptions guard;  // the guard's key rule, group commit and replay cache
  // How often the maintenance loop sweeps and purges (milliseconds of real time); 0: no loop
  // until start_maintenance().
  std::chrono::milliseconds maintenance_interval{std::chrono::seconds(10)};
};

class Service {
 public:
  // `db` must be migrated with the idempotency component (schema.h); `clock` must outlive the
  // Service. Starts the maintenance loop when options.maintenance_interval is over 0. Throws
  // nothing of its own.
  Service(std::shared_ptr<db::Database> db, const Clock& clock, ServiceOptions options);
  ~Service();  // stops the maintenance loop first
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;

  Store& store() { return store_; }
  LeaseKeeper& keeper() { return keeper_; }
  Guard& guard() { return guard_; }
  // The guard's group commit: one transaction for a group of callers' records and rows.
  GroupCommit& group() { return guard_.group(); }

  // Starts the maintenance loop every `interval` (replacing a running one); stops it. For a
  // server that runs maintenance only while it runs (webhooks-publisherd).
  void start_maintenance(std::chrono::milliseconds interval);
  void stop_maintenance();

 private:
  const Clock& clock_;
  Store store_;
  LeaseKeeper keeper_;
  Guard guard_;
  std::unique_ptr<Maintenance> maintenance_;
};

}  // namespace webhooks::idempotency
