// The demo's last phase: the payout partner turns immature (--ignore-idempotency-key) and loses
// the answer to one transfer of each of kImmaturePayouts payouts (restarted with
// --drop-after-commit 1 before each), so orders-api's retry doubles them; `orders-api reconcile`
// finds the duplicates, `reconcile --resolve` reverses them, and a last `reconcile` is clean.
#include <sstream>

#include "clients.h"
#include "demo_run.h"

namespace webhooks::demo {
namespace {

constexpr int kImmaturePayouts = 3;

// The number on the `name: N` line of a reconcile report, -1 when absent.
int count_line(const std::string& out, const std::string& name) {
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with(name + ": ")) return std::atoi(line.c_str() + name.size() + 2);
  }
  return -1;
}

std::string result_line(const launcher::Finished& rec) {
  std::istringstream lines(rec.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("result: ")) return line.substr(8);
  }
  return "exit code " + std::to_string(rec.exit_code);
}

}  // namespace

launcher::Finished Demo::run_reconcile(const std::string& name, std::vector<std::string> extra) {
  launcher::Options options;
  options.label = "orders-api reconcile";
  options.out_path = work_ / (name + ".out");
  options.err_path = work_ / (name + ".log");
  std::vector<std::string> args = {
      "reconcile", "--db", (work_ / "orders.db").string(), "--partner-url",
      "http://" + std::string(kHost) + ":" + std::to_string(partner_port_)};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now());
  return launcher::run_to_end(bin("orders-api"), args, work_, options,
                              std::max(left, std::chrono::milliseconds(0)));
}

void Demo::immature_phase() {
  const std::vector<std::string> base = {"--listen",
                                         std::string(kHost) + ":" + std::to_string(partner_port_),
                                         "--db",
                                         (work_ / "partner.db").string(),
                                         "--ignore-idempotency-key",
                                         "--drop-after-commit",
                                         "1"};
  auto orders = client_for(orders_port_, api_key_);
  for (int i = 1; i <= kImmaturePayouts; ++i) {
    check();
    partner_->stop();
    partner_->set_args(base);
    partner_->restart();
    partner_->wait_listening(deadline_);
    const std::string body = R"({"amount":)" + std::to_string(2000 + i) +
                             R"(,"currency":"EUR","destination":"NL91ABNA0417164300"})";
    const auto res =
        orders->Post("/payouts", {{"Idempotency-Key", "immature-" + std::to_string(i)}}, body,
                     "application/json");
    if (!res || res->status != 201) {
      throw Failure(
          "POST /payouts to the immature partner: " +
          (res ? std::to_string(res->status) + " " + res->body : httplib::to_string(res.error())));
    }
    ++f_.immature_payouts;
  }
  const launcher::Finished found = run_reconcile("reconcile-immature", {});
  f_.immature_duplicates = count_line(found.out, "duplicates");
  const launcher::Finished resolved = run_reconcile("reconcile-resolve", {"--resolve"});
  f_.immature_resolve_exit = resolved.exit_code;
  const launcher::Finished after = run_reconcile("reconcile-after", {});
  f_.immature_reconcile_exit = after.exit_code;
  f_.immature_reversed = count_line(after.out, "reversed");
  f_.immature_result = result_line(after);
}

}  // namespace webhooks::demo
