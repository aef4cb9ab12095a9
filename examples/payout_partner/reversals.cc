#include "reversals.h"

namespace webhooks::partner {
namespace {

// One reversal per transfer (transfer_id UNIQUE); dedup_key is the key, NULL when none was sent.
constexpr std::string_view kCreateReversals =
    "CREATE TABLE IF NOT EXISTS reversals ("
    " id TEXT PRIMARY KEY, transfer_id TEXT NOT NULL UNIQUE, idempotency_key TEXT NOT NULL,"
    " dedup_key TEXT UNIQUE, amount BIGINT NOT NULL, currency TEXT NOT NULL,"
    " created_at BIGINT NOT NULL)";
constexpr std::string_view kInsertReversal =
    "INSERT INTO reversals (id, transfer_id, idempotency_key, dedup_key, amount, currency,"
    " created_at) SELECT $1, id, $2, $3, amount, currency, $4 FROM transfers WHERE id = $5"
    " ON CONFLICT DO NOTHING";
constexpr std::string_view kSelectReversals =
    "SELECT id, transfer_id, idempotency_key, amount, currency, created_at FROM reversals";

Reversal row_to_reversal(const db::Rows& rows, std::size_t row) {
  return {rows.text(row, 0),    rows.text(row, 1), rows.text(row, 2),
          rows.integer(row, 3), rows.text(row, 4), rows.integer(row, 5)};
}

}  // namespace

nlohmann::json to_json(const Reversal& r) {
  return {{"id", r.id},
          {"transfer_id", r.transfer_id},
          {"idempotency_key", r.idempotency_key},
          {"amount", r.amount},
          {"currency", r.currency}};
}

void Reversals::create_tables() { db_.exec(kCreateReversals); }

Reversals::Result Reversals::create(const std::string& key, const std::string& transfer_id,
                                    const std::string& id, UnixMillis now) {
  Result result;
  db_.transact([&](db::Transaction& tx) {
    const db::Param dedup_key = key.empty() ? db::Param(nullptr) : db::Param(std::string_view(key));
    const db::Rows inserted = tx.exec(kInsertReversal, {id, key, dedup_key, now, transfer_id});
    if (inserted.affected() == 1) {
      const db::Rows row = tx.exec(std::string(kSelectReversals) + " WHERE id = $1", {id});
      result = {Outcome::created, row_to_reversal(row, 0)};
      return;
    }
    // READ COMMITTED: these statements see the row a conflicting insert committed.
    if (!key.empty()) {
      const db::Rows by_key =
          tx.exec(std::string(kSelectReversals) + " WHERE dedup_key = $1", {std::string_view(key)});
      if (!by_key.empty()) {
        result.reversal = row_to_reversal(by_key, 0);
        result.outcome =
            result.reversal.transfer_id == transfer_id ? Outcome::replayed : Outcome::key_reused;
        return;
      }
    }
    const db::Rows by_transfer =
        tx.exec(std::string(kSelectReversals) + " WHERE transfer_id = $1", {transfer_id});
    if (by_transfer.empty()) {
      result.outcome = Outcome::no_transfer;
      return;
    }
    result = {Outcome::already_reversed, row_to_reversal(by_transfer, 0)};
  });
  return result;
}

std::optional<Reversal> Reversals::of_transfer(const std::string& transfer_id) {
  const db::Rows rows =
      db_.exec(std::string(kSelectReversals) + " WHERE transfer_id = $1", {transfer_id});
  if (rows.empty()) return std::nullopt;
  return row_to_reversal(rows, 0);
}

}  // namespace webhooks::partner
