#include "transfers.h"

namespace webhooks::partner {
namespace {

// dedup_key is the idempotency key when deduplicating, NULL otherwise: UNIQUE ignores NULLs on
// both engines, so one table serves a partner that switches --ignore-idempotency-key on and off.
constexpr std::string_view kCreateTransfers =
    "CREATE TABLE IF NOT EXISTS transfers ("
    " id TEXT PRIMARY KEY, idempotency_key TEXT NOT NULL, dedup_key TEXT UNIQUE,"
    " amount BIGINT NOT NULL, currency TEXT NOT NULL, destination TEXT NOT NULL,"
    " created_at BIGINT NOT NULL)";
constexpr std::string_view kInsertTransfer =
    "INSERT INTO transfers (id, idempotency_key, dedup_key, amount, currency, destination,"
    " created_at) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (dedup_key) DO NOTHING";
constexpr std::string_view kSelectTransfers =
    "SELECT id, idempotency_key, amount, currency, destination, created_at FROM transfers";

Transfer row_to_transfer(const db::Rows& rows, std::size_t row) {
  Transfer t;
  t.id = rows.text(row, 0);
  t.idempotency_key = rows.text(row, 1);
  t.request.amount = rows.integer(row, 2);
  t.request.currency = rows.text(row, 3);
  t.request.destination = rows.text(row, 4);
  t.created_at = rows.integer(row, 5);
  return t;
}

bool is_currency(const std::string& text) {
  if (text.size() != 3) return false;
  for (char c : text) {
    if (c < 'A' || c > 'Z') return false;
  }
  return true;
}

}  // namespace

nlohmann::json to_json(const Transfer& t) {
  return {{"id", t.id},
          {"idempotency_key", t.idempotency_key},
          {"amount", t.request.amount},
          {"currency", t.request.currency},
          {"destination", t.request.destination},
          {"reversed_by",
           t.reversed_by.empty() ? nlohmann::json(nullptr) : nlohmann::json(t.reversed_by)}};
}

std::optional<TransferRequest> parse_transfer_request(const nlohmann::json& body,
                                                      std::string& error) {
  if (!body.is_object()) {
    error = "the body must be a JSON object";
    return std::nullopt;
  }
  TransferRequest out;
  const auto amount = body.find("amount");
  if (amount == body.end() || !amount->is_number_integer() || amount->get<std::int64_t>() <= 0) {
    error = "amount must be an integer number of minor units greater than 0";
    return std::nullopt;
  }
  out.amount = amount->get<std::int64_t>();
  const auto currency = body.find("currency");
  if (currency == body.end() || !currency->is_string() ||
      !is_currency(currency->get<std::string>())) {
    error = "currency must be three uppercase letters";
    return std::nullopt;
  }
  out.currency = currency->get<std::string>();
  const auto destination = body.find("destination");
  if (destination == body.end() || !destination->is_string() ||
      destination->get<std::string>().empty()) {
    error = "destination must be a non-empty string";
    return std::nullopt;
  }
  out.destination = destination->get<std::string>();
  return out;
}

void Transfers::create_tables() { db_.exec(kCreateTransfers); }

Transfers::Result Transfers::create(const std::string& key, const TransferRequest& request,
                                    const std::string& id, UnixMillis now) {
  const bool dedup = dedup_ && !key.empty();
  Result result;
  db_.transact([&](db::Transaction& tx) {
    const db::Param dedup_key = dedup ? db::Param(std::string_view(key)) : db::Param(nullptr);
    const db::Rows inserted =
        tx.exec(kInsertTransfer,
                {id, key, dedup_key, request.amount, request.currency, request.destination, now});
    if (inserted.affected() == 1) {
      result = {Outcome::created, Transfer{id, key, request, now, ""}};
      return;
    }
    // READ COMMITTED: this statement sees the row the conflicting insert committed.
    const db::Rows found =
        tx.exec(std::string(kSelectTransfers) + " WHERE dedup_key = $1", {std::string_view(key)});
    result.transfer = row_to_transfer(found, 0);
    const TransferRequest& first = result.transfer.request;
    const bool same = first.amount == request.amount && first.currency == request.currency &&
                      first.destination == request.destination;
    result.outcome = same ? Outcome::replayed : Outcome::key_reused;
  });
  return result;
}

std::vector<Transfer> Transfers::list() {
  const db::Rows rows = db_.exec(
      "SELECT t.id, t.idempotency_key, t.amount, t.currency, t.destination, t.created_at, r.id"
      " FROM transfers t LEFT JOIN reversals r ON r.transfer_id = t.id"
      " ORDER BY t.created_at, t.id");
  std::vector<Transfer> out;
  out.reserve(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    out.push_back(row_to_transfer(rows, i));
    out.back().reversed_by = rows.text(i, 6);
  }
  return out;
}

}  // namespace webhooks::partner
