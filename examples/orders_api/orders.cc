#include "orders.h"

#include <thread>

#include "storage.h"
#include "webhooks/error.h"
#include "webhooks/publisher/outbox_relay.h"

namespace webhooks::orders {
namespace {

constexpr std::string_view kInsert =
    "INSERT INTO orders (id, merchant_id, amount, currency, reference, status, idempotency_key,"
    " created_at, updated_at) VALUES ($1, $2, $3, $4, $5, 'created', $6, $7, $7)";
constexpr std::string_view kSelect =
    "SELECT id, merchant_id, amount, currency, reference, status, created_at FROM orders"
    " WHERE id = $1 AND merchant_id = $2";
constexpr std::string_view kTransition =
    "UPDATE orders SET status = $1, updated_at = $2"
    " WHERE id = $3 AND merchant_id = $4 AND status = 'created'";

nlohmann::json order_json(const db::Rows& rows) {
  return {{"id", rows.text(0, 0)},
          {"merchant_id", rows.text(0, 1)},
          {"amount", rows.integer(0, 2)},
          {"currency", rows.text(0, 3)},
          {"reference", rows.text(0, 4)},
          {"status", rows.text(0, 5)},
          {"created_at", rfc3339(rows.integer(0, 6))}};
}

}  // namespace

Orders::Orders(db::Database& db, const Clock& clock, UuidV7Generator& ids, OrdersOptions options)
    : db_(db),
      clock_(clock),
      ids_(ids),
      operation_delay_(options.operation_delay),
      break_transaction_(options.break_transaction_once) {}

Response Orders::create(idempotency::Attempt& attempt, const std::string& merchant_id,
                        std::string_view body) {
  Response invalid;
  const auto input = parse_object(body, invalid);
  if (!input) return invalid;
  std::string error;
  const auto amount = read_amount(*input, error);
  if (!amount) return error_response(422, "validation_failed", error);
  const auto currency = read_currency(*input, error);
  if (!currency) return error_response(422, "validation_failed", error);
  const auto reference = read_text(*input, "reference", error);
  if (!reference) return error_response(422, "validation_failed", error);

  if (operation_delay_.count() > 0) std::this_thread::sleep_for(operation_delay_);
  const std::string id = ids_.next();
  const UnixMillis now = clock_.now_ms();
  const nlohmann::json order = {{"id", id},
                                {"merchant_id", merchant_id},
                                {"amount", *amount},
                                {"currency", *currency},
                                {"reference", *reference},
                                {"status", "created"},
                                {"created_at", rfc3339(now)}};
  const std::string& key = attempt.lease().key;
  return attempt.commit([&](db::Transaction& tx) {
    tx.exec(kInsert, {id, merchant_id, *amount, *currency, *reference,
                      key.empty() ? db::Param(nullptr) : db::Param(std::string_view(key)), now});
    publisher::enqueue_outbox_event(tx, ids_, merchant_id, "order.created", order.dump(), now);
    if (break_transaction_.exchange(false)) {
      if (tx.engine() == db::Engine::postgres) {
        tx.exec("SELECT pg_terminate_backend(pg_backend_pid())");
      }
      throw Error(ErrorCode::storage, "test hook: the transaction was broken on purpose");
    }
    Response created = json_response(201, order);
    created.headers.emplace_back("Location", "/orders/" + id);
    return created;
  });
}

Response Orders::get(const std::string& merchant_id, const std::string& id) {
  const db::Rows rows = db_.exec(kSelect, {id, merchant_id});
  if (rows.empty()) return error_response(404, "not_found", "no such order");
  return json_response(200, order_json(rows));
}

Response Orders::update(const std::string& merchant_id, const std::string& id,
                        std::string_view body) {
  Response invalid;
  const auto input = parse_object(body, invalid);
  if (!input) return invalid;
  const auto status = input->find("status");
  if (status == input->end() || !status->is_string() ||
      (*status != "captured" && *status != "cancelled")) {
    return error_response(422, "validation_failed", "status must be \"captured\" or \"cancelled\"");
  }
  const std::string target = status->get<std::string>();
  Response answer;
  db_.transact([&](db::Transaction& tx) {
    const UnixMillis now = clock_.now_ms();
    const bool moved = tx.exec(kTransition, {target, now, id, merchant_id}).affected() == 1;
    const db::Rows rows = tx.exec(kSelect, {id, merchant_id});
    if (rows.empty()) {
      answer = error_response(404, "not_found", "no such order");
      return;
    }
    const nlohmann::json order = order_json(rows);
    if (moved) {
      publisher::enqueue_outbox_event(tx, ids_, merchant_id, "order." + target, order.dump(), now);
    }
    if (order["status"] != target) {
      answer = error_response(
          409, "invalid_transition",
          "the order is " + order["status"].get<std::string>() + " and cannot become " + target);
      return;
    }
    answer = json_response(200, order);
  });
  return answer;
}

}  // namespace webhooks::orders
