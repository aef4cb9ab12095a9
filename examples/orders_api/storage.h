// The orders API's own tables (orders, payouts) beside the toolkit's migrated ones
// (idempotency_records, outbox). Every operation writes its event with
// outbox::enqueue in its own transaction; the relay posts it (--publisher-url).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "webhooks/clock.h"
#include "webhooks/db.h"

namespace webhooks::orders {

// Migrates the toolkit's components it uses (idempotency: idempotency_records; outbox: outbox;
// never the publisher's tables) and its own (orders_api: reconciliations), and creates `orders`
// and `payouts` if absent. Safe to run at every start and from several processes. Throws
// Error(storage).
void prepare_database(db::Database& db, UnixMillis now);

}  // namespace webhooks::orders
