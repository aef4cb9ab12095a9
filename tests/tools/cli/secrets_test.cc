// The `webhooks` CLI's secrets from --secret-file / --admin-token-file and WEBHOOKS_SECRET /
// WEBHOOKS_ADMIN_TOKEN (app/secret_flags.h): build/bin/webhooks as a real process, real HTTP on
// 127.0.0.1.
#include <httplib.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "cli_run.h"
#include "support/secret_files.h"
#include "support/test_env.h"
#include "webhooks/http_server.h"

using namespace webhooks;
using launcher::Finished;
using launcher::run_to_end;
using test::kHeaders;
using test::kSecret;
using test::write_secret_file;

namespace {

const std::string kOtherSecret = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";
const std::string kHelp = "Run with --help for more information.\n";

Finished webhooks_cli(const std::vector<std::string>& args, const std::string& dir,
                      const std::vector<std::string>& env = {}) {
  return run_to_end("webhooks", args, dir, test::with_env(env));
}

}  // namespace

TEST_CASE("sign: --secret-file and WEBHOOKS_SECRET sign as --secret does") {
  const std::string dir = test::temp_dir("cli-secret-sign");
  const auto vectors =
      nlohmann::json::parse(test::read_file(test::vectors_dir() + "/standard-webhooks-v1.json"));
  const auto& v = vectors["sign"][0];
  const std::string secret = v["secret"].get<std::string>();
  const std::string body = write_secret_file(dir + "/body", v["body"].get<std::string>());
  const std::vector<std::string> rest = {"--id",        v["id"].get<std::string>(),
                                         "--timestamp", std::to_string(v["timestamp"].get<long>()),
                                         "--body-file", body};
  const std::string expected =
      "webhook-id: " + v["id"].get<std::string>() +
      "\nwebhook-timestamp: " + std::to_string(v["timestamp"].get<long>()) +
      "\nwebhook-signature: " + v["signature"].get<std::string>() + "\n";
  std::vector<std::string> from_file = {"sign", "--secret-file",
                                        write_secret_file(dir + "/secret", secret + "\n")};
  from_file.insert(from_file.end(), rest.begin(), rest.end());
  Finished run = webhooks_cli(from_file, dir);
  CHECK(run.exit_code == 0);
  CHECK(run.out == expected);
  std::vector<std::string> from_env = {"sign"};
  from_env.insert(from_env.end(), rest.begin(), rest.end());
  run = webhooks_cli(from_env, dir, {"WEBHOOKS_SECRET=" + secret});
  CHECK(run.exit_code == 0);
  CHECK(run.out == expected);
  // One value only: a second secret in the file is an error, not a silent choice.
  from_file[2] = write_secret_file(dir + "/two", secret + "\n" + kOtherSecret + "\n");
  run = webhooks_cli(from_file, dir);
  CHECK(run.exit_code == 2);
  CHECK(run.err ==
        "--secret-file: " + from_file[2] + " holds 2 values; --secret takes one\n" + kHelp);
  from_file.push_back("--secret");
  from_file.push_back(secret);
  run = webhooks_cli(from_file, dir);
  CHECK(run.exit_code == 2);
  CHECK(run.err == "--secret and --secret-file were both given; give one of them\n" + kHelp);
}

