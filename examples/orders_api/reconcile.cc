#include "reconcile.h"

#include <map>

namespace webhooks::orders {

ReconcileReport reconcile(db::Database& db, PartnerClient& partner) {
  const db::Rows payouts = db.exec(
      "SELECT id, downstream_key, amount, currency, status, transfer_id FROM payouts"
      " ORDER BY created_at, id");
  const std::vector<PartnerTransfer> transfers = partner.list_transfers();
  std::map<std::string, std::vector<const PartnerTransfer*>> by_key;
  for (const PartnerTransfer& t : transfers) by_key[t.idempotency_key].push_back(&t);

  ReconcileReport report;
  report.payouts = static_cast<int>(payouts.size());
  report.transfers = static_cast<int>(transfers.size());
  for (std::size_t i = 0; i < payouts.size(); ++i) {
    const std::string& id = payouts.text(i, 0);
    const std::string& key = payouts.text(i, 1);
    const std::string& status = payouts.text(i, 4);
    std::vector<const PartnerTransfer*> found;
    if (auto it = by_key.find(key); it != by_key.end()) {
      found = std::move(it->second);
      by_key.erase(it);
    }
    const std::string where = " payout=" + id + " downstream_key=" + key;
    if (found.size() > 1) {
      ++report.duplicates;
      std::string ids;
      for (const auto* t : found) ids += (ids.empty() ? "" : ",") + t->id;
      report.details.push_back("duplicate" + where + " transfers=" + ids);
    } else if (found.empty()) {
      if (status == "submitted") {
        ++report.missing;
        report.details.push_back("missing" + where);
      } else if (status == "rejected") {
        ++report.rejected;
      } else {
        ++report.pending;
        report.details.push_back("pending" + where + " transfer=none");
      }
    } else if (found[0]->amount != payouts.integer(i, 2) ||
               found[0]->currency != payouts.text(i, 3)) {
      ++report.amount_differences;
      report.details.push_back(
          "amount_difference" + where + " payout_amount=" + std::to_string(payouts.integer(i, 2)) +
          " " + payouts.text(i, 3) + " transfer_amount=" + std::to_string(found[0]->amount) + " " +
          found[0]->currency);
    } else if (status == "pending") {
      // The partner committed but we never learnt it: the client's retry will settle it.
      ++report.pending;
      report.details.push_back("pending" + where + " transfer=" + found[0]->id);
    } else {
      ++report.matched;
    }
  }
  for (const auto& [key, rest] : by_key) {
    for (const auto* t : rest) {
      ++report.unknown_transfers;
      report.details.push_back("unknown_transfer transfer=" + t->id + " idempotency_key=" + key);
    }
  }
  return report;
}

void print(const ReconcileReport& report, std::ostream& out) {
  out << "payouts: " << report.payouts << "\n"
      << "transfers: " << report.transfers << "\n"
      << "matched: " << report.matched << "\n"
      << "duplicates: " << report.duplicates << "\n"
      << "missing: " << report.missing << "\n"
      << "amount_differences: " << report.amount_differences << "\n"
      << "unknown_transfers: " << report.unknown_transfers << "\n"
      << "pending: " << report.pending << "\n"
      << "rejected: " << report.rejected << "\n";
  for (const std::string& line : report.details) out << line << "\n";
  const int findings =
      report.duplicates + report.missing + report.amount_differences + report.unknown_transfers;
  if (findings == 0) {
    out << "result: clean\n";
  } else {
    out << "result: " << findings << (findings == 1 ? " finding" : " findings") << "\n";
  }
  out.flush();
}

}  // namespace webhooks::orders
