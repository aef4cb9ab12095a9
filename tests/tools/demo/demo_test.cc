// `make demo` with small counts: build/bin/webhooks-demo runs the real servers on loopback, and
// its exit code, its JSON summary and its table must show every invariant holding (the demo runs
// as a child process of webhooks::launcher, like the servers it starts). A second case
// interrupts a run with SIGINT and checks that no server it started outlives it.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/test_env.h"
#include "webhooks/launcher/child_process.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

using webhooks::launcher::ChildProcess;

// The pids of the running processes whose parent is `parent`.
std::set<pid_t> children_of(pid_t parent) {
  std::set<pid_t> out;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    // pid (comm) state ppid ...: comm may hold spaces, so read after the last ')'.
    std::istringstream rest(line.substr(line.rfind(')') + 1));
    std::string state;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent && state != "Z") out.insert(static_cast<pid_t>(std::stoi(name)));
  }
  return out;
}

// True while `pid` exists and is not a zombie.
bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  std::istringstream rest(line.substr(line.rfind(')') + 1));
  std::string state;
  rest >> state;
  return state != "Z";
}

}  // namespace

TEST_CASE(
    "the demo with 60 orders and 10 payouts: exactly one effect per event, one transfer per "
    "payout") {
  const std::string dir = webhooks::test::temp_dir("demo");
  ChildProcess demo("webhooks-demo",
                    {"--orders", "60", "--payouts", "10", "--resend-percent", "20", "--concurrency",
                     "8", "--operator-replays", "5", "--work-dir", dir + "/work", "--summary",
                     dir + "/summary.json", "--timeout", "150"},
                    dir);
  const auto status = demo.wait_exit(std::chrono::seconds(200));
  INFO("stdout:\n" << demo.out() << "\nstderr:\n" << demo.err());
  REQUIRE(status.has_value());
  REQUIRE(WIFEXITED(*status));
  REQUIRE(WEXITSTATUS(*status) == 0);

  const auto summary = nlohmann::json::parse(webhooks::test::read_file(dir + "/summary.json"));
  INFO("summary: " << summary.dump(2));
  CHECK(summary["ok"] == true);
  CHECK(summary["failures"].empty());
  CHECK(summary["orders_requested"] == 60);
  CHECK(summary["orders_created"] == 60);
  CHECK(summary["payouts_requested"] == 10);
  CHECK(summary["payouts_created"] == 10);
  CHECK(summary["partner_transfers"] == 10);
  CHECK(summary["payouts_with_one_transfer"] == 10);
  CHECK(summary["events_accepted"] == 70);
  CHECK(summary["events_handled"] == 70);
  CHECK(summary["events_with_one_effect"] == 70);
  CHECK(summary["resends"] == 14);  // 20 % of 70, half together with the original, half after
  CHECK(summary["resends_concurrent"] == 7);
  CHECK(summary["resends_after"] == 7);
  CHECK(summary["operator_replays"] == 5);
  CHECK(summary["duplicates_suppressed"] >= 5);
  CHECK(summary["receiver_crashes"] == 1);
  CHECK(summary["receiver_restarts"] == 1);
  CHECK(summary["reconcile_exit_code"] == 0);
  CHECK(summary["reconcile_result"] == "clean");
  // The immature partner's phase: 3 payouts doubled, reversed by reconcile --resolve.
  CHECK(summary["immature_payouts"] == 3);
  CHECK(summary["immature_duplicates"] == 3);
  CHECK(summary["immature_resolve_exit_code"] == 0);
  CHECK(summary["immature_reversed"] == 3);
  CHECK(summary["immature_reconcile_result"] == "clean");
  // Every event was delivered at least once; ~30 % of first handler calls fail on purpose.
  CHECK(summary["attempts"] > 70);
  CHECK(summary["handler_calls"] > 70);

  // The table says the same.
  const std::string out = demo.out();
  CHECK(std::regex_search(out, std::regex(R"(\n  orders requested +60\n)")));
  CHECK(std::regex_search(out, std::regex(R"(\n  orders created +60 )")));
  CHECK(std::regex_search(out, std::regex(R"(\n  partner transfers +10 )")));
  CHECK(std::regex_search(out, std::regex(R"(\n  reconcile +clean )")));
  CHECK(out.find("\n  immature partner, reconcile --resolve       clean   3 payouts doubled: 3 "
                 "duplicates found, 3 reversed, then reconcile\n") != std::string::npos);
  CHECK(out.find("OK: every order and payout event had exactly one effect") != std::string::npos);
  // The progress lines (not a terminal: one per quarter, the last one always). The replays' bar
  // counted the events already handled, 70/70 from its first line, not the replays.
  CHECK(out.find("\n  deliveries: 70/70  ") != std::string::npos);
  CHECK(out.find("\n  operator replays: 5/5  ") != std::string::npos);
  CHECK(out.find("operator replays: 70/70") == std::string::npos);
}

TEST_CASE("the demo interrupted with SIGINT stops every server it started") {
  const std::string dir = webhooks::test::temp_dir("demo-sigint");
  ChildProcess demo("webhooks-demo",
                    {"--orders", "100000", "--payouts", "100", "--work-dir", dir + "/work",
                     "--timeout", "120", "--no-progress"},
                    dir);
  // Wait (bounded) until all four servers run: the orders API is the last one started.
  std::set<pid_t> servers;
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (Clock::now() < deadline) {
    servers = children_of(demo.pid());
    if (servers.size() >= 4 && fs::exists(dir + "/work/orders-api.out") &&
        webhooks::test::read_file(dir + "/work/orders-api.out").find("listening on") !=
            std::string::npos) {
      break;
    }
    REQUIRE_FALSE(demo.wait_exit(std::chrono::milliseconds(0)).has_value());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  INFO("stdout:\n" << demo.out() << "\nstderr:\n" << demo.err());
  REQUIRE(servers.size() >= 4);

  REQUIRE(::kill(demo.pid(), SIGINT) == 0);
  const auto status = demo.wait_exit(std::chrono::seconds(60));
  REQUIRE(status.has_value());
  REQUIRE(WIFEXITED(*status));
  CHECK(WEXITSTATUS(*status) == 130);
  for (pid_t pid : servers) {
    INFO("server pid " << pid);
    CHECK_FALSE(alive(pid));
  }
}

TEST_CASE("webhooks-demo: bad flags exit 2 with CLI11's message on stderr") {
  const std::string dir = webhooks::test::temp_dir("demo-flags");
  webhooks::launcher::Finished run =
      webhooks::launcher::run_to_end("webhooks-demo", {"--no-such-flag"}, dir);
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("--no-such-flag") != std::string::npos);
  run = webhooks::launcher::run_to_end("webhooks-demo", {"--partner-drops", "-1"}, dir);
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("--partner-drops: must be a whole number from 0 to 2147483647, not -1\n") !=
        std::string::npos);
  run = webhooks::launcher::run_to_end("webhooks-demo", {"--timeout", "nan"},
                                       dir);  // passed CLI::Range
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("--timeout: must be a number of seconds from 0.001 to 315360000 (10 years), "
                     "not nan\n") != std::string::npos);
  CHECK(webhooks::launcher::run_to_end("webhooks-demo", {"--help"}, dir).exit_code == 0);
}