TEST_CASE("secrets: '-' reads standard input, a BOM is skipped, WEBHOOKS_SECRET_FILE is read") {
  const std::string dir = test::temp_dir("cli-secret-ways");
  const std::string body = write_secret_file(dir + "/body", "{\"test\": 2432232314}");
  const std::vector<std::string> rest = {
      "--id", "msg_p5jXN8AQM9LWM0D4loKWxJek", "--timestamp", "1614265330", "--body-file", body};
  const std::string expected = kHeaders;  // signed with kSecret
  const auto sign = [&](std::vector<std::string> args, const std::vector<std::string>& env = {},
                        const std::string& input = "") {
    args.insert(args.begin(), "sign");
    args.insert(args.end(), rest.begin(), rest.end());
    std::string command;
    for (const std::string& arg : args) command += " '" + arg + "'";
    if (!input.empty()) command += " < '" + input + "'";
    if (env.empty() && !input.empty()) {
      // Through a shell, for the redirection: build/bin/webhooks reads the file on its stdin.
      const std::string shell = test::bin_dir() + "/webhooks" + command + " 2>&1";
      FILE* pipe = ::popen(shell.c_str(), "r");
      REQUIRE(pipe);
      std::string out;
      char buffer[4096];
      std::size_t n;
      while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
      const int status = ::pclose(pipe);
      return std::to_string(WEXITSTATUS(status)) + " " + out;
    }
    const Finished run = webhooks_cli(args, dir, env);
    return std::to_string(run.exit_code) + " " + run.out + run.err;
  };
  const std::string secret_file = write_secret_file(dir + "/secret", kSecret + "\n");
  CHECK(sign({"--secret-file", "-"}, {}, secret_file) == "0 " + expected);
  const std::string bom = write_secret_file(dir + "/bom", "\xEF\xBB\xBF" + kSecret + "\r\n");
  CHECK(sign({"--secret-file", bom}) == "0 " + expected);
  CHECK(sign({}, {"WEBHOOKS_SECRET_FILE=" + bom}) == "0 " + expected);
  CHECK(sign({}, {"WEBHOOKS_SECRET_FILE=" + secret_file, "WEBHOOKS_SECRET=" + kSecret}) ==
        "2 WEBHOOKS_SECRET and WEBHOOKS_SECRET_FILE are both set; set one of them\n" + kHelp);
  // --secret-file wins over WEBHOOKS_SECRET_FILE, as over WEBHOOKS_SECRET.
  const std::string other = write_secret_file(dir + "/other", kOtherSecret + "\n");
  CHECK(sign({"--secret-file", bom}, {"WEBHOOKS_SECRET_FILE=" + other}) == "0 " + expected);
  // A required secret names every way to give it.
  const Finished listen = webhooks_cli({"listen", "--listen", "127.0.0.1:0"}, dir);
  CHECK(listen.exit_code == 2);
  CHECK(listen.err ==
        "--secret is required: give --secret, --secret-file or WEBHOOKS_SECRET (or "
        "WEBHOOKS_SECRET_FILE)\n" +
            kHelp);
}

TEST_CASE("verify: the old and the new secret from a file or WEBHOOKS_SECRET") {
  const std::string dir = test::temp_dir("cli-secret-verify");
  const std::string body = write_secret_file(dir + "/body", "{\"test\": 2432232314}");
  const std::string headers = write_secret_file(dir + "/headers", kHeaders);
  const std::vector<std::string> base = {"verify", "--headers-file", headers,     "--body-file",
                                         body,     "--now",          "1614265330"};
  auto with = [](std::vector<std::string> args, const std::vector<std::string>& more) {
    args.insert(args.end(), more.begin(), more.end());
    return args;
  };
  const std::string both =
      write_secret_file(dir + "/both", "# old first\n" + kOtherSecret + "\n" + kSecret + "\n");
  Finished run = webhooks_cli(with(base, {"--secret-file", both}), dir);
  CHECK(run.exit_code == 0);
  CHECK(run.out == "valid\n");
  const std::string old_only = write_secret_file(dir + "/old", kOtherSecret);
  run = webhooks_cli(with(base, {"--secret-file", old_only}), dir);
  CHECK(run.exit_code == 1);
  CHECK(run.out ==
        "invalid: no_matching_signature: no signature matches any configured secret or key\n");
  run = webhooks_cli(base, dir, {"WEBHOOKS_SECRET=" + kOtherSecret + "," + kSecret});
  CHECK(run.exit_code == 0);
  CHECK(run.out == "valid\n");
  // The file wins over the variable.
  run = webhooks_cli(with(base, {"--secret-file", old_only}), dir, {"WEBHOOKS_SECRET=" + kSecret});
  CHECK(run.exit_code == 1);
  run = webhooks_cli(with(base, {"--secret-file", dir + "/none"}), dir);
  CHECK(run.exit_code == 2);
  CHECK(run.err ==
        "--secret-file: cannot read " + dir + "/none: No such file or directory\n" + kHelp);
}

