#include "report/report.h"

#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace webhooks::demo {
namespace {

void row(const std::string& label, const std::string& value, const std::string& note = "") {
  std::cout << "  " << std::left << std::setw(40) << label << std::right << std::setw(9) << value
            << (note.empty() ? "" : "   " + note) << "\n";
}

std::string n(long v) { return std::to_string(v); }

// What the clients of the orders API saw.
void print_client_rows(const Figures& f) {
  const DriverStats& c = f.client;
  row("orders requested", n(f.orders_requested));
  row("payouts requested", n(f.payouts_requested));
  row("resends with the same Idempotency-Key", n(c.resends_concurrent + c.resends_after),
      n(c.resends_concurrent) + " together with the original, " + n(c.resends_after) + " after it");
  row("  absorbed as replays", n(c.replayed), "the stored answer, Idempotent-Replayed: true");
  row("  absorbed as 409 in progress", n(c.in_progress),
      "idempotency_key_in_use: the other request held the lease");
  if (c.client_retries > 0) {
    std::string why;
    for (const auto& [code, count] : c.server_error_codes) {
      why += (why.empty() ? "" : ", ") + n(count) + " x " + code;
    }
    if (c.no_answer > 0) why += (why.empty() ? "" : ", ") + n(c.no_answer) + " x no answer";
    row("  client retries (same key)", n(c.client_retries), why.empty() ? "" : "after " + why);
  }
  row("orders created", n(f.orders_created), "one per key; every answer for a key had the same id");
}

// What the publisher, the merchant, the partner and reconcile saw.
void print_delivery_rows(const Figures& f) {
  row("events accepted by the publisher", n(f.events_accepted),
      "order.created + payout.created, from the outbox relay");
  row("delivery attempts", n(f.attempts));
  row("  retries", n(f.retries),
      n(f.failed_answers) + " x 5xx from the handler, " + n(f.no_answers) + " x no answer, " +
          n(f.in_progress_answers) + " x 409 in progress");
  row("events handled by the merchant", n(f.events_handled),
      n(f.events_one_effect) + " with effects = 1");
  row("  handler calls", n(f.handler_calls),
      n(f.handler_calls - f.events_one_effect) + " failed or crashed, then retried");
  row("duplicate deliveries suppressed", n(f.duplicates_suppressed),
      n(f.duplicates_after_success) + " after success (" + n(f.operator_replays) +
          " operator replays), " + n(f.in_progress_answers) + " x 409 while in progress");
  row("merchant receiver crashes / restarts",
      n(f.receiver_crashes) + " / " + n(f.receiver_restarts), "SIGKILL inside a handler");
  row("payouts created", n(f.payouts_created), "one per key, each through the partner");
  row("partner transfers", n(f.transfers),
      n(f.payouts_one_transfer) + " payouts with exactly one; " + n(f.partner_drops) +
          " answers dropped after commit");
  row("reconcile", f.reconcile_result, f.reconcile_detail);
  row("immature partner, reconcile --resolve", f.immature_result,
      n(f.immature_payouts) + " payouts doubled: " + n(f.immature_duplicates) +
          " duplicates found, " + n(f.immature_reversed) + " reversed, then reconcile");
}

}  // namespace

void print_table(const Figures& f, const std::vector<std::string>& failures) {
  std::cout << "\n  " << std::string(100, '-') << "\n";
  print_client_rows(f);
  print_delivery_rows(f);
  std::cout << "  " << std::string(100, '-') << "\n";
  std::ostringstream times;
  times << std::fixed << std::setprecision(1) << "load " << f.load_seconds << " s, deliveries "
        << f.delivery_seconds << " s, servers stopped in " << f.stop_seconds << " s, total "
        << f.total_seconds << " s";
  std::cout << "  " << times.str() << "\n\n";
  if (failures.empty()) {
    std::cout << "  OK: every order and payout event had exactly one effect at the merchant, and\n"
                 "  the partner holds exactly one transfer per payout.\n";
  } else {
    std::cout << "  FAILED:\n";
    for (const std::string& line : failures) std::cout << "  - " << line << "\n";
  }
  std::cout << std::flush;
}

void write_summary(const std::filesystem::path& path, const Figures& f,
                   const std::vector<std::string>& failures) {
  if (path.empty()) return;
  const DriverStats& c = f.client;
  const nlohmann::json summary{{"ok", failures.empty()},
                               {"failures", failures},
                               {"orders_requested", f.orders_requested},
                               {"payouts_requested", f.payouts_requested},
                               {"resends", c.resends_concurrent + c.resends_after},
                               {"resends_concurrent", c.resends_concurrent},
                               {"resends_after", c.resends_after},
                               {"answers_replayed", c.replayed},
                               {"answers_in_progress", c.in_progress},
                               {"client_retries", c.client_retries},
                               {"orders_created", f.orders_created},
                               {"payouts_created", f.payouts_created},
                               {"events_accepted", f.events_accepted},
                               {"attempts", f.attempts},
                               {"retries", f.retries},
                               {"events_handled", f.events_handled},
                               {"events_with_one_effect", f.events_one_effect},
                               {"handler_calls", f.handler_calls},
                               {"duplicates_suppressed", f.duplicates_suppressed},
                               {"operator_replays", f.operator_replays},
                               {"receiver_crashes", f.receiver_crashes},
                               {"receiver_restarts", f.receiver_restarts},
                               {"partner_transfers", f.transfers},
                               {"payouts_with_one_transfer", f.payouts_one_transfer},
                               {"reconcile_exit_code", f.reconcile_exit},
                               {"reconcile_result", f.reconcile_result},
                               {"immature_payouts", f.immature_payouts},
                               {"immature_duplicates", f.immature_duplicates},
                               {"immature_resolve_exit_code", f.immature_resolve_exit},
                               {"immature_reversed", f.immature_reversed},
                               {"immature_reconcile_result", f.immature_result},
                               {"seconds", f.total_seconds}};
  std::ofstream out(path);
  out << summary.dump(2) << "\n";
  if (!out) std::cerr << "webhooks-demo: cannot write " << path << "\n";
}

}  // namespace webhooks::demo
