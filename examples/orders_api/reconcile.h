// `orders-api reconcile`: matches our payouts to the partner's transfers by downstream key and
// amount, the check that proves no payout was lost or doubled.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "partner_client.h"
#include "webhooks/db.h"

namespace webhooks::orders {

struct ReconcileReport {
  int payouts = 0;    // payouts in our database
  int transfers = 0;  // transfers the partner holds
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

  bool clean() const {
    return duplicates == 0 && missing == 0 && amount_differences == 0 && unknown_transfers == 0;
  }
};

// Reads every payout from `db` and every transfer from the partner. Throws Error(storage) or
// Error(io).
ReconcileReport reconcile(db::Database& db, PartnerClient& partner);

// The report as `name: count` lines, then the details, then `result: clean` or
// `result: N findings`.
void print(const ReconcileReport& report, std::ostream& out);

}  // namespace webhooks::orders
