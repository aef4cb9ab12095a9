// The idempotency core over cpp-httplib (webhooks::idempotency_http): writing an answer, the guard
// on a request, the health probe's database check and the one exception handler of every server
// here (webhooks-publisherd, orders-api, payout-partner). Kept apart from webhooks::idempotency so
// that the core (records, guard, group commit) links no HTTP library. docs/idempotency.md.
#pragma once

#include <httplib.h>

#include <chrono>
#include <exception>
#include <string_view>

#include "webhooks/db.h"
#include "webhooks/idempotency/answers.h"
#include "webhooks/idempotency/guard.h"

namespace webhooks::idempotency {

// Writes `answer` into a cpp-httplib response: status, headers, body as application/json (moved
// in, not copied: pass std::move(answer) when it is not needed afterwards).
void write(Response answer, httplib::Response& res);

// The guard on a cpp-httplib request: the Idempotency-Key header, the method, path and body of
// `req` go to Guard::run (or run_in_transaction), and its answer is written into `res`. An
// exception out of the guard (a database failure outside the operation) is answered as
// answer_exception() says: 503 storage_unavailable for Error(storage), else 500.
void handle(Guard& guard, const httplib::Request& req, httplib::Response& res,
            std::string_view scope, const Operation& operation);
void handle_in_transaction(Guard& guard, const httplib::Request& req, httplib::Response& res,
                           std::string_view scope, const TransactionalOperation& operation);

// The exception handler of every server here (http::Server::set_exception_handler): logs the
// event "request_failed" (level error, with the path, the answer's code and the exception's
// message) and writes exception_answer(error) into `res`.
void answer_exception(const httplib::Request& req, httplib::Response& res,
                      std::exception_ptr error);

// How long /healthz waits for the database's answer to SELECT 1: 500 ms (milliseconds).
inline constexpr std::chrono::milliseconds kHealthTimeout{500};

// GET /healthz's database check, bounded, so that a database that stopped answering is reported
// as such within the bound instead of holding the probe (docs/operations.md, "When PostgreSQL
// stops answering"). Whether `db` answers SELECT 1 within `timeout` (db::Database::ping, the wait
// for a pooled connection included). When it does not, logs the reason (event
// "database_unreachable", level warn), writes 503 storage_unavailable with Retry-After: 1 and the
// message "the database is unreachable …" into `res`, and returns false; the caller answers 200
// when true. Throws nothing but what writing the answer may (std::bad_alloc).
bool database_reachable(db::Database& db, httplib::Response& res,
                        std::chrono::milliseconds timeout = kHealthTimeout);

}  // namespace webhooks::idempotency
