#include "payouts/resolve.h"

#include <signal.h>

#include <set>

#include "payouts/reconcile.h"
#include "payouts/reconcile_plan.h"
#include "schema.h"
#include "webhooks/error.h"
#include "webhooks/idempotency/schema.h"
#include "webhooks/log.h"

namespace webhooks::orders {
namespace {

// One --resolve run: the partner, the database, and the calls made so far (for the test hook).
class Resolver {
 public:
  Resolver(db::Database& db, PartnerClient& partner, const ReconcileOptions& options)
      : db_(db), partner_(partner), options_(options), ids_(system_clock()) {}

  // Carries out `step` and records its outcome; false (step left planned) when the partner could
  // not be reached. A resubmit whose key already has a transfer in `transfers` is done uncalled.
  bool execute(Step& step, const std::vector<PartnerTransfer>& transfers) {
    if (step.action == "reverse") {
      const ReversalResult r = partner_.reverse_transfer(step.transfer_id, step.key);
      called();
      if (r.kind == ReversalResult::Kind::unavailable) return false;
      const bool reversed = r.kind == ReversalResult::Kind::reversed;
      step.state = reversed ? "done" : "failed";
      step.result = reversed ? r.reversal_id : r.error;
    } else if (const PartnerTransfer* t = active_transfer(transfers, step.key)) {
      step.state = "done";  // an earlier run's call reached the partner
      step.transfer_id = step.result = t->id;
    } else {
      const db::Rows payout =
          db_.exec("SELECT destination FROM payouts WHERE id = $1", {step.payout_id});
      const TransferResult r =
          partner_.create_transfer(step.key, step.amount, step.currency, payout.text(0, 0));
      called();
      if (r.kind == TransferResult::Kind::unavailable) return false;
      const bool accepted = r.kind == TransferResult::Kind::accepted;
      step.state = accepted ? "done" : "failed";
      step.transfer_id = accepted ? r.transfer_id : "";
      step.result = accepted ? r.transfer_id : r.error;
    }
    finish_step(db_, step, system_clock().now_ms());
    log_event(spdlog::level::info, {{"event", "reconciliation_step"},
                                    {"step", step.id},
                                    {"action", step.action},
                                    {"state", step.state},
                                    {"result", step.result}});
    return true;
  }

  // Runs `steps` in order; false when one could not reach the partner (the rest stay planned).
  bool execute_all(std::vector<Step>& steps, const std::vector<PartnerTransfer>& transfers) {
    for (Step& step : steps) {
      if (!execute(step, transfers)) return false;
    }
    return true;
  }

  void crash_if(int calls) const {
    if (options_.crash_after_partner_calls == calls) ::raise(SIGKILL);
  }

  UuidV7Generator& ids() { return ids_; }

 private:
  static const PartnerTransfer* active_transfer(const std::vector<PartnerTransfer>& transfers,
                                                const std::string& key) {
    for (const PartnerTransfer& t : transfers) {
      if (t.idempotency_key == key && t.reversed_by.empty()) return &t;
    }
    return nullptr;
  }
  void called() { crash_if(++calls_); }

  db::Database& db_;
  PartnerClient& partner_;
  const ReconcileOptions& options_;
  UuidV7Generator ids_;
  int calls_ = 0;
};

// The planned steps, or none when the table does not exist yet (a dry run writes nothing, not
// even the migration).
std::vector<Step> planned_or_none(db::Database& db) {
  try {
    return planned_steps(db);
  } catch (const Error&) {
    return {};
  }
}

void output(const ReconcileOptions& options, const std::vector<Step>& steps,
            const ReconcileReport& report, std::ostream& out) {
  if (options.json) {
    nlohmann::json plan = nlohmann::json::array();
    for (const Step& s : steps) plan.push_back(to_json(s));
    nlohmann::json doc = options.resolve ? nlohmann::json{{"dry_run", options.dry_run},
                                                          {"plan", plan},
                                                          {"report", to_json(report)}}
                                         : to_json(report);
    out << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    out.flush();
    return;
  }
  if (options.resolve) {
    const std::size_t n = steps.size();
    out << (options.dry_run ? "plan (dry run): " : "plan: ") << n << (n == 1 ? " step" : " steps")
        << "\n";
    if (n > 0) print_steps(steps, out);
    out << "\n";
  }
  print(report, out);
}

int exit_code(const ReconcileReport& report, bool unavailable) {
  if (unavailable) return kReconcileError;
  return report.clean() ? kReconcileClean : kReconcileFindings;
}

}  // namespace

// Without --resolve: the report. With it: finish the earlier plan, plan what the report finds,
// commit that plan, carry it out, and report again.
int reconcile_command(const ReconcileOptions& options, std::ostream& out) {
  auto db = db::Database::open(options.db);
  PartnerOptions partner_options;
  partner_options.url = options.partner_url;
  partner_options.timeout = std::chrono::milliseconds(options.timeout_ms);
  partner_options.attempts = 1;
  PartnerClient partner(partner_options);
  if (!options.resolve) {
    const ReconcileReport report = reconcile(*db, partner);
    output(options, {}, report, out);
    return exit_code(report, false);
  }
  // The idempotency records first: an orders_api migration moves orders-api's into its scope.
  if (!options.dry_run) db->migrate({idempotency::schema(), schema()}, system_clock().now_ms());
  Resolver resolver(*db, partner, options);
  std::vector<Step> steps = options.dry_run ? planned_or_none(*db) : planned_steps(*db);
  std::vector<PartnerTransfer> transfers = partner.list_transfers();
  if (!options.dry_run && !resolver.execute_all(steps, transfers)) {
    output(options, steps, reconcile(*db, transfers), out);
    return kReconcileError;
  }
  transfers = partner.list_transfers();
  const ReconcileReport before = reconcile(*db, transfers);
  std::vector<Step> planned = plan_steps(before, transfers, resolver.ids());
  if (options.dry_run) {
    std::set<std::string> keys;
    for (const Step& s : steps) keys.insert(s.key);
    for (Step& s : planned) {
      if (!keys.contains(s.key)) steps.push_back(std::move(s));
    }
    output(options, steps, before, out);
    return exit_code(before, false);
  }
  planned = save_plan(*db, planned, system_clock().now_ms());
  resolver.crash_if(0);
  const bool reached = resolver.execute_all(planned, transfers);
  steps.insert(steps.end(), planned.begin(), planned.end());
  // The partner unreachable midway: the steps left planned are the next run's; the report is the
  // one the plan came from.
  const ReconcileReport after = reached ? reconcile(*db, partner) : before;
  output(options, steps, after, out);
  return exit_code(after, !reached);
}

}  // namespace webhooks::orders
