// `orders-api reconcile`: matches our payouts to the partner's transfers by downstream key and
// amount, the check that proves no payout was lost or doubled. A reversed transfer (the partner's
// reversed_by) no longer counts: a duplicate that `--resolve` reversed is settled.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "payouts/partner_client.h"
#include "webhooks/db.h"

namespace webhooks::orders {

// One payout the report found wrong, with what --resolve needs to act on it.
struct Finding {
  // duplicate, missing, missing_reversed (its transfer was reversed at the partner: never
  // re-submitted), amount_difference (also several transfers of which one differs)
  std::string kind;
  std::string payout_id, downstream_key, currency;
  std::int64_t amount = 0;  // the payout's, minor units
  // Its transfers not reversed, oldest first, but the one the payout records first (the one its
  // client was told about, which --resolve keeps).
  std::vector<std::string> transfer_ids;
};

struct ReconcileReport {
  int payouts = 0;    // payouts in our database
  int transfers = 0;  // transfers the partner holds, reversed ones included
  int reversed = 0;   // transfers the partner reversed (not counted below)
  int matched = 0;    // exactly one transfer, same amount and currency
  // Findings (any of them makes the report unclean):
  int duplicates = 0;          // payouts with more than one transfer for their downstream key
  int missing = 0;             // submitted payouts with no transfer
  int amount_differences = 0;  // one transfer whose amount or currency differs from the payout's
  int unknown_transfers = 0;   // transfers whose key belongs to no payout
  // Not findings: payouts saved but not yet confirmed by the partner (a client retry settles
  // them), and payouts the partner refused.
  int pending = 0;
  int rejected = 0;
  std::vector<std::string> details;  // one line per finding or pending payout
  std::vector<Finding> findings;     // duplicates, missing payouts and amount differences

  int finding_count() const {
    return duplicates + missing + amount_differences + unknown_transfers;
  }
  bool clean() const { return finding_count() == 0; }
};

// Matches every payout in `db` to `transfers` (the partner's list, oldest first). Throws
// Error(storage).
ReconcileReport reconcile(db::Database& db, const std::vector<PartnerTransfer>& transfers);

// Reads every payout from `db` and every transfer from the partner. Throws Error(storage) or
// Error(io).
ReconcileReport reconcile(db::Database& db, PartnerClient& partner);

// The report as `name: count` lines, then the details, then `result: clean` or
// `result: N findings`.
void print(const ReconcileReport& report, std::ostream& out);

// {"payouts":..,"transfers":..,"reversed":..,"matched":..,"duplicates":..,"missing":..,
//  "amount_differences":..,"unknown_transfers":..,"pending":..,"rejected":..,"details":[...],
//  "result":"clean" | "N findings"}
nlohmann::json to_json(const ReconcileReport& report);

}  // namespace webhooks::orders
