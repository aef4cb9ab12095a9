// orders-api's API keys and publisher token from --api-key-file / --publisher-token-file and
// WEBHOOKS_API_KEY / WEBHOOKS_PUBLISHER_TOKEN (app/secret_flags.h): a real process over real HTTP
// on 127.0.0.1.
#include <catch2/catch.hpp>

#include "harness.h"
#include "support/secret_files.h"
#include "support/test_env.h"

using namespace webhooks::test;  // Stack, Answer, kOrder (harness.h), write_secret_file
using webhooks::launcher::Finished;
using Process = webhooks::launcher::ChildProcess;

namespace {

// Starts s.api with `args` after --listen and --db (no --api-key of the Stack's own).
void start_api(Stack& s, const std::vector<std::string>& args,
               const std::vector<std::string>& env = {}) {
  std::vector<std::string> all = {"--listen", "127.0.0.1:0", "--db", s.orders_db};
  all.insert(all.end(), args.begin(), args.end());
  s.api = std::make_unique<Process>("orders-api", all, s.dir, webhooks::test::with_env(env));
  s.api_port = s.api->wait_listening();
}

// The merchant an order created with `token` belongs to, or its status when not 201.
std::string merchant_of(Stack& s, const std::string& token, const std::string& key) {
  const Answer answer = s.post("/orders", key, kOrder, token);
  if (answer.status != 201) return std::to_string(answer.status);
  return answer.json()["merchant_id"].get<std::string>();
}

Finished run_api(Stack& s, const std::vector<std::string>& args,
                 const std::vector<std::string>& env = {}) {
  std::vector<std::string> all = {"--listen", "127.0.0.1:0", "--db", s.dir + "/unused.db"};
  all.insert(all.end(), args.begin(), args.end());
  return webhooks::launcher::run_to_end("orders-api", all, s.dir, webhooks::test::with_env(env));
}

const std::string kHelp = "Run with --help for more information.\n";

}  // namespace

TEST_CASE("orders-api --api-key-file: two keys, one a line; each acts for its merchant") {
  Stack s;
  const std::string file =
      write_secret_file(s.dir + "/keys", "# key:merchant\nsk_file_1:m1\n\nsk_file_2:m2\n");
  start_api(s, {"--api-key-file", file});
  CHECK(merchant_of(s, "sk_file_1", "k1") == "m1");
  CHECK(merchant_of(s, "sk_file_2", "k2") == "m2");
  CHECK(merchant_of(s, "sk_other", "k3") == "401");
  const std::string shown = webhooks::test::command_line_of(s.api->pid());
  CHECK(shown.find(file) != std::string::npos);
  CHECK(shown.find("sk_file_") == std::string::npos);
}

TEST_CASE("orders-api WEBHOOKS_API_KEY: comma-separated keys; --api-key wins over it") {
  Stack s;
  const std::vector<std::string> env = {"WEBHOOKS_API_KEY=sk_env_1:m1, sk_env_2:m2"};
  start_api(s, {}, env);
  CHECK(merchant_of(s, "sk_env_1", "k1") == "m1");
  CHECK(merchant_of(s, "sk_env_2", "k2") == "m2");
  s.api->kill_and_wait(SIGTERM);
  start_api(s, {"--api-key", "sk_flag:m2"}, env);
  CHECK(merchant_of(s, "sk_flag", "k3") == "m2");
  CHECK(merchant_of(s, "sk_env_1", "k4") == "401");
}

TEST_CASE("orders-api: bad key and token files or variables exit 2, saying why") {
  Stack s;
  const auto refused = [&](const std::vector<std::string>& args, const std::string& message,
                           const std::vector<std::string>& env = {}) {
    const Finished run = run_api(s, args, env);
    CHECK(run.exit_code == 2);
    CHECK(run.err == message + "\n" + kHelp);
    CHECK(run.out.empty());
  };
  const std::string keys = write_secret_file(s.dir + "/keys", "sk_1:m1\nsk_2\n");
  const std::string rule =
      "must be KEY:MERCHANT_ID, e.g. sk_test_1:merchant_1, each part of visible ASCII characters "
      "other than ','";
  refused({"--api-key-file", keys}, "--api-key-file: " + keys + " line 2: " + rule);
  refused({"--api-key", "sk_1"}, "--api-key: " + rule);
  refused({}, "WEBHOOKS_API_KEY: value 1: " + rule, {"WEBHOOKS_API_KEY=:m1"});
  refused({"--api-key", "sk_1:m1", "--api-key-file", keys},
          "--api-key and --api-key-file were both given; give one of them");
  refused({"--api-key-file", s.dir + "/none"},
          "--api-key-file: cannot read " + s.dir + "/none: No such file or directory");
  const std::string tokens = write_secret_file(s.dir + "/tokens", "t1\nt2\n");
  refused({"--publisher-token-file", tokens},
          "--publisher-token-file: " + tokens + " holds 2 values; --publisher-token takes one");
  refused({},
          "WEBHOOKS_PUBLISHER_TOKEN: must be 1 to 4096 visible ASCII characters (no spaces or "
          "control characters)",
          {"WEBHOOKS_PUBLISHER_TOKEN=a\tb"});
}

TEST_CASE("orders-api --help names the file flags and the variables") {
  Stack s;
  const Finished run = webhooks::launcher::run_to_end("orders-api", {"--help"}, s.dir);
  CHECK(run.exit_code == 0);
  for (const char* text : {"--api-key-file PATH", "(Env:WEBHOOKS_API_KEY, comma-separated)",
                           "--publisher-token-file PATH", "(Env:WEBHOOKS_PUBLISHER_TOKEN)"}) {
    CHECK(run.out.find(text) != std::string::npos);
  }
}
