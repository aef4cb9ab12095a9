// The partner's reversals of transfers: POST /transfers/{id}/reversals. A transfer is reversed at
// most once, and reversals are always deduplicated on X-Idempotency-Key, even when the partner
// ignores the key for transfers (--ignore-idempotency-key). docs/orders-api.md, "The payout
// partner".
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "webhooks/clock.h"
#include "webhooks/db.h"

namespace webhooks::partner {

struct Reversal {
  std::string id;               // "rv_" + UUIDv7
  std::string transfer_id;      // the transfer it undoes, in full
  std::string idempotency_key;  // as sent; "" when the request had none
  std::int64_t amount = 0;      // the transfer's amount, minor units
  std::string currency;         // the transfer's currency
  UnixMillis created_at = 0;
};

// {"id","transfer_id","idempotency_key","amount","currency"}
nlohmann::json to_json(const Reversal& reversal);

class Reversals {
 public:
  // `db` holds the `transfers` table (Transfers::create_tables) and must outlive this.
  explicit Reversals(db::Database& db) : db_(db) {}

  // Creates the table if absent. Throws Error(storage).
  void create_tables();

  enum class Outcome {
    created,           // a new reversal
    replayed,          // `key` already reversed this transfer: that reversal
    already_reversed,  // the transfer was reversed under another key: that reversal
    key_reused,        // `key` reversed another transfer: that reversal
    no_transfer,       // no transfer has this id
  };
  struct Result {
    Outcome outcome = Outcome::created;
    Reversal reversal;  // every outcome but no_transfer
  };
  // Reverses `transfer_id` under `key` ("" for none: no deduplication on the key, but still one
  // reversal per transfer). Committed before it returns. Throws Error(storage).
  Result create(const std::string& key, const std::string& transfer_id, const std::string& id,
                UnixMillis now);

  // The reversal of `transfer_id`, if any. Throws Error(storage).
  std::optional<Reversal> of_transfer(const std::string& transfer_id);

 private:
  db::Database& db_;
};

}  // namespace webhooks::partner
