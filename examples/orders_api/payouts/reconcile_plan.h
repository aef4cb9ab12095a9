// The plan of `orders-api reconcile --resolve`, kept in the `reconciliations` table
// (schema/orders_api/): each step is committed as `planned` before the partner is called, so a run
// killed midway leaves its unfinished steps for the next run to finish with the same keys.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "payouts/reconcile.h"
#include "webhooks/clock.h"
#include "webhooks/db.h"
#include "webhooks/uuid.h"

namespace webhooks::orders {

struct Step {
  std::string id;         // "rc_" + UUIDv7: steps run in id order
  std::string payout_id;  // the payout it settles
  std::string action;     // "reverse" (a duplicate transfer) or "resubmit" (a missing one)
  // reverse: the duplicate, reversed under key kxr-<transfer_id>; resubmit: "" until done, then
  // the new transfer.
  std::string transfer_id;
  std::string kept_transfer_id;  // reverse: the payout's first (oldest) transfer, kept
  std::string key;               // X-Idempotency-Key sent: kxr-<transfer_id>, or the downstream key
  std::int64_t amount = 0;       // minor units: the reversed transfer's, or the payout's
  std::string currency;
  std::string state;   // "planned", "done", "failed"
  std::string result;  // done: the reversal's or the transfer's id; failed: the partner's error
};

// {"id","payout_id","action","transfer_id","kept_transfer_id","idempotency_key","amount",
//  "currency","state","result"}
nlohmann::json to_json(const Step& step);

// The steps that settle `report`'s duplicates (keep the first transfer, reverse each other one)
// and missing payouts (re-submit under the downstream key), state "planned", ids from `ids`.
// Amount differences and unknown transfers get none: they need a human.
std::vector<Step> plan_steps(const ReconcileReport& report,
                             const std::vector<PartnerTransfer>& transfers, UuidV7Generator& ids);

// Inserts `steps` in one transaction; a reversal of a transfer already in the table is skipped
// (one per transfer), but a step recorded `failed` by an earlier run (the partner refused it) is
// planned again, keeping its id and key. Returns the steps to carry out. Throws Error(storage).
std::vector<Step> save_plan(db::Database& db, const std::vector<Step>& steps, UnixMillis now);

// The steps still `planned`, in id order. Throws Error(storage), also when the table is absent.
std::vector<Step> planned_steps(db::Database& db);

// Records the step's outcome (state "done" or "failed", result) and, when done, points the
// payout at the transfer it keeps. Throws Error(storage).
void finish_step(db::Database& db, const Step& step, UnixMillis now);

// The steps as an aligned table: action, payout, transfer, key, amount, state, result.
void print_steps(const std::vector<Step>& steps, std::ostream& out);

}  // namespace webhooks::orders
