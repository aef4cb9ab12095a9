#include "payouts/payouts.h"

#include <csignal>
#include <thread>

#include "keys.h"
#include "storage.h"
#include "webhooks/http_server.h"
#include "webhooks/log.h"
#include "webhooks/outbox/enqueue.h"

namespace webhooks::orders {
namespace {

constexpr std::string_view kColumns =
    "SELECT id, merchant_id, idempotency_key, downstream_key, amount, currency, destination,"
    " status, transfer_id, created_at FROM payouts";
constexpr std::string_view kInsertPayout =
    "INSERT INTO payouts (id, merchant_id, idempotency_key, downstream_key, amount, currency,"
    " destination, status, created_at, updated_at)"
    " VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', $8, $8)";
constexpr std::string_view kSettle =
    "UPDATE payouts SET status = $1, transfer_id = $2, updated_at = $3 WHERE id = $4";

Payout row_to_payout(const db::Rows& rows, std::size_t row) {
  return Payout{rows.text(row, 0),    rows.text(row, 1),   rows.text(row, 2), rows.text(row, 3),
                rows.integer(row, 4), rows.text(row, 5),   rows.text(row, 6), rows.text(row, 7),
                rows.text(row, 8),    rows.integer(row, 9)};
}

nlohmann::json payout_json(const Payout& p) {
  return {{"id", p.id},
          {"merchant_id", p.merchant_id},
          {"downstream_key", p.downstream_key},
          {"amount", p.amount},
          {"currency", p.currency},
          {"destination", p.destination},
          {"status", p.status},
          {"transfer_id", p.transfer_id.empty() ? nlohmann::json() : nlohmann::json(p.transfer_id)},
          {"created_at", rfc3339(p.created_at)}};
}

// The fields of a POST /payouts body, validated.
struct PayoutInput {
  std::int64_t amount = 0;
  std::string currency, destination;
};

// The body's amount, currency and destination, or nullopt with `error` set to the 400/422 answer.
std::optional<PayoutInput> read_payout_input(std::string_view body, Response& error) {
  const auto input = parse_object(body, error);
  if (!input) return std::nullopt;
  std::string message;  // the first invalid field's
  const auto amount = read_amount(*input, message);
  const auto currency = amount ? read_currency(*input, message) : std::nullopt;
  const auto destination = currency ? read_text(*input, "destination", message) : std::nullopt;
  if (destination) return PayoutInput{*amount, *currency, *destination};
  error = error_response(422, "validation_failed", message);
  return std::nullopt;
}

}  // namespace

Payouts::Payouts(idempotency::Store& store, const Clock& clock, UuidV7Generator& ids,
                 PartnerClient& partner, PayoutsOptions options)
    : store_(store), clock_(clock), ids_(ids), partner_(partner), options_(options) {}

Response Payouts::create(idempotency::Attempt& attempt, const std::string& merchant_id,
                         std::string_view body) {
  Response invalid;
  const auto input = read_payout_input(body, invalid);
  if (!input) return invalid;
  if (options_.operation_delay.count() > 0) {  // test hook; off the fiber worker's thread
    http::run_blocking([&] { std::this_thread::sleep_for(options_.operation_delay); });
  }
  Payout payout =
      find_or_save(attempt, merchant_id, input->amount, input->currency, input->destination);
  if (payout.status == "submitted") {
    return settle(attempt, payout, "submitted", payout.transfer_id,
                  json_response(201, payout_json(payout)));
  }
  return submit(attempt, payout);
}

Payout Payouts::find_or_save(idempotency::Attempt& attempt, const std::string& merchant_id,
                             std::int64_t amount, const std::string& currency,
                             const std::string& destination) {
  db::Database& db = attempt.database();
  const std::string& key = attempt.lease().key;
  std::optional<Payout> payout;
  if (attempt.reacquired()) payout = find_saved(db, merchant_id, key);
  if (!payout) return save_new(db, merchant_id, key, amount, currency, destination);
  log_event(spdlog::level::info, {{"event", "payout_resumed"},
                                  {"payout_id", payout->id},
                                  {"status", payout->status},
                                  {"attempt", attempt.attempts()}});
  return *payout;
}

Response Payouts::settle(idempotency::Attempt& attempt, const Payout& payout,
                         const std::string& status, const std::string& transfer_id,
                         Response answer) {
  return attempt.commit([&](db::Transaction& tx) {
    const db::Param transfer =
        transfer_id.empty() ? db::Param(nullptr) : db::Param(std::string_view(transfer_id));
    tx.exec(kSettle, {status, transfer, clock_.now_ms(), payout.id});
    return answer;
  });
}

Response Payouts::submit(idempotency::Attempt& attempt, Payout& payout) {
  // The partner call (and its retries' waits) on a thread of its own when this handler runs on a
  // fiber worker, so that the other requests of its thread go on meanwhile.
  const TransferResult result = http::run_blocking([&] {
    return partner_.create_transfer(payout.downstream_key, payout.amount, payout.currency,
                                    payout.destination);
  });
  switch (result.kind) {
    case TransferResult::Kind::accepted: {
      if (options_.crash_after_partner_commit) {
        log_event(spdlog::level::warn, {{"event", "crash_after_partner_commit"},
                                        {"payout_id", payout.id},
                                        {"transfer_id", result.transfer_id}});
        std::raise(SIGKILL);
      }
      payout.status = "submitted";
      payout.transfer_id = result.transfer_id;
      return settle(attempt, payout, "submitted", result.transfer_id,
                    json_response(201, payout_json(payout)));
    }
    case TransferResult::Kind::rejected:
      return settle(attempt, payout, "rejected", "",
                    error_response(422, "payout_rejected",
                                   "the partner refused the transfer: " + result.error));
    case TransferResult::Kind::unavailable:
      break;
  }
  log_event(spdlog::level::warn, {{"event", "partner_unavailable"},
                                  {"payout_id", payout.id},
                                  {"tries", result.tries},
                                  {"error", result.error}});
  return error_response(502, "partner_unavailable",
                        "the payout partner could not be reached; retry with the same "
                        "Idempotency-Key (" +
                            result.error + ")");
}

Response Payouts::get(const std::string& merchant_id, const std::string& id) {
  const db::Rows rows = store_.database().exec(
      std::string(kColumns) + " WHERE id = $1 AND merchant_id = $2", {id, merchant_id});
  if (rows.empty()) return error_response(404, "not_found", "no such payout");
  return json_response(200, payout_json(row_to_payout(rows, 0)));
}

std::optional<Payout> Payouts::find_saved(db::Database& db, const std::string& merchant_id,
                                          const std::string& key) {
  // Only payouts of this record's lifetime: after the TTL the same key is a new request.
  const auto record = store_.find(merchant_scope(merchant_id), key);
  const UnixMillis since = record ? record->created_at : 0;
  const db::Rows rows = db.exec(std::string(kColumns) +
                                    " WHERE merchant_id = $1 AND idempotency_key = $2"
                                    " AND created_at >= $3 ORDER BY created_at DESC LIMIT 1",
                                {merchant_id, key, since});
  if (rows.empty()) return std::nullopt;
  return row_to_payout(rows, 0);
}

Payout Payouts::save_new(db::Database& db, const std::string& merchant_id, const std::string& key,
                         std::int64_t amount, const std::string& currency,
                         const std::string& destination) {
  Payout p;
  p.id = ids_.next();
  p.merchant_id = merchant_id;
  p.idempotency_key = key;
  p.downstream_key = "kxp-" + p.id + "-" + key;
  p.amount = amount;
  p.currency = currency;
  p.destination = destination;
  p.status = "pending";
  p.created_at = clock_.now_ms();
  db.transact([&](db::Transaction& tx) {
    tx.exec(kInsertPayout, {p.id, p.merchant_id, p.idempotency_key, p.downstream_key, p.amount,
                            p.currency, p.destination, p.created_at});
    outbox::enqueue(tx, ids_, p.merchant_id, "payout.created", payout_json(p).dump(), p.created_at);
  });
  return p;
}

}  // namespace webhooks::orders
