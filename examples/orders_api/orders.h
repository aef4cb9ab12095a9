// Orders: POST /orders (guarded by the idempotency core; the order, its `order.created` outbox
// row and the idempotency record commit in one transaction), GET /orders/{id}, and
// PUT /orders/{id} (a state change that is idempotent by nature: it needs no key).
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <string_view>

#include "http.h"
#include "webhooks/clock.h"
#include "webhooks/db.h"
#include "webhooks/idempotency/guard.h"
#include "webhooks/uuid.h"

namespace webhooks::orders {

struct OrdersOptions {
  // Test hook: sleep this long inside the guarded operation, before its transaction.
  std::chrono::milliseconds operation_delay{0};
  // Test hook: break the next create's transaction after the order and outbox rows are written
  // (PostgreSQL: the connection terminates its own backend; SQLite: a storage error is thrown).
  bool break_transaction_once = false;
};

class Orders {
 public:
  // All references must outlive this object. Thread-safe.
  Orders(db::Database& db, const Clock& clock, UuidV7Generator& ids, OrdersOptions options);

  // The operation behind POST /orders for `merchant_id`: 201 with the order; 400/422 for a body
  // out of its domain (final answers, replayed on retries).
  Response create(idempotency::Attempt& attempt, const std::string& merchant_id,
                  std::string_view body);
  // 200 with the order, or 404 when `merchant_id` has no order `id`.
  Response get(const std::string& merchant_id, const std::string& id);
  // {"status": "captured" | "cancelled"}: moves a `created` order there (with an `order.<status>`
  // outbox row); the same status again is 200 without change; any other move is 409
  // invalid_transition.
  Response update(const std::string& merchant_id, const std::string& id, std::string_view body);

 private:
  db::Database& db_;
  const Clock& clock_;
  UuidV7Generator& ids_;
  std::chrono::milliseconds operation_delay_;
  std::atomic<bool> break_transaction_;
};

}  // namespace webhooks::orders
