// merchant-receiver's signing secrets from --secret-file and WEBHOOKS_SECRET (app/secret_flags.h):
// real processes from build/bin, signed deliveries over real HTTP on 127.0.0.1.
#include <httplib.h>

#include "receiver_support.h"
#include "support/secret_files.h"

using namespace receiver_test;
using webhooks::launcher::Finished;
using Process = webhooks::launcher::ChildProcess;
using webhooks::launcher::run_to_end;
using webhooks::test::write_secret_file;

namespace {

const std::string kThirdSecret = "whsec_YSB0aGlyZCBzZWNyZXQsIGZvciB0aGUgdGVzdHMhISE=";

// POSTs one event signed with `secret` now; returns the status.
int deliver(int port, const std::string& id, const std::string& secret) {
  const std::string body = event_body(id);
  const std::int64_t ts = system_clock().now_seconds();
  httplib::Client client("127.0.0.1", port);
  const auto res = client.Post("/webhooks",
                               {{"Webhook-Id", id},
                                {"Webhook-Timestamp", std::to_string(ts)},
                                {"Webhook-Signature", sign(secret, id, ts, body)},
                                {"Webhook-Delivery-Id", "d-" + id}},
                               body, "application/json");
  REQUIRE(res);
  return res->status;
}

std::vector<std::string> merchant_args(const std::string& label) {
  return {"--listen", "127.0.0.1:0", "--db", test::database_target(label)};
}

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

}  // namespace

TEST_CASE("merchant-receiver --secret-file: two secrets, one a line; accepted, not in ps") {
  const std::string dir = test::temp_dir("merchant_secret_file");
  const std::string file = write_secret_file(
      dir + "/secrets", "# rotated in 2026-12\n\n  " + kOtherSecret + "  \r\n" + kSecret + "\n");
  Process merchant("merchant-receiver",
                   with(merchant_args("merchant_secret_file"), {"--secret-file", file}), dir);
  const int port = merchant.wait_listening();
  CHECK(deliver(port, "evt_file_1", kSecret) == 200);
  CHECK(deliver(port, "evt_file_2", kOtherSecret) == 200);
  CHECK(deliver(port, "evt_file_3", kThirdSecret) == 401);
  const std::string shown = test::command_line_of(merchant.pid());
  CHECK(shown.find(file) != std::string::npos);
  CHECK(shown.find("whsec_") == std::string::npos);
  CHECK(merchant.err().find("warning") == std::string::npos);  // mode 0600: no warning
}

TEST_CASE("merchant-receiver WEBHOOKS_SECRET: comma-separated secrets, not in ps") {
  const std::string dir = test::temp_dir("merchant_secret_env");
  Process merchant("merchant-receiver", merchant_args("merchant_secret_env"), dir,
                   test::with_env({"WEBHOOKS_SECRET=" + kOtherSecret + ", " + kSecret}));
  const int port = merchant.wait_listening();
  CHECK(deliver(port, "evt_env_1", kSecret) == 200);
  CHECK(deliver(port, "evt_env_2", kOtherSecret) == 200);
  CHECK(deliver(port, "evt_env_3", kThirdSecret) == 401);
  CHECK(test::command_line_of(merchant.pid()).find("whsec_") == std::string::npos);
}

TEST_CASE("merchant-receiver: --secret wins over WEBHOOKS_SECRET, --secret-file too") {
  const std::string dir = test::temp_dir("merchant_secret_precedence");
  const std::vector<std::string> env = {"WEBHOOKS_SECRET=" + kOtherSecret};
  // merchant-receiver on the database `name` with `flags` beside the environment's secret:
  // kSecret's delivery `first` is 200, kOtherSecret's `second` 401.
  const auto check_flags_win = [&](const std::string& name, const std::vector<std::string>& flags,
                                   const std::string& first, const std::string& second) {
    Process merchant("merchant-receiver", with(merchant_args(name), flags), dir,
                     test::with_env(env));
    const int port = merchant.wait_listening();
    CHECK(deliver(port, first, kSecret) == 200);
    CHECK(deliver(port, second, kOtherSecret) == 401);
  };
  check_flags_win("merchant_secret_flag_env", {"--secret", kSecret}, "evt_prec_1", "evt_prec_2");
  const std::string file = write_secret_file(dir + "/secret", kSecret + "\n");
  check_flags_win("merchant_secret_file_env", {"--secret-file", file}, "evt_prec_3", "evt_prec_4");
}

