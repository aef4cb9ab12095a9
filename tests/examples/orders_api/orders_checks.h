// Checks the orders tests share: an order created, a 503 to retry, the idempotency record a
// request left in the orders database.
#pragma once

#include <catch2/catch.hpp>
#include <string>

#include "harness.h"

namespace webhooks::test {

// POST /orders of `body` with `key` as key-m1; REQUIREs 201 Created.
inline Answer create_order(Stack& s, const std::string& key, const std::string& body = kOrder) {
  Answer created = s.post("/orders", key, body);
  REQUIRE(created.status == 201);
  return created;
}

// `status`, answered now (not a replay).
inline void check_fresh(const Answer& answer, int status) {
  CHECK(answer.status == status);
  CHECK(answer.header("Idempotent-Replayed") == "");
}

// `status` with `body`, replayed.
inline void check_replayed(const Answer& answer, int status, const std::string& body) {
  CHECK(answer.status == status);
  CHECK(answer.header("Idempotent-Replayed") == "true");
  CHECK(answer.body == body);
}

// `status` with the error `code`.
inline void check_error(const Answer& answer, int status, const std::string& code) {
  CHECK(answer.status == status);
  CHECK(answer.error_code() == code);
}

// 503 storage_unavailable with Retry-After: 1.
inline void check_storage_unavailable(const Answer& answer) {
  CHECK(answer.status == 503);
  CHECK(answer.error_code() == "storage_unavailable");
  CHECK(answer.header("Retry-After") == "1");
}

// orders-api started with --break-transaction-once: its first POST /orders (`body` with `key`)
// breaks inside the transaction, is answered 503 storage_unavailable, and leaves no order and no
// outbox row.
inline void check_first_transaction_breaks(Stack& s, const std::string& key,
                                           const std::string& body) {
  s.start_api({"--break-transaction-once"});
  check_storage_unavailable(s.post("/orders", key, body));
  CHECK(s.count("SELECT COUNT(*) FROM orders") == 0);
  CHECK(s.count("SELECT COUNT(*) FROM outbox") == 0);
}

// Merchant m1's record of `key`: completed, on its first attempt. REQUIREs one.
inline idempotency::Record completed_record(Stack& s, const std::string& key) {
  const std::optional<idempotency::Record> record = s.record(key);
  REQUIRE(record);
  CHECK(record->state == idempotency::State::completed);
  CHECK(record->attempts == 1);
  return *record;
}

// completed_record, holding the answer `status` with `body`.
inline void check_completed_with(Stack& s, const std::string& key, int status,
                                 const std::string& body) {
  const idempotency::Record record = completed_record(s, key);
  REQUIRE(record.response);
  CHECK(record.response->status == status);
  CHECK(record.response->body == body);
}

}  // namespace webhooks::test
