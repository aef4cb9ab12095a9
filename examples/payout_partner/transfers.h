// The partner's ledger of transfers, deduplicated on the caller's X-Idempotency-Key (unless the
// partner is configured to ignore it, as an immature partner would).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "webhooks/clock.h"
#include "webhooks/db.h"

namespace webhooks::partner {

struct TransferRequest {
  std::int64_t amount = 0;  // minor units, > 0
  std::string currency;     // three uppercase letters
  std::string destination;  // non-empty
};

struct Transfer {
  std::string id;               // "tr_" + UUIDv7
  std::string idempotency_key;  // as sent; "" when the request had none
  TransferRequest request;
  UnixMillis created_at = 0;
  std::string reversed_by;  // the id of its reversal (list() only), "" when not reversed
};

// {"id","idempotency_key","amount","currency","destination","reversed_by"}: reversed_by is the
// reversal's id or null.
nlohmann::json to_json(const Transfer& transfer);

// Parses a POST /transfers body. Returns std::nullopt and sets `error` when a field is missing or
// out of its domain.
std::optional<TransferRequest> parse_transfer_request(const nlohmann::json& body,
                                                      std::string& error);

class Transfers {
 public:
  // `dedup` false: every request creates a transfer, whatever its key. `db` must outlive this.
  Transfers(db::Database& db, bool dedup) : db_(db), dedup_(dedup) {}

  // Creates the table if absent. Throws Error(storage).
  void create_tables();

  enum class Outcome { created, replayed, key_reused };
  struct Result {
    Outcome outcome = Outcome::created;
    Transfer transfer;  // created or replayed: the transfer; key_reused: the first one
  };
  // Creates a transfer, or finds the one already created for `key` (when deduplicating and `key`
  // is non-empty). Committed before it returns. Throws Error(storage).
  Result create(const std::string& key, const TransferRequest& request, const std::string& id,
                UnixMillis now);

  // Every transfer, oldest first, with reversed_by. Requires the `reversals` table
  // (Reversals::create_tables). Throws Error(storage).
  std::vector<Transfer> list();

 private:
  db::Database& db_;
  bool dedup_;
};

}  // namespace webhooks::partner
