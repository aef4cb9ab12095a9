// orders-api's and payout-partner's flags: bad values exit 2 with the flag's message on stderr,
// before anything listens or a database is opened. Runs in the orders suite on both engines.
#include <catch2/catch.hpp>
#include <filesystem>

#include "harness.h"
#include "support/duration_flags.h"
#include "support/listen_flags.h"
#include "support/test_env.h"

TEST_CASE("orders-api --outbox-retention: a duration from 0s (kept forever) to 365d, else exit 2") {
  const std::string dir = webhooks::test::temp_dir("orders_outbox_retention");
  for (const char* value : {"315360001"}) {  // the deprecated bare number, checked as before
    const webhooks::launcher::Finished run =
        webhooks::launcher::run_to_end("orders-api", {"--outbox-retention", value}, dir);
    CHECK(run.exit_code == 2);
    CHECK(run.err.find(std::string("--outbox-retention: must be a number of seconds from 0 to "
                                   "315360000 (10 years), not ") +
                       value + "\n") != std::string::npos);
  }
  const webhooks::launcher::Finished run =
      webhooks::launcher::run_to_end("orders-api", {"--outbox-retention", "-1"}, dir);
  CHECK(run.exit_code == 2);
  CHECK(run.err ==
        "--outbox-retention: duration \"-1\" does not start with a whole number; "
        "expected e.g. \"5s\" or \"250ms\"\nRun with --help for more information.\n");
}

namespace {

// Runs `executable args` to its end: exit 2, `message` on stderr.
void refused(const std::string& executable, const std::vector<std::string>& args,
             const std::string& message) {
  const std::string dir = webhooks::test::temp_dir("orders_flags");
  const webhooks::launcher::Finished run = webhooks::launcher::run_to_end(executable, args, dir);
  INFO(executable << " " << args.front());
  CHECK(run.exit_code == 2);
  CHECK(run.err.find(message) != std::string::npos);
}

}  // namespace

TEST_CASE("orders-api and payout-partner: bad flags exit 2 with CLI11's message on stderr") {
  refused("orders-api", {"--log-level", "loud"},
          "--log-level: loud not in {debug,info,warn,error}");
  // Each would have reached the conversion to milliseconds: 1e300 overflowed, 1e-9 and 0.0001
  // became 0 ms.
  const std::string seconds =
      "must be a number of seconds from 0.001 to 315360000 (10 years), not ";
  for (const char* value : {"0", "0.0001", "315360001"}) {  // the deprecated bare number
    refused("orders-api", {"--lease", value}, "--lease: " + seconds + value + "\n");
    refused("orders-api", {"--ttl", value}, "--ttl: " + seconds + value + "\n");
  }
  for (const auto& [value, message] : webhooks::test::bad_durations()) {
    for (const char* flag :
         {"--lease", "--ttl", "--partner-timeout", "--relay-poll", "--request-timeout"}) {
      refused("orders-api", {flag, value}, std::string(flag) + ": " + message + "\n");
    }
  }
  const std::string ms =
      "must be a whole number of milliseconds from 1 to 315360000000 (10 years), not ";
  for (const char* value : {"abc", "0", "0.5", "1e3", "315360000001"}) {
    refused("orders-api", {"--partner-timeout-ms", value},
            "--partner-timeout-ms: " + ms + value + "\n");
    refused("orders-api", {"--relay-poll-ms", value}, "--relay-poll-ms: " + ms + value + "\n");
    refused("orders-api", {"reconcile", "--partner-timeout-ms", value},
            "--partner-timeout-ms: " + ms + value + "\n");
  }
  refused("orders-api", {"--partner-attempts", "2147483648"},
          "--partner-attempts: must be a whole number from 1 to 2147483647, not 2147483648\n");
  refused("orders-api", {"--threads", "0"}, "--threads");
  refused("orders-api", {"--fiber-threads", "1025"},
          "--fiber-threads: must be a whole number from 0 to 1024, not 1025\n");
  refused("orders-api", {"--fiber-threads", "-1"},
          "--fiber-threads: must be a whole number from 0 to 1024, not -1\n");
  refused("orders-api", {"--listen", "127.0.0.1:99999"},
          "--listen: the port of 127.0.0.1:99999 must be a number from 0 to 65535 (expected "
          "HOST:PORT)\n");
  refused("orders-api", {"--no-such-flag"}, "--no-such-flag");
  refused("payout-partner", {"--log-level", "loud"},
          "--log-level: loud not in {debug,info,warn,error}");
  refused("payout-partner", {"--delay-ms", "-1"},
          "--delay-ms: must be a whole number of milliseconds from 0 to 315360000000 (10 years), "
          "not -1\n");
  refused("payout-partner", {"--drop-after-commit", "1e9"},
          "--drop-after-commit: must be a whole number from 0 to 2147483647, not 1e9\n");
  refused("payout-partner", {"--listen", ":8782"},
          "--listen: :8782 has no host (expected HOST:PORT)\n");
  const webhooks::launcher::Finished help = webhooks::launcher::run_to_end(
      "orders-api", {"--help"}, webhooks::test::temp_dir("orders_help"));
  CHECK(help.exit_code == 0);
  CHECK(help.out.find("--behind-tls-proxy") != std::string::npos);
  CHECK(help.out.find("WEBHOOKS_BEHIND_TLS_PROXY") != std::string::npos);
  CHECK(webhooks::launcher::run_to_end("payout-partner", {"--help"},
                                       webhooks::test::temp_dir("partner_help"))
            .exit_code == 0);
}

