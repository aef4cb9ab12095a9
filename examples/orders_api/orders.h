// Orders: POST /orders (guarded by the idempotency core; the idempotency record, the order and its
// `order.created` outbox row commit in one transaction, grouped with concurrent requests'),
// GET /orders/{id}, and PUT /orders/{id} (a state change that is idempotent by nature: a key is
// optional; with one, its record commits in the same one transaction).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "http.h"
#include "webhooks/clock.h"
#include "webhooks/db.h"
#include "webhooks/idempotency/guard.h"
#include "webhooks/uuid.h"

namespace webhooks::orders {

struct OrdersOptions {
  // Test hook: sleep this long inside the operation's transaction, before the order's rows are
  // written (an operation that runs long while its duplicates arrive).
  std::chrono::milliseconds operation_delay{0};
  // Test hook: break the next create's transaction after the order and outbox rows are written
  // (PostgreSQL: the connection terminates its own backend; SQLite: a storage error is thrown).
  bool break_transaction_once = false;
};

// A POST /orders body read and checked outside any transaction: either `refused` (400/422, a
// final answer) or the order to write.
struct OrderDraft {
  std::optional<Response> refused;
  std::string id, merchant_id, currency, reference;
  std::int64_t amount = 0;
  UnixMillis created_at = 0;
  std::string json;  // the order as answered and as the `order.created` payload
};

// The body of POST /orders' 201 answer, and of the `order.created` event: the order as created,
// from what never changes after the order committed (its id, merchant, amount, currency,
// reference and created_at; the status "created"). `order.json` is not read.
std::string created_json(const OrderDraft& order);

// Rebuilds POST /orders' 201 answers, which idempotency records store by reference: the order's
// id as its 16 bytes (Orders::create sets Response::rendered_from), the rest read from the
// orders table and rendered by created_json, so a replay is the first answer byte for byte
// however the order changed since (captured, cancelled). Another form of answer would take a
// reference of another length. docs/idempotency.md, "Answers stored by reference". Thread-safe.
class CreatedOrderAnswers final : public idempotency::ReplayRenderer {
 public:
  // 201 with Location /orders/ID and the order as created, for route "POST /orders", status
  // 201 and a 16-byte reference; std::nullopt for anything else or an order that is gone.
  // Throws Error(storage).
  std::optional<Response> render(db::Statements& db, std::string_view route, int status,
                                 std::string_view rendered_from) const override;
  // The order's id.
  std::optional<std::string> resource_id(std::string_view rendered_from) const override;
};

class Orders {
 public:
  // All references must outlive this object. Thread-safe.
  Orders(db::Database& db, const Clock& clock, UuidV7Generator& ids, OrdersOptions options);

  // Reads and checks a POST /orders body of `merchant_id` (no database access): the refusal, or
  // the order with a new id and the current time.
  OrderDraft draft(const std::string& merchant_id, std::string_view body);
  // The operation behind POST /orders, in `tx` (the transaction that also begins and completes
  // the idempotency record): 201 with the order after inserting it (orders.idempotency_key =
  // `key`, NULL when empty) and its `order.created` outbox row, stored by reference
  // (CreatedOrderAnswers); `draft.refused` as is (400/422,
  // final: stored and replayed on retries). Throws Error(storage) when the database fails.
  Response create(db::Transaction& tx, std::string_view key, const OrderDraft& draft);
  // 200 with the order, or 404 when `merchant_id` has no order `id`.
  Response get(const std::string& merchant_id, const std::string& id);
  // {"status": "captured" | "cancelled"}: moves a `created` order there (with an `order.<status>`
  // outbox row); the same status again is 200 without change; any other move is 409
  // invalid_transition; 404 when `merchant_id` has no order `id`; 400/422 for a body out of its
  // domain. Runs in `tx` (the caller's transaction, which may also hold an idempotency record).
  Response update(db::Transaction& tx, const std::string& merchant_id, const std::string& id,
                  std::string_view body);

 private:
  db::Database& db_;
  const Clock& clock_;
  UuidV7Generator& ids_;
  std::chrono::milliseconds operation_delay_;
  std::atomic<bool> break_transaction_;
};

}  // namespace webhooks::orders
