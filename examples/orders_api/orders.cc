#include "orders.h"

#include <algorithm>
#include <thread>

#include "storage.h"
#include "webhooks/error.h"
#include "webhooks/log.h"
#include "webhooks/outbox/enqueue.h"

namespace webhooks::orders {
namespace {

constexpr std::string_view kInsertOrder =
    "INSERT INTO orders (id, merchant_id, amount, currency, reference, status, idempotency_key,"
    " created_at, updated_at) VALUES ($1, $2, $3, $4, $5, 'created', $6, $7, $7)";
constexpr std::string_view kSelect =
    "SELECT id, merchant_id, amount, currency, reference, status, created_at FROM orders"
    " WHERE id = $1 AND merchant_id = $2";
constexpr std::string_view kSelectCreated =
    "SELECT id, merchant_id, amount, currency, reference, created_at FROM orders WHERE id = $1";
constexpr std::string_view kTransition =
    "UPDATE orders SET status = $1, updated_at = $2"
    " WHERE id = $3 AND merchant_id = $4 AND status = 'created'";

constexpr std::string_view kCreateRoute = "POST /orders";

// The 201 answer to the POST /orders that created `order` (its `json` filled).
Response created_answer(const OrderDraft& order) {
  Response created{201, {{"Location", "/orders/" + order.id}}, order.json};
  if (const auto id = uuid_from_string(order.id)) {
    created.rendered_from.assign(id->begin(), id->end());
  }
  return created;
}

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

std::string created_json(const OrderDraft& order) {
  return nlohmann::json{{"id", order.id},
                        {"merchant_id", order.merchant_id},
                        {"amount", order.amount},
                        {"currency", order.currency},
                        {"reference", order.reference},
                        {"status", "created"},
                        {"created_at", rfc3339(order.created_at)}}
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::optional<Response> CreatedOrderAnswers::render(db::Statements& db, std::string_view route,
                                                    int status,
                                                    std::string_view rendered_from) const {
  const std::optional<std::string> id = resource_id(rendered_from);
  if (!id || route != kCreateRoute || status != 201) return std::nullopt;
  const db::Rows rows = db.read(kSelectCreated, {*id});
  if (rows.empty()) return std::nullopt;
  OrderDraft order;
  order.id = rows.text(0, 0);
  order.merchant_id = rows.text(0, 1);
  order.amount = rows.integer(0, 2);
  order.currency = rows.text(0, 3);
  order.reference = rows.text(0, 4);
  order.created_at = rows.integer(0, 5);
  order.json = created_json(order);
  return created_answer(order);
}

std::optional<std::string> CreatedOrderAnswers::resource_id(std::string_view rendered_from) const {
  if (rendered_from.size() != sizeof(UuidBytes)) return std::nullopt;
  UuidBytes bytes;
  std::copy(rendered_from.begin(), rendered_from.end(), bytes.begin());
  return uuid_to_string(bytes);
}

Orders::Orders(db::Database& db, const Clock& clock, UuidV7Generator& ids, OrdersOptions options)
    : db_(db),
      clock_(clock),
      ids_(ids),
      operation_delay_(options.operation_delay),
      break_transaction_(options.break_transaction_once) {}

OrderDraft Orders::draft(const std::string& merchant_id, std::string_view body) {
  OrderDraft draft;
  Response invalid;
  const auto input = parse_object(body, invalid);
  if (!input) {
    draft.refused = std::move(invalid);
    return draft;
  }
  std::string error;
  const auto amount = read_amount(*input, error);
  std::optional<std::string> currency, reference;
  if (amount) currency = read_currency(*input, error);
  if (currency) reference = read_text(*input, "reference", error);
  if (!reference) {
    draft.refused = error_response(422, "validation_failed", error);
    return draft;
  }
  draft.id = ids_.next();
  draft.merchant_id = merchant_id;
  draft.amount = *amount;
  draft.currency = std::move(*currency);
  draft.reference = std::move(*reference);
  draft.created_at = clock_.now_ms();
  draft.json = created_json(draft);
  return draft;
}

Response Orders::create(db::Transaction& tx, std::string_view key, const OrderDraft& draft) {
  if (draft.refused) return *draft.refused;
  if (operation_delay_.count() > 0) {  // test hook: inside the transaction, its record begun
    log_event(spdlog::level::info,
              {{"event", "operation_delay"}, {"key", key}, {"ms", operation_delay_.count()}});
    // Inside the group's transaction: the thread waits (fibers do not suspend there).
    std::this_thread::sleep_for(operation_delay_);
  }
  tx.exec(kInsertOrder, {draft.id, draft.merchant_id, draft.amount, draft.currency, draft.reference,
                         key.empty() ? db::Param(nullptr) : db::Param(key), draft.created_at});
  outbox::enqueue(tx, ids_, draft.merchant_id, "order.created", draft.json, draft.created_at);
  if (break_transaction_.exchange(false)) {
    if (tx.engine() == db::Engine::postgres) {
      tx.exec("SELECT pg_terminate_backend(pg_backend_pid())");
    }
    throw Error(ErrorCode::storage, "test hook: the transaction was broken on purpose");
  }
  return created_answer(draft);
}

Response Orders::get(const std::string& merchant_id, const std::string& id) {
  const db::Rows rows = db_.exec(kSelect, {id, merchant_id});
  if (rows.empty()) return error_response(404, "not_found", "no such order");
  return json_response(200, order_json(rows));
}

Response Orders::update(db::Transaction& tx, const std::string& merchant_id, const std::string& id,
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
  const UnixMillis now = clock_.now_ms();
  const bool moved = tx.exec(kTransition, {target, now, id, merchant_id}).affected() == 1;
  const db::Rows rows = tx.exec(kSelect, {id, merchant_id});
  if (rows.empty()) return error_response(404, "not_found", "no such order");
  const nlohmann::json order = order_json(rows);
  if (moved) {
    outbox::enqueue(tx, ids_, merchant_id, "order." + target, order.dump(), now);
  }
  if (order["status"] != target) {
    return error_response(
        409, "invalid_transition",
        "the order is " + order["status"].get<std::string>() + " and cannot become " + target);
  }
  return json_response(200, order);
}

}  // namespace webhooks::orders
