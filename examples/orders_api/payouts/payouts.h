// Payouts: POST /payouts, an operation with an effect outside our database. It never doubles a
// transfer: before calling the partner it saves the payout with its deterministic downstream key
// `kxp-<payout_id>-<idempotency_key>` (and a `payout.created` outbox row) in one transaction; a
// re-run (reacquired) finds that payout and repeats the same downstream request, which the
// partner deduplicates. docs/orders-api.md, "Payouts".
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "http.h"
#include "payouts/partner_client.h"
#include "webhooks/clock.h"
#include "webhooks/db.h"
#include "webhooks/idempotency/guard.h"
#include "webhooks/idempotency/store.h"
#include "webhooks/uuid.h"

namespace webhooks::orders {

struct PayoutsOptions {
  // Test hook: sleep this long inside the guarded operation, before its first transaction.
  std::chrono::milliseconds operation_delay{0};
  // Test hook: SIGKILL the process right after the partner accepted a transfer, before the
  // payout is marked submitted (the answer is lost; the payout stays `pending`).
  bool crash_after_partner_commit = false;
};

struct Payout {
  std::string id, merchant_id, idempotency_key, downstream_key;
  std::int64_t amount = 0;
  std::string currency, destination;
  std::string status;  // pending (saved, partner not yet confirmed), submitted, rejected
  std::string transfer_id;
  UnixMillis created_at = 0;
};

class Payouts {
 public:
  // All references must outlive this object. Thread-safe.
  Payouts(idempotency::Store& store, const Clock& clock, UuidV7Generator& ids,
          PartnerClient& partner, PayoutsOptions options);

  // The operation behind POST /payouts: 201 with the submitted payout; 422 for an invalid body
  // or a transfer the partner refuses (final); 502 partner_unavailable when the partner cannot
  // be reached after its retries (not final: the client's retry repeats the same transfer).
  Response create(idempotency::Attempt& attempt, const std::string& merchant_id,
                  std::string_view body);
  // 200 with the payout, or 404.
  Response get(const std::string& merchant_id, const std::string& id);

 private:
  // The payout this key saved before (a re-run), or a new pending one saved with its outbox row.
  Payout find_or_save(idempotency::Attempt& attempt, const std::string& merchant_id,
                      std::int64_t amount, const std::string& currency,
                      const std::string& destination);
  // Asks the partner for the transfer; settles the payout as submitted or rejected, or answers
  // 502 partner_unavailable (the payout stays pending).
  Response submit(idempotency::Attempt& attempt, Payout& payout);
  // Commits the payout's status and transfer id with `answer` as the operation's result.
  Response settle(idempotency::Attempt& attempt, const Payout& payout, const std::string& status,
                  const std::string& transfer_id, Response answer);
  std::optional<Payout> find_saved(db::Database& db, const std::string& merchant_id,
                                   const std::string& key);
  Payout save_new(db::Database& db, const std::string& merchant_id, const std::string& key,
                  std::int64_t amount, const std::string& currency, const std::string& destination);

  idempotency::Store& store_;
  const Clock& clock_;
  UuidV7Generator& ids_;
  PartnerClient& partner_;
  PayoutsOptions options_;
};

}  // namespace webhooks::orders
