// Every server started with its deprecated spellings (issue 28, docs/operations.md, "Flag names:
// old and new"): it starts and listens, and its stderr begins with one line per old spelling, in
// the order the executable defines its flags.
#include <catch2/catch.hpp>

#include "support/test_env.h"
#include "webhooks/launcher/child_process.h"

namespace webhooks::test {
namespace {

const std::string kSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

// Starts `executable` with `args` on 127.0.0.1:0 and its own database; once it listens, its stderr
// starts with `warnings`.
void starts_with_warnings(const std::string& executable, std::vector<std::string> args,
                          const std::string& warnings) {
  const std::string dir = temp_dir("deprecated-" + executable);
  args.insert(args.end(), {"--listen", "127.0.0.1:0", "--db", dir + "/" + executable + ".db"});
  launcher::ChildProcess process(executable, args, dir);
  process.wait_listening();
  INFO(process.err());
  CHECK(process.err().substr(0, warnings.size()) == warnings);
  CHECK(process.stop() == 0);
}

TEST_CASE("webhooks-publisherd: --http-threads, a bare --lease and --ttl") {
  starts_with_warnings(
      "webhooks-publisherd",
      {"--fiber-threads", "0", "--http-threads", "8", "--lease", "30", "--ttl", "0.5"},
      "webhooks-publisherd: --lease 30 without a unit is deprecated; use --lease 30s\n"
      "webhooks-publisherd: --ttl 0.5 without a unit is deprecated; use --ttl 500ms\n"
      "webhooks-publisherd: --http-threads is deprecated; use --threads\n");
}

TEST_CASE("orders-api: every --...-ms flag and a bare --lease, --ttl, --outbox-retention") {
  starts_with_warnings(
      "orders-api",
      {"--db-statement-timeout-ms", "300", "--db-pool-wait-ms", "0", "--lease", "2", "--ttl",
       "3600", "--partner-timeout-ms", "2000", "--relay-poll-ms", "20", "--outbox-retention", "0",
       "--request-timeout-ms", "30000", "--operation-delay-ms", "5"},
      "orders-api: --db-statement-timeout-ms is deprecated; use --db-statement-timeout 300ms\n"
      "orders-api: --db-pool-wait-ms is deprecated; use --db-pool-wait 0s\n"
      "orders-api: --lease 2 without a unit is deprecated; use --lease 2s\n"
      "orders-api: --ttl 3600 without a unit is deprecated; use --ttl 1h\n"
      "orders-api: --partner-timeout-ms is deprecated; use --partner-timeout 2s\n"
      "orders-api: --relay-poll-ms is deprecated; use --relay-poll 20ms\n"
      "orders-api: --outbox-retention 0 without a unit is deprecated; use --outbox-retention 0s\n"
      "orders-api: --request-timeout-ms is deprecated; use --request-timeout 30s\n"
      "orders-api: --operation-delay-ms is deprecated; use --operation-delay 5ms\n");
}

TEST_CASE("payout-partner: --delay-ms") {
  starts_with_warnings("payout-partner", {"--delay-ms", "250"},
                       "payout-partner: --delay-ms is deprecated; use --delay 250ms\n");
}

TEST_CASE("merchant-receiver: --request-timeout-ms, a bare --lease and --ttl; --log-level") {
  starts_with_warnings("merchant-receiver",
                       {"--secret", kSecret, "--lease", "4", "--ttl", "604800", "--tolerance",
                        "300", "--request-timeout-ms", "1500", "--log-level", "warn"},
                       "merchant-receiver: --lease 4 without a unit is deprecated; use --lease 4s\n"
                       "merchant-receiver: --ttl 604800 without a unit is deprecated; use --ttl "
                       "7d\n"
                       "merchant-receiver: --tolerance 300 without a unit is deprecated; use "
                       "--tolerance 5m\n"
                       "merchant-receiver: --request-timeout-ms is deprecated; use "
                       "--request-timeout 1500ms\n");
}

TEST_CASE("the new spellings start every server without a warning") {
  starts_with_warnings("merchant-receiver",
                       {"--secret", kSecret, "--lease", "4s", "--ttl", "7d", "--request-timeout",
                        "1500ms", "--log-level", "error"},
                       "");
  const std::string dir = temp_dir("new-spellings");
  launcher::ChildProcess receiver(
      "merchant-receiver",
      {"--secret", kSecret, "--listen", "127.0.0.1:0", "--db", dir + "/m.db", "--request-timeout",
       "1500ms", "--log-level", "error"},
      dir);
  receiver.wait_listening();
  CHECK(receiver.stop() == 0);
  CHECK(receiver.err().empty());  // --log-level error: not even the start-up line
}

}  // namespace
}  // namespace webhooks::test
