// The demo's invariants: every order and payout created once with one id, one event per order and
// payout with exactly one effect at the merchant, one transfer per payout at the partner, every
// delivery task succeeded, and reconcile clean. Each failure is one line that says what differs.
#include <map>

#include "clients.h"
#include "demo_run.h"

namespace webhooks::demo {
namespace {

using nlohmann::json;

// The failures found, at most 20.
class Findings {
 public:
  void fail(const std::string& what) {
    if (lines_.size() < 20) lines_.push_back(what);
  }
  std::vector<std::string> take() { return std::move(lines_); }

 private:
  std::vector<std::string> lines_;
};

// The order and payout events by data.id (the order or payout they are about).
using Subjects = std::map<std::string, std::vector<const EventRecord*>>;

// One logical request: created once, one id, one event of its type with one effect, and for a
// payout one transfer at the partner.
void check_request(const Request& r, const Subjects& subjects, const json& transfers,
                   Findings& out) {
  const std::string what = (r.kind == Kind::order ? "order " : "payout ") + r.key;
  if (r.created != 1) {
    out.fail(what + ": created " + std::to_string(r.created) + " times (want exactly once)");
  }
  if (r.ids.size() != 1) {
    out.fail(what + ": answers carried " + std::to_string(r.ids.size()) + " different ids");
    return;
  }
  const std::string& id = *r.ids.begin();
  const std::string type = r.kind == Kind::order ? "order.created" : "payout.created";
  const auto it = subjects.find(id);
  int count = 0;
  if (it != subjects.end()) {
    for (const EventRecord* e : it->second) {
      if (e->type != type) continue;
      ++count;
      if (e->effects != 1) {
        out.fail(what + ": event " + e->event_id + " has " + std::to_string(e->effects) +
                 " effects at the merchant (want 1)");
      }
    }
  }
  if (count == 0) out.fail(what + " (" + id + "): no " + type + " event reached the merchant");
  if (count > 1) {
    out.fail(what + " (" + id + "): " + std::to_string(count) + " " + type + " events");
  }
  if (r.kind != Kind::payout) return;
  int held = 0;
  for (const json& t : transfers) {
    if (t.value("idempotency_key", "") == r.downstream_key) ++held;
  }
  if (held != 1) {
    out.fail(what + ": the partner holds " + std::to_string(held) + " transfers for " +
             r.downstream_key + " (want 1)");
  }
}

// Every event the merchant saw: one effect for ours, and every delivery task succeeded.
void check_events(const std::map<std::string, EventRecord>& events, Findings& out) {
  for (const auto& [id, r] : events) {
    if (ours(r.type) && r.effects != 1) {
      out.fail("event " + id + " (" + r.type + "): effects = " + std::to_string(r.effects));
    }
    for (const std::string& state : r.task_states) {
      if (state != "succeeded") out.fail("event " + id + ": a delivery task is " + state);
    }
  }
}

// The totals: events accepted and handled, transfers, and reconcile.
void check_totals(const Figures& f, const Options& o, const std::filesystem::path& work,
                  Findings& out) {
  const long expected_events = o.orders + o.payouts;
  if (f.events_accepted != expected_events) {
    out.fail("the publisher accepted " + std::to_string(f.events_accepted) + " events (want " +
             std::to_string(expected_events) + ": one per order and payout)");
  }
  if (f.events_handled != expected_events) {
    out.fail("the merchant saw " + std::to_string(f.events_handled) +
             " order/payout events (want " + std::to_string(expected_events) + ")");
  }
  if (f.transfers != o.payouts) {
    out.fail("the partner holds " + std::to_string(f.transfers) + " transfers for " +
             std::to_string(o.payouts) + " payouts");
  }
  if (f.reconcile_exit != 0 || f.reconcile_result != "clean") {
    out.fail("orders-api reconcile: " + f.reconcile_result + " (see " +
             (work / "reconcile.out").string() + ")");
  }
  if (f.immature_duplicates != f.immature_payouts || f.immature_resolve_exit != 0 ||
      f.immature_reconcile_exit != 0 || f.immature_reversed != f.immature_payouts ||
      f.immature_result != "clean") {
    out.fail("the immature partner: " + std::to_string(f.immature_duplicates) +
             " duplicates found, reconcile --resolve exit " +
             std::to_string(f.immature_resolve_exit) + ", " + std::to_string(f.immature_reversed) +
             " reversed, then " + f.immature_result + " (see " +
             (work / "reconcile-resolve.out").string() + ")");
  }
}

}  // namespace

std::vector<std::string> Demo::verify() const {
  Findings findings;
  Subjects subjects;
  for (const auto& [id, r] : events_) {
    if (ours(r.type)) subjects[r.subject_id].push_back(&r);
  }
  for (const Request& r : driver_->requests()) check_request(r, subjects, transfers_, findings);
  check_events(events_, findings);
  check_totals(f_, o_, work_, findings);
  return findings.take();
}

}  // namespace webhooks::demo
