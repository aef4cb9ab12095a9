// The orders API's own tables (orders, payouts) beside the toolkit's migrated ones
// (idempotency_records, outbox), and the outbox write every operation shares.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "webhooks/clock.h"
#include "webhooks/db.h"

namespace webhooks::orders {

// Runs the toolkit's migrations (idempotency records, outbox) and creates `orders` and `payouts`
// if absent. Safe to run at every start and from several processes. Throws Error(storage).
void prepare_database(db::Database& db, UnixMillis now);

// Inserts one outbox row (event `type` with `data` as its payload) in `tx`, so the event commits
// with the change it describes. The relay that posts it to the publisher is a later issue.
void insert_outbox(db::Transaction& tx, std::string_view event_id, std::string_view merchant_id,
                   std::string_view type, const nlohmann::json& data, UnixMillis now);

}  // namespace webhooks::orders
