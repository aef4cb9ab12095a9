// webhooks-publisherd's admin token from --admin-token-file (also named in a --config file) and
// WEBHOOKS_ADMIN_TOKEN (app/secret_flags.h): the daemon as a real process, its admin API over
// real HTTP on 127.0.0.1.
#include <httplib.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "process.h"
#include "support/secret_files.h"
#include "support/test_env.h"

namespace webhooks::test {
namespace {

const std::string kHelp = "Run with --help for more information.\n";

std::vector<std::string> args_with(const std::string& label, std::vector<std::string> more) {
  std::vector<std::string> args = {"--listen",    "127.0.0.1:0", "--db", database_target(label),
                                   "--log-level", "warn"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// GET /v1/events with `token`: the status.
int events_status(int port, const std::string& token) {
  httplib::Client client("127.0.0.1", port);
  const auto res = client.Get("/v1/events", {{"Authorization", "Bearer " + token}});
  REQUIRE(res);
  return res->status;
}

}  // namespace

TEST_CASE("--admin-token-file: the file's token opens the admin API; not in ps", "[daemon]") {
  const std::string dir = temp_dir("publisherd-token-file");
  const std::string file = write_secret_file(dir + "/token", "# admin\ntok-from-file\n");
  Daemon daemon(args_with("publisherd_token_file", {"--admin-token-file", file}), dir,
                {"WEBHOOKS_ADMIN_TOKEN=tok-from-env"});
  const int port = daemon.wait_listening();
  CHECK(events_status(port, "tok-from-file") == 200);
  CHECK(events_status(port, "tok-from-env") == 401);  // the file wins over the variable
  const std::string shown = command_line_of(daemon.pid());
  CHECK(shown.find(file) != std::string::npos);
  CHECK(shown.find("tok-from") == std::string::npos);
}

TEST_CASE("WEBHOOKS_ADMIN_TOKEN alone, and --admin-token over it", "[daemon]") {
  const std::string dir = temp_dir("publisherd-token-env");
  const std::vector<std::string> env = {"WEBHOOKS_ADMIN_TOKEN=tok-from-env"};
  {
    Daemon daemon(args_with("publisherd_token_env", {}), dir, env);
    const int port = daemon.wait_listening();
    CHECK(events_status(port, "tok-from-env") == 200);
    CHECK(command_line_of(daemon.pid()).find("tok-from-env") == std::string::npos);
  }
  Daemon daemon(args_with("publisherd_token_flag", {"--admin-token", "tok-from-flag"}), dir, env);
  const int port = daemon.wait_listening();
  CHECK(events_status(port, "tok-from-flag") == 200);
  CHECK(events_status(port, "tok-from-env") == 401);
}

TEST_CASE("a --config file names the token file", "[daemon]") {
  const std::string dir = temp_dir("publisherd-token-config");
  const std::string file = write_secret_file(dir + "/token", "tok-from-config-file\n");
  const std::string config = dir + "/publisherd.toml";
  std::ofstream(config) << "admin-token-file = \"" + file + "\"\n";
  Daemon daemon(args_with("publisherd_token_config", {"--config", config}), dir);
  const int port = daemon.wait_listening();
  CHECK(events_status(port, "tok-from-config-file") == 200);
  CHECK(events_status(port, "other") == 401);
}

TEST_CASE("bad admin token files exit 2, saying why", "[daemon]") {
  const std::string dir = temp_dir("publisherd-token-bad");
  const auto refused = [&](const std::vector<std::string>& args, const std::string& message) {
    const launcher::Finished run = launcher::run_to_end("webhooks-publisherd", args, dir);
    CHECK(run.exit_code == 2);
    CHECK(run.err == message + "\n" + kHelp);
    CHECK(run.out.empty());
  };
  const std::string good = write_secret_file(dir + "/good", "tok\n");
  refused({"--admin-token", "tok", "--admin-token-file", good},
          "--admin-token and --admin-token-file were both given; give one of them");
  refused({"--admin-token-file", dir + "/none"},
          "--admin-token-file: cannot read " + dir + "/none: No such file or directory");
  const std::string two = write_secret_file(dir + "/two", "tok-1\ntok-2\n");
  // Two bare tokens are both named admin (docs/security.md, "Named tokens").
  refused({"--admin-token-file", two},
          "--admin-token/--viewer-token: the token name admin is given twice");
  const std::string spaced = write_secret_file(dir + "/spaced", "tok en\n");
  refused({"--admin-token-file", spaced},
          "--admin-token-file: " + spaced +
              " line 1: must be 1 to 4096 visible ASCII characters (no spaces or control "
              "characters)");
  const std::string empty = write_secret_file(dir + "/empty", "");
  refused(
      {"--admin-token-file", empty},
      "--admin-token-file: " + empty + " holds no value (blank lines and # comments are ignored)");
  const std::string config = dir + "/both.toml";
  std::ofstream(config) << "admin-token = \"tok\"\nadmin-token-file = \"" + good + "\"\n";
  refused({"--config", config},
          "--admin-token and --admin-token-file were both given; give one of them");
  std::ofstream(config) << "admin-token-file = \"" + good + "\"\nadmin-token = \"tok\"\n";
  refused({"--config", config},
          "--admin-token and --admin-token-file were both given; give one of them");
}

TEST_CASE("--help names --admin-token-file and WEBHOOKS_ADMIN_TOKEN", "[daemon]") {
  const launcher::Finished run =
      launcher::run_to_end("webhooks-publisherd", {"--help"}, temp_dir("publisherd-help"));
  CHECK(run.exit_code == 0);
  CHECK(run.out.find("--admin-token TEXT:TOKEN ... (Env:WEBHOOKS_ADMIN_TOKEN, comma-separated)") !=
        std::string::npos);
  CHECK(run.out.find("--viewer-token-file PATH") != std::string::npos);
  CHECK(run.out.find("--admin-token-file PATH") != std::string::npos);
}

}  // namespace webhooks::test