TEST_CASE("merchant-receiver: a secret file open to others is read, with a warning") {
  const std::string dir = test::temp_dir("merchant_secret_mode");
  const std::string file = write_secret_file(dir + "/secret", kSecret, 0644);
  Process merchant("merchant-receiver",
                   with(merchant_args("merchant_secret_mode"), {"--secret-file", file}), dir);
  const int port = merchant.wait_listening();
  CHECK(deliver(port, "evt_mode_1", kSecret) == 200);
  const std::string warning =
      "warning: --secret-file " + file + " is open to group or others (mode 0644); chmod 600 it\n";
  CHECK(merchant.err().substr(0, warning.size()) == warning);  // before the JSON log lines
}

TEST_CASE("merchant-receiver: bad secret files and variables exit 2, saying why") {
  const std::string dir = test::temp_dir("merchant_secret_bad");
  const std::string good = write_secret_file(dir + "/good", kSecret + "\n");
  const std::string help = "Run with --help for more information.\n";
  const auto refused = [&](const std::vector<std::string>& args, const std::string& message,
                           const std::vector<std::string>& env = {}) {
    const Finished run = run_to_end("merchant-receiver",
                                    with({"--listen", "127.0.0.1:0", "--db", dir + "/m.db"}, args),
                                    dir, test::with_env(env));
    CHECK(run.exit_code == 2);
    CHECK(run.err == message + "\n" + help);
    CHECK(run.out.empty());
  };
  refused({"--secret", kSecret, "--secret-file", good},
          "--secret and --secret-file were both given; give one of them");
  refused({"--secret-file", dir + "/none"},
          "--secret-file: cannot read " + dir + "/none: No such file or directory");
  refused({"--secret-file", dir}, "--secret-file: cannot read " + dir + ": Is a directory");
  const std::string blank = write_secret_file(dir + "/blank", "\n# no secret yet\n  \n");
  refused({"--secret-file", blank},
          "--secret-file: " + blank + " holds no value (blank lines and # comments are ignored)");
  const std::string bad = write_secret_file(dir + "/bad", kSecret + "\n# old\nwhsec_short\n");
  refused({"--secret-file", bad},
          "--secret-file: " + bad +
              " line 3: secret is not valid base64 (expected 'whsec_' followed by padded base64)");
  const std::string big = write_secret_file(dir + "/big", std::string(65537, '#'));
  refused({"--secret-file", big}, "--secret-file: " + big + " is larger than 65536 bytes");
  refused({},
          "WEBHOOKS_SECRET: value 2: secret is not valid base64 (expected 'whsec_' followed "
          "by padded base64)",
          {"WEBHOOKS_SECRET=" + kSecret + ",whsec_short"});
  refused({"--secret-file", good, "--secret-file", good},
          "--secret-file: At Most 1 required but received 2");
  const std::string required =
      "--secret or --public-key is required (--secret may also come from --secret-file, "
      "WEBHOOKS_SECRET or WEBHOOKS_SECRET_FILE)";
  refused({}, required);
  refused({}, required, {"WEBHOOKS_SECRET= , "});  // blank: unset
  refused({}, "WEBHOOKS_SECRET and WEBHOOKS_SECRET_FILE are both set; set one of them",
          {"WEBHOOKS_SECRET=" + kSecret, "WEBHOOKS_SECRET_FILE=" + good});
  refused({}, "WEBHOOKS_SECRET_FILE: cannot read " + dir + "/none: No such file or directory",
          {"WEBHOOKS_SECRET_FILE=" + dir + "/none"});
}

TEST_CASE("merchant-receiver --help names --secret-file and WEBHOOKS_SECRET, even when it is bad") {
  const std::string dir = test::temp_dir("merchant_secret_help");
  const Finished run = run_to_end("merchant-receiver", {"--help"}, dir,
                                  test::with_env({"WEBHOOKS_SECRET=whsec_short"}));
  CHECK(run.exit_code == 0);
  // Not REQUIRED: --public-key may stand in for it.
  CHECK(run.out.find("--secret TEXT:whsec_... ... (Env:WEBHOOKS_SECRET, comma-separated)\n") !=
        std::string::npos);
  CHECK(run.out.find("--public-key TEXT:whpk_... ...") != std::string::npos);
  CHECK(run.out.find("--secret-file PATH") != std::string::npos);
  CHECK(run.err.empty());
}