TEST_CASE("send --secret-file to listen started with WEBHOOKS_SECRET: accepted, no secret in ps") {
  const std::string dir = test::temp_dir("cli-secret-listen");
  launcher::ChildProcess listen("webhooks",
                                {"listen", "--listen", "127.0.0.1:0", "--db", dir + "/l.db"}, dir,
                                test::with_env({"WEBHOOKS_SECRET=" + kSecret}));
  const std::string url =
      "http://127.0.0.1:" + std::to_string(listen.wait_listening()) + "/webhooks";
  CHECK(test::command_line_of(listen.pid()).find("whsec_") == std::string::npos);
  const std::vector<std::string> send = {"send",          "--url",  url,  "--type",
                                         "order.created", "--data", "{}", "--secret-file"};
  std::vector<std::string> args = send;
  args.push_back(write_secret_file(dir + "/secret", kSecret + "\n"));
  Finished run = webhooks_cli(args, dir);
  CHECK(run.exit_code == 0);
  CHECK(run.out.find("status: 200\n") != std::string::npos);
  args.back() = write_secret_file(dir + "/other", kOtherSecret + "\n");
  run = webhooks_cli(args, dir);
  CHECK(run.exit_code == 1);
  CHECK(run.out.find("status: 401\n") != std::string::npos);
}

TEST_CASE("admin commands: --admin-token-file wins over WEBHOOKS_ADMIN_TOKEN; _FILE is read") {
  const std::string dir = test::temp_dir("cli-secret-admin");
  httplib::Server publisher;
  std::mutex mutex;
  std::vector<std::string> tokens;
  publisher.Get(R"(/v1/.*)", [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(mutex);
    tokens.push_back(req.get_header_value("Authorization"));
    res.set_content(R"({"events":[]})", "application/json");
  });
  const int port = webhooks::http::bind_server(publisher, "127.0.0.1", 0);
  std::thread serving([&] { publisher.listen_after_bind(); });
  const std::vector<std::string> env = {"WEBHOOKS_ADMIN_TOKEN=from-env"};
  const std::string file = write_secret_file(dir + "/token", "from-file\n");
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  CHECK(webhooks_cli({"events", "--publisher-url", url, "--admin-token-file", file}, dir, env)
            .exit_code == 0);
  const std::string env_file = write_secret_file(dir + "/env-token", "from-env-file\n");
  CHECK(webhooks_cli({"events", "--publisher-url", url}, dir,
                     {"WEBHOOKS_ADMIN_TOKEN_FILE=" + env_file})
            .exit_code == 0);
  // WEBHOOKS_SECRET is read by the subcommand that runs only: events takes no secret.
  CHECK(webhooks_cli({"events", "--publisher-url", url}, dir,
                     {"WEBHOOKS_ADMIN_TOKEN=from-env", "WEBHOOKS_SECRET=whsec_short"})
            .exit_code == 0);
  const Finished bad =
      webhooks_cli({"events", "--publisher-url", url}, dir, {"WEBHOOKS_ADMIN_TOKEN=two words"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err ==
        "WEBHOOKS_ADMIN_TOKEN: must be 1 to 4096 visible ASCII characters (no spaces "
        "or control characters)\n" +
            kHelp);
  publisher.stop();
  serving.join();
  CHECK(tokens ==
        std::vector<std::string>{"Bearer from-file", "Bearer from-env-file", "Bearer from-env"});
}

TEST_CASE("listen --help names --secret-file and WEBHOOKS_SECRET, even when it is bad") {
  const std::string dir = test::temp_dir("cli-secret-help");
  const Finished run = webhooks_cli({"listen", "--help"}, dir, {"WEBHOOKS_SECRET=whsec_short"});
  CHECK(run.exit_code == 0);
  CHECK(run.out.find("(Env:WEBHOOKS_SECRET, comma-separated) REQUIRED") != std::string::npos);
  CHECK(run.out.find("--secret-file PATH") != std::string::npos);
}
