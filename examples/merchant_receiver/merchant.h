// The example merchant's business logic: it handles events in transactional mode, one row per
// event in merchant_events, committed with the dedup record in one grouped commit. The row holds
// the effect of an order.* or payout.* event (its body; NULL for other types) and how many calls
// the event took (the attempt that committed: failed attempts are counted by the dedup record; a
// call cut short by a crash leaves nothing, as its effect does). No commit of its own.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "webhooks/db.h"
#include "webhooks/receiver/receiver.h"

namespace merchant {

struct Faults {
  // Fail the first call of an event when fnv1a(event_id) % 100 < this (0: never).
  int fail_first_attempts_percent = 0;
  // SIGKILL this process inside the handler of the Nth new event (0: never).
  int crash_on_event = 0;
};

// Creates the merchant's table when absent; moves an earlier version's two tables
// (merchant_calls, merchant_effects) into it.
void create_tables(webhooks::db::Database& db);

// Deterministic per event: true when the first call of `event_id` is to fail.
bool fails_first_attempt(std::string_view event_id, int percent);

class Merchant {
 public:
  Merchant(webhooks::db::Database& db, Faults faults) : db_(db), faults_(faults) {}

  // The handler, in the receiver's transaction.
  webhooks::receiver::Reply handle(const webhooks::receiver::Event& event,
                                   webhooks::db::Transaction& tx);
  // {"events":[{"event_id","type","calls","effects"}]}, ordered by event_id: the events handled.
  std::string handled_json();

 private:
  webhooks::db::Database& db_;
  Faults faults_;
  std::atomic<int> new_events_{0};
};

}  // namespace merchant
