// GET /healthz's database check, shared by the servers of the toolkit (webhooks-publisherd,
// orders-api): bounded, so that a database that stopped answering is reported as such within
// the bound instead of holding the probe (docs/operations.md, "When PostgreSQL stops answering").
#pragma once

#include <httplib.h>

#include <chrono>

#include "webhooks/db.h"

namespace webhooks::idempotency {

// How long /healthz waits for the database's answer to SELECT 1: 500 ms (milliseconds).
inline constexpr std::chrono::milliseconds kHealthTimeout{500};

// Whether `db` answers SELECT 1 within `timeout` (db::Database::ping, the wait for a pooled
// connection included). When it does not (it refused, failed or did not answer in time), logs
// the reason (event "database_unreachable", level warn), writes 503 storage_unavailable with
// Retry-After: 1 and the message "the database is unreachable …" into `res`, and returns false;
// the caller answers 200 when true. Throws nothing but what writing the answer may
// (std::bad_alloc).
bool database_reachable(db::Database& db, httplib::Response& res,
                        std::chrono::milliseconds timeout = kHealthTimeout);

}  // namespace webhooks::idempotency
