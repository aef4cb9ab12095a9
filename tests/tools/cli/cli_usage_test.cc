// The `webhooks` CLI's usage errors as a user sees them: build/bin/webhooks in a shell, exit 2 and
// the flag named; SIGTERM and SIGINT end `listen` with exit 0.
#include <signal.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cli_run.h"
#include "support/listen_flags.h"
#include "support/test_env.h"
#include "webhooks/launcher/child_process.h"

using namespace webhooks;
using namespace webhooks::test;

namespace {

TEST_CASE("usage errors exit 2 with a clear message") {
  check_usage_error(
      "sned --url x",
      "webhooks: unknown command 'sned'; the commands are: sign, verify, send, publish, listen, "
      "replay, events, attempts, audit, endpoint\nRun with --help for more information.\n");
  check_usage_error(
      "endpoint bogus ep_1",
      "webhooks endpoint: unknown command 'bogus'; the commands are: list, show, create, "
      "update, enable, disable, delete, rotate\nRun with --help for more information.\n");
  check_usage_error(
      "endpoint show --admin-token tok_0123456789abcdef",
      "webhooks: give the endpoint's id: webhooks endpoint COMMAND ID (webhooks endpoint list "
      "shows them)\n");
  // Every publisher command needs a token: refused before anything is sent (no 401 to count).
  for (const char* command : {"endpoint list", "events", "audit", "replay --event e1",
                              "publish --merchant m --type t --data {}"}) {
    check_usage_error_with(std::string(command) + " --publisher-url http://127.0.0.1:1",
                           "--admin-token is required: give --admin-token, --admin-token-file or "
                           "WEBHOOKS_ADMIN_TOKEN (or WEBHOOKS_ADMIN_TOKEN_FILE)\n");
  }
  check_usage_error_with("", "A subcommand is required");
  check_usage_error_with("send --url u --secret " + kSecret + " --type t --data d --bogus",
                         "The following argument was not expected: --bogus");
  check_usage_error_with("send --secret " + kSecret + " --bogus", "--url is required");
  check_usage_error(
      "send --url u --type t --data d",
      "webhooks: send needs --secret or --signing-key: give --secret, --secret-file or "
      "WEBHOOKS_SECRET (v1), or --signing-key, --signing-key-file or WEBHOOKS_SIGNING_KEY "
      "(v1a)\n");

  const std::string tolerance =
      "--tolerance: must be a whole number of seconds from 1 to 315360000 (10 years), not ";
  for (const char* value : {"0", "0.5", "1.5", "315360001", "010"}) {  // the deprecated bare number
    const std::string out = check_usage_error_with(
        "listen --secret " + kSecret + " --tolerance " + value, tolerance + value + "\n");
    CHECK(out.size() < 200);  // no bounds printed with 300 digits
  }
  for (const auto& [value, message] : std::vector<std::pair<std::string, std::string>>{
           {"1500ms", "must be whole seconds, e.g. \"300s\" or \"5m\""},
           {"0s", "must be greater than 0, e.g. \"5s\""},
           {"0x10", "duration \"0x10\" has unknown unit \"x10\"; use ms, s, m, h or d"},
           {"+5",
            "duration \"+5\" does not start with a whole number; expected e.g. \"5s\" or "
            "\"250ms\""}}) {
    check_usage_error("listen --secret " + kSecret + " --tolerance " + value,
                      "--tolerance: " + message + "\nRun with --help for more information.\n");
  }
  check_usage_error_with(
      "verify --secret " + kSecret + " --headers-file h --body-file b --tolerance -1",
      "--tolerance: duration \"-1\" does not start with a whole number");
  check_usage_error_with("listen --secret " + kSecret + " --listen 127.0.0.1:abc",
                         "--listen: the port of 127.0.0.1:abc must be a number from 0 to 65535 "
                         "(expected HOST:PORT)");
  // Split at the first ':' (a host with one goes in brackets), not the last: these bound
  // "127.0.0.1:0" and "[::1]:80" before, and exited 1.
  std::vector<BadListenAddress> listens(std::begin(kBadListenAddresses),
                                        std::end(kBadListenAddresses));
  listens.insert(listens.end(), {{"[::1]", "[::1] has no port"},
                                 {"[::1:80", "[::1:80 has no ']' after its IPv6 address"}});
  for (const auto& [value, message] : listens) {
    check_usage_error_with("listen --secret " + kSecret + " --listen '" + value + "'",
                           std::string("--listen: ") + message + " (expected HOST:PORT)\n");
  }
}

TEST_CASE("usage errors exit 2 with a clear message: --now and --timestamp") {
  // --now had no check at all: -1 and 1e30-ish values went straight into the verifier.
  for (const char* value :
       {"-1", "253402300800", "9223372036854775807", "1e10", "1.5", "abc", "010", "0x10", "+5"}) {
    check_usage_error(
        "verify --secret " + kSecret + " --headers-file h --body-file b --now " + value,
        "--now: must be a whole number of Unix seconds from 0 to 253402300799 "
        "(9999-12-31T23:59:59Z), not " +
            std::string(value) + "\nRun with --help for more information.\n");
  }
  // CLI::Range read 010 as octal 8 and signed with webhook-timestamp 8.
  for (const char* value : {"-1", "10000000000", "010", "0x10"}) {
    check_usage_error(
        "sign --secret " + kSecret + " --id msg_1 --body-file /dev/null --timestamp " + value,
        "--timestamp: must be a whole number of Unix seconds from 0 to 9999999999 "
        "(2286-11-20T17:46:39Z), not " +
            std::string(value) + "\nRun with --help for more information.\n");
  }
}

TEST_CASE("usage errors exit 2 with a clear message: the publisher's flags") {
  Run run;
  // Before: exit 1 after trying to connect ("http://h/x" was read as the host name "http://h/x").
  check_usage_error(
      "events --publisher-url http://127.0.0.1:8780/v1",
      "--publisher-url: http://127.0.0.1:8780/v1 has a path; give the scheme, host and "
      "port only (expected http://HOST:PORT or https://HOST:PORT)\nRun with --help "
      "for more information.\n");
  check_usage_error_with("events --limit 1001 --admin-token tok_0123456789abcdef",
                         "--limit: must be a whole number from 1 to 1000, not 1001");
  CHECK(cli("events --limit 0 --admin-token tok_0123456789abcdef").code == 2);
  for (const char* value : {"-5", "0", "1e300", "0.5", "315360000001"}) {
    check_usage_error_with(
        "send --url u --secret " + kSecret + " --type t --data d --timeout-ms " + value,
        "--timeout-ms: must be a whole number of milliseconds from 1 to "
        "315360000000 (10 years), not " +
            std::string(value));
  }
  // --timeout takes a unit; --timeout-ms, its deprecated spelling, still works and says so.
  check_usage_error(
      "send --url u --secret " + kSecret + " --type t --data d --timeout 10",
      "--timeout: duration \"10\" has no unit; use ms, s, m, h or d\nRun with --help for more "
      "information.\n");
  run = cli("send --url http://127.0.0.1:9/x --secret " + kSecret +
            " --type t --data '{}' --timeout-ms 500");
  CHECK(run.code == 1);  // nothing listens on port 9
  CHECK(run.out.starts_with("webhooks: --timeout-ms is deprecated; use --timeout 500ms\n"));
  CHECK(cli("--version").code == 0);
}

TEST_CASE("a bad --secret or --public-key is refused while parsing: exit 2, the flag named") {
  // Before, every command said "webhooks: secret is not valid base64 (...)" without the flag.
  const std::string base64 =
      "--secret: secret is not valid base64 (expected 'whsec_' followed by padded base64)\n"
      "Run with --help for more information.\n";
  for (const std::string& command :
       {std::string("sign --id msg_1 --timestamp 1614265330 --body-file /dev/null"),
        std::string("verify --headers-file /dev/null --body-file /dev/null"),
        "verify --secret " + kSecret + " --headers-file /dev/null --body-file /dev/null",
        std::string("send --url http://127.0.0.1:1/x --type t --data '{}'"),
        std::string("listen --listen 127.0.0.1:0"),
        std::string("replay --capture /dev/null --url http://127.0.0.1:1/x")}) {
    INFO(command);
    check_usage_error(command + " --secret notasecret", base64);
  }
  check_usage_error("sign --id msg_1 --timestamp 1 --body-file /dev/null --secret whsec_c2hvcnQ=",
                    "--secret: secret decodes to 5 bytes; expected 24 to 64\n"
                    "Run with --help for more information.\n");
  check_usage_error(
      "verify --public-key whsec_c2hvcnQ= --headers-file /dev/null --body-file /dev/null",
      "--public-key: Ed25519 public key must start with 'whpk_'\n"
      "Run with --help for more information.\n");
}

TEST_CASE("two flags reading standard input are a usage error, nothing read") {
  check_usage_error(
      "sign --secret-file - --id a --timestamp 1 --body-file - < /dev/null",
      "webhooks: --secret-file - and --body-file - both read standard input; give one of them "
      "a file\n");
  check_usage_error(
      "verify --secret-file=- --headers-file - --body-file /dev/null < /dev/null",
      "webhooks: --secret-file - and --headers-file - both read standard input; give one of "
      "them a file\n");
  // One reader is fine.
  CHECK(cli("sign --secret " + kSecret + " --id a --timestamp 1 --body-file - < /dev/null").code ==
        0);
}

TEST_CASE("listen stops cleanly on SIGTERM and SIGINT: exit 0") {
  for (const int signal : {SIGTERM, SIGINT}) {
    INFO("signal " << signal);
    const std::string dir = test::temp_dir("cli-listen-stop");
    launcher::ChildProcess listen("webhooks", listen_args({"--db", dir + "/l.db"}), dir);
    listen.wait_listening();
    const int status = listen.kill_and_wait(signal);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
}

}  // namespace
