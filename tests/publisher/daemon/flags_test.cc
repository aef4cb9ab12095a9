// webhooks-publisherd's command line as a real process: --help, bad flags (exit 2 with CLI11's
// message on stderr), and --config files.
#include <signal.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <string>
#include <vector>

#include "daemon_client.h"
#include "process.h"
#include "support/duration_flags.h"
#include "support/listen_flags.h"
#include "support/test_env.h"

namespace webhooks::test {
namespace {

TEST_CASE("--help shows every default", "[daemon]") {
  const std::string dir = temp_dir("publisherd-help");
  Daemon daemon({"--help"}, dir);
  const int status = daemon.kill_and_wait(0);
  (void)status;
  REQUIRE(eventually([&] { return daemon.out().find("--replay-max-age") != std::string::npos; },
                     std::chrono::seconds(10)));
  const std::string help = daemon.out();
  for (const char* text :
       {"127.0.0.1:8780", "./publisher.db", "5s,5m,30m,2h,5h,10h,10h", "3d", "7d",
        "WEBHOOKS_ADMIN_TOKEN", "--allow-private-networks", "--behind-tls-proxy", "--viewer-token",
        "WEBHOOKS_VIEWER_TOKEN", "WEBHOOKS_BEHIND_TLS_PROXY", "--allow-network CIDR",
        "WEBHOOKS_ALLOW_NETWORK", "--threads INT", "Deprecated:", "deprecated: use --threads",
        "NORMAL (durable across crashes), FULL or EXTRA", "one `name = value` line per flag"}) {
    CHECK(help.find(text) != std::string::npos);
  }
  CHECK(help.find("OFF") == std::string::npos);  // it can lose accepted events: not offered
  CHECK(help.find("INI") != std::string::npos);
}

// webhooks-publisherd `args` in `dir` exits 2 with `message` on stderr and nothing on stdout.
void refused(const std::string& dir, const std::vector<std::string>& args,
             const std::string& message) {
  INFO(args.front());
  const launcher::Finished run = launcher::run_to_end("webhooks-publisherd", args, dir);
  CHECK(run.exit_code == 2);
  CHECK(run.err.find(message) != std::string::npos);
  CHECK(run.out.empty());
}

// --log-level, --sqlite-synchronous, durations, the retry schedule and --listen.
void refuses_bad_values(const std::string& dir) {
  const auto refused = [&](const std::vector<std::string>& args, const std::string& message) {
    test::refused(dir, args, message);
  };
  refused({"--log-level", "loud"}, "--log-level: loud not in {debug,info,warn,error}");
  refused({"--sqlite-synchronous", "OFF"}, "--sqlite-synchronous: OFF not in {NORMAL,FULL,EXTRA}");
  const std::string seconds =
      "must be a number of seconds from 0.001 to 315360000 (10 years), not ";
  for (const char* value : {"0", "0.0001", "315360001"}) {
    refused({"--lease", value}, "--lease: " + seconds + value + "\n");
    refused({"--ttl", value}, "--ttl: " + seconds + value + "\n");
  }
  // With a unit (the spelling now); a bare number is the deprecated spelling, checked as before.
  for (const auto& [value, message] : bad_durations()) {
    for (const char* flag : {"--lease", "--ttl"}) {
      refused({flag, value}, std::string(flag) + ": " + message + "\n");
    }
  }
  refused({"--retry-schedule", "5x"},
          "--retry-schedule: retry schedule entry 1 \"5x\" has unknown unit \"x\"; use ms, s, m, h "
          "or d\n");
  refused({"--retry-schedule", "1s,366d"},
          "--retry-schedule: retry schedule entry 2 \"366d\" is longer than the maximum of 365d\n");
  refused({"--listen", "127.0.0.1:99999"},
          "--listen: the port of 127.0.0.1:99999 must be a number from 0 to 65535 (expected "
          "HOST:PORT)\n");
  refused({"--listen", "nonsense"}, "--listen: nonsense has no port (expected HOST:PORT)\n");
  for (const auto& [value, message] : kBadListenAddresses) {
    refused({"--listen", value}, std::string("--listen: ") + message + " (expected HOST:PORT)\n");
  }
}

// --delivery-lease, --timeout, --max-age, --permanent-status, --body-limit, an unknown flag, and
// the same from a --config file.
void refuses_bad_limits(const std::string& dir) {
  const auto refused = [&](const std::vector<std::string>& args, const std::string& message) {
    test::refused(dir, args, message);
  };
  refused({"--delivery-lease", "1s"},
          "--delivery-lease: 1s must be longer than --timeout (15s) times the 4 round(s) a batch "
          "may need");
  refused({"--timeout", "0s"}, "--timeout: must be greater than 0, e.g. \"5s\"\n");
  refused({"--max-age", "3x"},
          "--max-age: duration \"3x\" has unknown unit \"x\"; use ms, s, m, h or d\n");
  // Accepted silently before, though classify_attempt ignores the list for them.
  for (const char* status : {"408", "425", "429"}) {
    refused({"--permanent-status", std::string("400,") + status},
            std::string("--permanent-status: ") + status +
                " cannot be permanent: 408, 425 and 429 mean \"try later\" and are always "
                "retried\n");
  }
  const std::pair<std::vector<std::string>, std::string> limits[] = {
      {{"--permanent-status", "410"},
       "--permanent-status: 410 cannot be permanent: a 410 always disables the endpoint (its "
       "tasks wait until it is enabled again)\n"},
      {{"--permanent-status", "499,500"},
       "--permanent-status: must be a whole number from 400 to 499, not 500\n"},
      {{"--body-limit", "-1"},
       "--body-limit: must be a whole number from 1 to 2147483647, not -1\n"},
      {{"--no-such-flag"}, "--no-such-flag"},
  };
  for (const auto& [args, message] : limits) refused(args, message);
  const std::string config = dir + "/publisherd.toml";
  std::ofstream(config) << "listen = \"127.0.0.1:0\"\nadmin-tokn = \"x\"\n";
  refused({"--config", config}, "admin-tokn");
  std::ofstream(config) << "permanent-status = [404, 410]\n";
  refused({"--config", config},
          "--permanent-status: 410 cannot be permanent: a 410 always disables the endpoint (its "
          "tasks wait until it is enabled again)\n");
}

TEST_CASE("bad flags exit 2 with CLI11's message on stderr", "[daemon]") {
  const std::string dir = temp_dir("publisherd-bad-flags");
  refuses_bad_values(dir);
  refuses_bad_limits(dir);
  CHECK(launcher::run_to_end("webhooks-publisherd", {"--help"}, dir).exit_code == 0);
}

TEST_CASE("a --config file: name = value lines, quotes and comments, lists, bare flags",
          "[daemon]") {
  const std::string dir = temp_dir("publisherd-config");
  const std::string config = dir + "/publisherd.toml";
  std::ofstream(config) << "# publisherd.toml\nlisten = \"127.0.0.1:0\"\ndb = \"" +
                               database_target("publisherd_config") +
                               "\"   # a comment\nadmin-token = " + kToken +
                               "\npermanent-status = [400, 404]\nsqlite-synchronous = full\n"
                               "log-level = warn\nallow-private-networks\n";
  Daemon daemon({"--config", config}, dir);
  Client client(daemon.wait_listening());
  const auto res = client.get("/v1/endpoints?merchant_id=m1");
  REQUIRE(res);
  CHECK(res->status == 200);  // the token came from the file
}

TEST_CASE("a --config file's retry-schedule: a,b, [a, b] and \"a,b\" (docs/operations.md)",
          "[daemon]") {
  const std::string dir = temp_dir("publisherd-config-schedule");
  for (const std::string value : {"1s,5m,2h", "[1s, 5m, 2h]", "\"1s,5m,2h\""}) {
    INFO(value);
    const std::string config = dir + "/publisherd.toml";
    std::ofstream(config) << "listen = 127.0.0.1:0\ndb = \"" +
                                 database_target("publisherd_schedule") +
                                 "\"\nretry-schedule = " + value + "\n";
    Daemon daemon({"--config", config}, dir);
    daemon.wait_listening();
    CHECK(WEXITSTATUS(daemon.kill_and_wait(SIGTERM)) == 0);
    CHECK(daemon.err().find("\"retry_schedule\":\"1s,5m,2h\"") != std::string::npos);
  }
  const std::string config = dir + "/bad.toml";
  std::ofstream(config) << "retry-schedule = [1s, 5x]\n";
  const launcher::Finished run =
      launcher::run_to_end("webhooks-publisherd", {"--config", config}, dir);
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("--retry-schedule: retry schedule entry 2 \"5x\" has unknown unit") !=
        std::string::npos);
  std::ofstream(config) << "retry-schedule = []\n";  // crashed CLI11 when joined into a string
  const launcher::Finished empty =
      launcher::run_to_end("webhooks-publisherd", {"--config", config}, dir);
  CHECK(empty.exit_code == 2);
  CHECK(empty.err.find("retry-schedule: At least 1 required but received 0") != std::string::npos);
  const launcher::Finished gap =
      launcher::run_to_end("webhooks-publisherd", {"--retry-schedule", "1s,,5m"}, dir);
  CHECK(gap.exit_code == 2);
  CHECK(gap.err.find("--retry-schedule: retry schedule entry 2 is empty") != std::string::npos);
}

TEST_CASE("--retry-schedule given twice is refused; the command line replaces --config's",
          "[daemon]") {
  const std::string dir = temp_dir("publisherd-schedule-twice");
  // CLI11 appended the second to the first: 1s then 5s ran as 1s,5s without a word.
  const std::string twice =
      "--retry-schedule: given twice; write the whole schedule once, comma-separated, e.g. "
      "--retry-schedule 5s,5m,30m\n";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--retry-schedule", "1s", "--retry-schedule", "5s"},
        std::vector<std::string>{"--retry-schedule=1s,5m", "--retry-schedule", "1s,5m"}}) {
    const launcher::Finished run = launcher::run_to_end("webhooks-publisherd", args, dir);
    CHECK(run.exit_code == 2);
    CHECK(run.err == twice + "Run with --help for more information.\n");
    CHECK(run.out.empty());
  }
  // docs/operations.md: the command line wins over the file (and the file over the environment).
  const std::string config = dir + "/publisherd.toml";
  std::ofstream(config) << "listen = 127.0.0.1:0\ndb = \"" + database_target("schedule_twice") +
                               "\"\nretry-schedule = [1s, 5m, 2h]\n";
  Daemon daemon({"--config", config, "--retry-schedule", "2s,3m"}, dir);
  daemon.wait_listening();
  CHECK(WEXITSTATUS(daemon.kill_and_wait(SIGTERM)) == 0);
  CHECK(daemon.err().find("\"retry_schedule\":\"2s,3m\"") != std::string::npos);
  Daemon from_file({"--config", config}, dir);
  from_file.wait_listening();
  CHECK(WEXITSTATUS(from_file.kill_and_wait(SIGTERM)) == 0);
  CHECK(from_file.err().find("\"retry_schedule\":\"1s,5m,2h\"") != std::string::npos);
}

}  // namespace
}  // namespace webhooks::test
