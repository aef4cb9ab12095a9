// build/bin/webhooks-demo: the end-to-end demo behind `make demo` (docs/demo.md).
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <filesystem>
#include <iostream>
#include <limits>
#include <string>
#include <thread>

#include "demo.h"
#include "webhooks/app/flags.h"

namespace {

std::atomic<bool> g_stop{false};

std::filesystem::path own_directory() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::current_path() : self.parent_path();
}

// A whole-number flag from `min` to `max`, its default shown in --help.
void add_count(CLI::App& app, const std::string& name, int& value, const std::string& text, int min,
               int max = std::numeric_limits<int>::max()) {
  app.add_option(name, value, text)->check(webhooks::app::count(min, max))->capture_default_str();
}

// The flags that shape the load and the faults.
void add_load_flags(CLI::App& app, webhooks::demo::Options& o) {
  add_count(app, "--orders", o.orders, "orders to create", 1, 100000);
  add_count(app, "--payouts", o.payouts, "payouts to create", 0, 100000);
  add_count(app, "--resend-percent", o.resend_percent,
            "share of requests sent a second time with the same key, half at the same moment as "
            "the original, half after its answer",
            0, 100);
  add_count(app, "--concurrency", o.concurrency, "client connections to the orders API", 1, 256);
  add_count(app, "--merchant-fail-percent", o.merchant_fail_percent,
            "the merchant receiver's --fail-first-attempts: share of events whose first handler "
            "call fails",
            0, 100);
  app.add_option("--crash-on-event", o.crash_on_event,
                 "the merchant receiver SIGKILLs itself inside the handler of the Nth new event "
                 "and is restarted (default: a third of the events; 0: no crash)")
      ->check(webhooks::app::count(0));
  add_count(app, "--partner-drops", o.partner_drops,
            "the payout partner's --drop-after-commit: answers lost after commit", 0);
  add_count(app, "--operator-replays", o.operator_replays,
            "events replayed through the publisher's admin API after delivery (duplicates the "
            "receiver must suppress)",
            0);
  app.add_option("--retry-schedule", o.retry_schedule, "the publisher's --retry-schedule")
      ->capture_default_str();
}

// The flags of the run itself: where the servers and the files are, the time, the output.
void add_run_flags(CLI::App& app, webhooks::demo::Options& o) {
  app.add_option("--bin-dir", o.bin_dir,
                 "directory holding webhooks-publisherd, orders-api, payout-partner and "
                 "merchant-receiver (default: this program's directory)");
  app.add_option("--work-dir", o.work_dir,
                 "directory for the databases and logs; must not hold an earlier run's databases "
                 "(default: a new temporary directory, removed after a successful run)");
  app.add_flag("--keep-work-dir", o.keep_work_dir, "keep the temporary work directory");
  app.add_option("--timeout", o.timeout_s, "seconds the whole run may take before it fails")
      ->check(webhooks::app::duration(webhooks::app::DurationUnit::seconds))
      ->check(CLI::Range(1.0, 3600.0))  // after the check above, which refuses NaN
      ->capture_default_str();
  app.add_option("--summary", o.summary_path, "also write the figures and checks as JSON here");
}

// SIGINT/SIGTERM/SIGHUP are taken by one thread, which asks the demo to stop; every thread
// started later inherits the blocked mask. The children unblock them before exec.
void stop_on_signals() {
  ::signal(SIGPIPE, SIG_IGN);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set] {
    int sig = 0;
    while (sigwait(&set, &sig) == 0) g_stop = true;
  }).detach();
}

}  // namespace

int main(int argc, char** argv) {
  webhooks::demo::Options o;
  CLI::App app{
      "webhooks-demo: runs the publisher daemon, the orders API with its outbox relay, the payout "
      "partner and a merchant receiver on 127.0.0.1 with faults injected, sends orders and payouts "
      "(some twice with the same Idempotency-Key), and checks that each had exactly one effect at "
      "the merchant and one transfer at the partner. Exit code 0 when every check holds, 1 when "
      "one does not or the run failed, 2 on bad usage, 130 when interrupted."};
  add_load_flags(app, o);
  add_run_flags(app, o);
  bool no_progress = false;
  app.add_flag("--no-progress", no_progress, "no progress bars");
  if (const auto exit_code = webhooks::app::parse_command_line(app, argc, argv)) {
    return *exit_code;
  }
  o.progress = !no_progress;
  if (o.bin_dir.empty()) o.bin_dir = own_directory();

  stop_on_signals();

  try {
    return webhooks::demo::run_demo(o, g_stop);
  } catch (const std::exception& e) {
    std::cerr << "webhooks-demo: " << e.what() << std::endl;
    return 1;
  }
}
