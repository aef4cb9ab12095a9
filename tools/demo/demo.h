// The end-to-end demo behind `make demo` (docs/demo.md): starts the publisher daemon, the payout
// partner, a merchant receiver and the orders API with its outbox relay on loopback, drives orders
// and payouts through them with resends, faults and a crash, and checks that every order and
// payout had exactly one effect at the merchant and one transfer at the partner.
#pragma once

#include <atomic>
#include <filesystem>
#include <string>

namespace webhooks::demo {

struct Options {
  int orders = 1000;
  int payouts = 100;
  int resend_percent = 20;
  int concurrency = 16;
  int merchant_fail_percent = 30;
  int crash_on_event = -1;  // -1: a third of the events; 0: never
  int partner_drops = 5;
  int operator_replays = 10;
  std::string retry_schedule = "100ms,200ms,400ms,800ms,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s";
  std::filesystem::path bin_dir;
  std::filesystem::path work_dir;  // empty: a new directory under the system's temp directory
  bool keep_work_dir = false;
  double timeout_s = 110;
  std::filesystem::path summary_path;  // empty: none
  bool progress = true;
};

// Runs the demo and returns the exit code: 0 when every invariant holds, 1 when one does not or
// the run failed, 130 when interrupted. `stop` is set from outside on SIGINT/SIGTERM.
int run_demo(const Options& options, const std::atomic<bool>& stop);

}  // namespace webhooks::demo
