#include "payouts/reconcile.h"

#include <algorithm>
#include <map>
#include <set>

namespace webhooks::orders {
namespace {

std::string result_text(const ReconcileReport& report) {
  const int findings = report.finding_count();
  if (findings == 0) return "clean";
  return std::to_string(findings) + (findings == 1 ? " finding" : " findings");
}

// True when every transfer has the payout's amount and currency.
bool amounts_match(const Finding& f, const std::vector<const PartnerTransfer*>& found) {
  return std::all_of(found.begin(), found.end(), [&](const PartnerTransfer* t) {
    return t->amount == f.amount && t->currency == f.currency;
  });
}

// Classifies one payout given its transfers not reversed (oldest first, but the one the payout
// records first: its client was told that one) and whether the partner reversed any of its key.
void classify(ReconcileReport& report, const db::Rows& payouts, std::size_t i,
              std::vector<const PartnerTransfer*> found, bool reversed_any) {
  const std::string& id = payouts.text(i, 0);
  const std::string& key = payouts.text(i, 1);
  const std::string& status = payouts.text(i, 4);
  const std::string& recorded = payouts.text(i, 5);
  std::stable_partition(found.begin(), found.end(),
                        [&](const PartnerTransfer* t) { return t->id == recorded; });
  Finding finding{"", id, key, payouts.text(i, 3), payouts.integer(i, 2), {}};
  for (const auto* t : found) finding.transfer_ids.push_back(t->id);
  const std::string where = " payout=" + id + " downstream_key=" + key;
  if (found.size() > 1 && !amounts_match(finding, found)) {
    // Which one to keep is a human's call: reversing could keep the wrong amount.
    ++report.amount_differences;
    std::string amounts;
    for (const auto* t : found) {
      amounts += (amounts.empty() ? "" : ",") + t->id + "=" + std::to_string(t->amount) + " " +
                 t->currency;
    }
    report.details.push_back("amount_difference" + where +
                             " payout_amount=" + std::to_string(finding.amount) + " " +
                             finding.currency + " transfers=" + amounts);
    finding.kind = "amount_difference";
  } else if (found.size() > 1) {
    ++report.duplicates;
    std::string ids;
    for (const auto* t : found) ids += (ids.empty() ? "" : ",") + t->id;
    report.details.push_back("duplicate" + where + " transfers=" + ids);
    finding.kind = "duplicate";
  } else if (found.empty()) {
    if (status == "submitted" && reversed_any) {
      // Its transfer was reversed at the partner: re-submitting under the same key would only
      // replay the reversed one. A human decides.
      ++report.missing;
      report.details.push_back("missing" + where + " reversed_at_partner=true");
      finding.kind = "missing_reversed";
    } else if (status == "submitted") {
      ++report.missing;
      report.details.push_back("missing" + where);
      finding.kind = "missing";
    } else if (status == "rejected") {
      ++report.rejected;
    } else {
      ++report.pending;
      report.details.push_back("pending" + where + " transfer=none");
    }
  } else if (found[0]->amount != finding.amount || found[0]->currency != finding.currency) {
    ++report.amount_differences;
    report.details.push_back(
        "amount_difference" + where + " payout_amount=" + std::to_string(finding.amount) + " " +
        finding.currency + " transfer_amount=" + std::to_string(found[0]->amount) + " " +
        found[0]->currency);
    finding.kind = "amount_difference";
  } else if (status == "pending") {
    // The partner committed but we never learnt it: the client's retry will settle it.
    ++report.pending;
    report.details.push_back("pending" + where + " transfer=" + found[0]->id);
  } else {
    ++report.matched;
  }
  if (!finding.kind.empty()) report.findings.push_back(std::move(finding));
}

}  // namespace

ReconcileReport reconcile(db::Database& db, const std::vector<PartnerTransfer>& transfers) {
  const db::Rows payouts = db.exec(
      "SELECT id, downstream_key, amount, currency, status, transfer_id FROM payouts"
      " ORDER BY created_at, id");
  ReconcileReport report;
  std::map<std::string, std::vector<const PartnerTransfer*>> by_key;
  std::set<std::string> reversed_keys;
  for (const PartnerTransfer& t : transfers) {
    if (t.reversed_by.empty()) {
      by_key[t.idempotency_key].push_back(&t);
    } else {
      ++report.reversed;
      reversed_keys.insert(t.idempotency_key);
    }
  }
  report.payouts = static_cast<int>(payouts.size());
  report.transfers = static_cast<int>(transfers.size());
  for (std::size_t i = 0; i < payouts.size(); ++i) {
    std::vector<const PartnerTransfer*> found;
    if (auto it = by_key.find(payouts.text(i, 1)); it != by_key.end()) {
      found = std::move(it->second);
      by_key.erase(it);
    }
    classify(report, payouts, i, std::move(found), reversed_keys.contains(payouts.text(i, 1)));
  }
  for (const auto& [key, rest] : by_key) {
    for (const auto* t : rest) {
      ++report.unknown_transfers;
      report.details.push_back("unknown_transfer transfer=" + t->id + " idempotency_key=" + key);
    }
  }
  return report;
}

ReconcileReport reconcile(db::Database& db, PartnerClient& partner) {
  return reconcile(db, partner.list_transfers());
}

void print(const ReconcileReport& report, std::ostream& out) {
  out << "payouts: " << report.payouts << "\n"
      << "transfers: " << report.transfers << "\n"
      << "reversed: " << report.reversed << "\n"
      << "matched: " << report.matched << "\n"
      << "duplicates: " << report.duplicates << "\n"
      << "missing: " << report.missing << "\n"
      << "amount_differences: " << report.amount_differences << "\n"
      << "unknown_transfers: " << report.unknown_transfers << "\n"
      << "pending: " << report.pending << "\n"
      << "rejected: " << report.rejected << "\n";
  for (const std::string& line : report.details) out << line << "\n";
  out << "result: " << result_text(report) << "\n";
  out.flush();
}

nlohmann::json to_json(const ReconcileReport& r) {
  return {{"payouts", r.payouts},
          {"transfers", r.transfers},
          {"reversed", r.reversed},
          {"matched", r.matched},
          {"duplicates", r.duplicates},
          {"missing", r.missing},
          {"amount_differences", r.amount_differences},
          {"unknown_transfers", r.unknown_transfers},
          {"pending", r.pending},
          {"rejected", r.rejected},
          {"details", r.details},
          {"result", result_text(r)}};
}

}  // namespace webhooks::orders