TEST_CASE("orders-api and payout-partner: --listen takes HOST:PORT, else exit 2") {
  for (const char* executable : {"orders-api", "payout-partner"}) {
    for (const auto& [value, message] : webhooks::test::kBadListenAddresses) {
      refused(executable, {"--listen", value},
              std::string("--listen: ") + message + " (expected HOST:PORT)\n");
    }
  }
}

TEST_CASE("orders-api: --partner-url and --publisher-url are checked while parsing") {
  // --publisher-url was checked only after `listening on` (exit 2 then), --partner-url after the
  // database was opened and migrated. Now both exit 2 before either: no port, no database file.
  const std::string dir = webhooks::test::temp_dir("orders_urls");
  const std::string db = dir + "/never.db";
  const std::string either = " (expected http://HOST:PORT or https://HOST:PORT)\n";
  const std::string http = " (expected http://HOST:PORT)\n";
  const auto refused = [&](std::vector<std::string> args, const std::string& message) {
    INFO(args.back());
    args.insert(args.end(), {"--listen", "127.0.0.1:0", "--db", db});
    const webhooks::launcher::Finished run =
        webhooks::launcher::run_to_end("orders-api", args, dir);
    CHECK(run.exit_code == 2);
    CHECK(run.out.empty());  // no `listening on`
    CHECK(run.err == message + "Run with --help for more information.\n");
    CHECK_FALSE(std::filesystem::exists(db));
  };
  const std::pair<const char*, std::string> publisher_urls[] = {
      {"127.0.0.1:8780", "--publisher-url: 127.0.0.1:8780 does not start with http:// or https://"},
      {"ftp://127.0.0.1:8780",
       "--publisher-url: ftp://127.0.0.1:8780 does not start with http:// or https://"},
      {"http://127.0.0.1:8780/",
       "--publisher-url: http://127.0.0.1:8780/ has a path; give the scheme, host and port "
       "only"},
      {"http://", "--publisher-url: http:// has no host"},
      {"http://127.0.0.1:0",
       "--publisher-url: http://127.0.0.1:0 has a port that is not a number from 1 to 65535"},
      {"http://127.0.0.1:",
       "--publisher-url: http://127.0.0.1: has a port that is not a number from 1 to 65535"},
      {"http://[::1:8780", "--publisher-url: http://[::1:8780 has no ']' after its IPv6 address"},
      {"http://user@127.0.0.1:8780",
       "--publisher-url: http://user@127.0.0.1:8780 has a user name; give the scheme, host and "
       "port only"},
  };
  for (const auto& [url, message] : publisher_urls) {
    refused({"--publisher-url", url}, message + either);
  }
  refused({"--partner-url", "https://127.0.0.1:8782"},
          "--partner-url: https://127.0.0.1:8782 does not start with http://" + http);
  refused({"--partner-url", "http://partner host:8782"},
          "--partner-url: http://partner host:8782 has a host with characters other than letters, "
          "digits, '-', '_' and '.'" +
              http);
  const webhooks::launcher::Finished run = webhooks::launcher::run_to_end(
      "orders-api", {"reconcile", "--db", db, "--partner-url", "localhost:8782"}, dir);
  CHECK(run.exit_code == 2);
  CHECK(run.err == "--partner-url: localhost:8782 does not start with http://" + http +
                       "Run with --help for more information.\n");
  CHECK_FALSE(std::filesystem::exists(db));
}
