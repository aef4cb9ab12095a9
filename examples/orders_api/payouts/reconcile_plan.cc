#include "payouts/reconcile_plan.h"

#include <algorithm>
#include <array>
#include <map>
#include <ostream>

namespace webhooks::orders {
namespace {

constexpr std::string_view kInsertReconciliation =
    "INSERT INTO reconciliations (id, payout_id, action, transfer_id, kept_transfer_id,"
    " idempotency_key, amount, currency, state, result, created_at, updated_at)"
    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'planned', NULL, $9, $9) ON CONFLICT DO NOTHING";
constexpr std::string_view kPlanned =
    "SELECT id, payout_id, action, transfer_id, kept_transfer_id, idempotency_key, amount,"
    " currency, state, result FROM reconciliations WHERE state = 'planned' ORDER BY id";

constexpr std::string_view kFailed =
    "SELECT id FROM reconciliations WHERE action = $1 AND idempotency_key = $2 AND state = 'failed'"
    " ORDER BY id LIMIT 1";

}  // namespace

nlohmann::json to_json(const Step& s) {
  return {{"id", s.id},
          {"payout_id", s.payout_id},
          {"action", s.action},
          {"transfer_id", s.transfer_id},
          {"kept_transfer_id", s.kept_transfer_id},
          {"idempotency_key", s.key},
          {"amount", s.amount},
          {"currency", s.currency},
          {"state", s.state},
          {"result", s.result}};
}

std::vector<Step> plan_steps(const ReconcileReport& report,
                             const std::vector<PartnerTransfer>& transfers, UuidV7Generator& ids) {
  std::map<std::string, const PartnerTransfer*> by_id;
  for (const PartnerTransfer& t : transfers) by_id[t.id] = &t;
  std::vector<Step> steps;
  for (const Finding& f : report.findings) {
    if (f.kind == "missing") {
      steps.push_back({"rc_" + ids.next(), f.payout_id, "resubmit", "", "", f.downstream_key,
                       f.amount, f.currency, "planned", ""});
    } else if (f.kind == "duplicate") {
      for (std::size_t i = 1; i < f.transfer_ids.size(); ++i) {
        const PartnerTransfer& t = *by_id.at(f.transfer_ids[i]);
        steps.push_back({"rc_" + ids.next(), f.payout_id, "reverse", t.id, f.transfer_ids[0],
                         "kxr-" + t.id, t.amount, t.currency, "planned", ""});
      }
    }
  }
  return steps;
}

std::vector<Step> save_plan(db::Database& db, const std::vector<Step>& steps, UnixMillis now) {
  std::vector<Step> saved;
  db.transact([&](db::Transaction& tx) {
    saved.clear();
    for (const Step& s : steps) {
      // A step an earlier run recorded as failed (the partner refused it) that this report plans
      // again is tried again, under the same key.
      const db::Rows failed = tx.exec(kFailed, {s.action, s.key});
      if (!failed.empty()) {
        tx.exec(
            "UPDATE reconciliations SET state = 'planned', result = NULL, updated_at = $1"
            " WHERE id = $2",
            {now, failed.text(0, 0)});
        Step again = s;
        again.id = failed.text(0, 0);
        saved.push_back(std::move(again));
        continue;
      }
      const db::Rows inserted =
          tx.exec(kInsertReconciliation,
                  {s.id, s.payout_id, s.action, db::text_or_null(s.transfer_id),
                   db::text_or_null(s.kept_transfer_id), s.key, s.amount, s.currency, now});
      if (inserted.affected() == 1) saved.push_back(s);
    }
  });
  return saved;
}

std::vector<Step> planned_steps(db::Database& db) {
  const db::Rows rows = db.exec(kPlanned);
  std::vector<Step> steps;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    steps.push_back({rows.text(i, 0), rows.text(i, 1), rows.text(i, 2), rows.text(i, 3),
                     rows.text(i, 4), rows.text(i, 5), rows.integer(i, 6), rows.text(i, 7),
                     rows.text(i, 8), rows.text(i, 9)});
  }
  return steps;
}

void finish_step(db::Database& db, const Step& s, UnixMillis now) {
  db.transact([&](db::Transaction& tx) {
    tx.exec(
        "UPDATE reconciliations SET state = $1, result = $2, transfer_id = $3, updated_at = $4"
        " WHERE id = $5",
        {s.state, s.result, db::text_or_null(s.transfer_id), now, s.id});
    if (s.state != "done") return;
    if (s.action == "reverse") {
      tx.exec(
          "UPDATE payouts SET transfer_id = $1, updated_at = $2"
          " WHERE id = $3 AND transfer_id = $4",
          {s.kept_transfer_id, now, s.payout_id, s.transfer_id});
    } else {
      tx.exec("UPDATE payouts SET transfer_id = $1, updated_at = $2 WHERE id = $3",
              {s.transfer_id, now, s.payout_id});
    }
  });
}

void print_steps(const std::vector<Step>& steps, std::ostream& out) {
  std::vector<std::array<std::string, 7>> rows = {
      {"action", "payout", "transfer", "key", "amount", "state", "result"}};
  for (const Step& s : steps) {
    rows.push_back({s.action, s.payout_id, s.transfer_id.empty() ? "-" : s.transfer_id, s.key,
                    std::to_string(s.amount) + " " + s.currency, s.state,
                    s.result.empty() ? "-" : s.result});
  }
  std::array<std::size_t, 7> width{};
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(width[c] - row[c].size() + 2, ' ');
    }
    out << line << "\n";
  }
}

}  // namespace webhooks::orders
