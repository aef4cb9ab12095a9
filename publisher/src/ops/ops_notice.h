// Writing the ops events (ops/ops_events.h) inside Store::record's transaction.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "ops/ops_events.h"
#include "webhooks/db.h"

namespace webhooks::publisher::detail {

// What an ops event says about an endpoint, read in the caller's transaction.
struct OpsNotice {
  std::string endpoint_id;
  std::string merchant_id;
  std::string url;
  UnixMillis failing_since = 0;  // 0: not failing
};
OpsNotice ops_notice(db::Transaction& tx, const std::string& endpoint_id);

// Inserts the event `type` about `notice` for `ops_merchant_id` (fanned out to its endpoints, in
// `tx`). Does nothing when `ops_merchant_id` is empty or is the endpoint's own merchant. The event
// id is derived from the type, the endpoint and `now`, so a retried transaction makes the same.
void insert_ops_event(Store& store, db::Transaction& tx, const std::string& ops_merchant_id,
                      std::string_view type, const OpsNotice& notice, std::string_view reason,
                      UnixMillis now);

}  // namespace webhooks::publisher::detail
