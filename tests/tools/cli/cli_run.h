// The `webhooks` CLI run from a test (cli_test.cc, cli_usage_test.cc): build/bin/webhooks in a
// shell, stdout and stderr captured; a file written; the conformance vectors' secret and headers
// (secrets_test.cc's too).
#pragma once

#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "support/test_env.h"
#include "webhooks/launcher/child_process.h"

namespace webhooks::test {

struct Run {
  int code = -1;
  std::string out;
};

// Runs `args` after build/bin/webhooks in a shell; stdout captured, stderr appended to it.
inline Run cli(const std::string& args) {
  const std::string command = test::bin_dir() + "/webhooks " + args + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe);
  Run run;
  char buffer[4096];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) run.out.append(buffer, n);
  const int status = ::pclose(pipe);
  run.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

// Runs `args`: exit `code` printing exactly `out`.
inline void check_cli(const std::string& args, int code, const std::string& out) {
  INFO("webhooks " << args);
  const Run run = cli(args);
  CHECK(run.code == code);
  CHECK(run.out == out);
}

// Runs `args`: exit 2 (a usage error) printing exactly `out`.
inline void check_usage_error(const std::string& args, const std::string& out) {
  check_cli(args, 2, out);
}

// Runs `args`: exit 2 (a usage error) printing `part` among the rest; what it printed.
inline std::string check_usage_error_with(const std::string& args, const std::string& part) {
  INFO("webhooks " << args);
  const Run run = cli(args);
  CHECK(run.code == 2);
  CHECK(run.out.find(part) != std::string::npos);
  return run.out;
}

inline std::string write(const std::string& dir, const std::string& name,
                         const std::string& content) {
  const std::string path = dir + "/" + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

// " --headers-file PATH --body-file PATH" for `headers` and `body` written to dir/NAME.headers and
// dir/NAME.body.
inline std::string message_files(const std::string& dir, const std::string& name,
                                 const std::string& headers, const std::string& body) {
  return " --headers-file " + write(dir, name + ".headers", headers) + " --body-file " +
         write(dir, name + ".body", body);
}

const std::string kSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
// Signed with kSecret (the Standard Webhooks example).
const std::string kHeaders =
    "webhook-id: msg_p5jXN8AQM9LWM0D4loKWxJek\nwebhook-timestamp: 1614265330\n"
    "webhook-signature: v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=\n";

// The arguments of `webhooks listen` on 127.0.0.1:0 with kSecret, then `more` (--db, --capture…).
inline std::vector<std::string> listen_args(const std::vector<std::string>& more) {
  std::vector<std::string> args{"listen", "--listen", "127.0.0.1:0", "--secret", kSecret};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// The /webhooks URL of a running `webhooks listen`, once it listens.
inline std::string webhooks_url(launcher::ChildProcess& listen) {
  return "http://127.0.0.1:" + std::to_string(listen.wait_listening()) + "/webhooks";
}

// `webhooks listen` with kSecret on dir/listen.db, capturing what it verifies to
// dir/capture.jsonl; listening.
struct CapturingListener {
  explicit CapturingListener(const std::string& dir)
      : process("webhooks",
                listen_args({"--db", dir + "/listen.db", "--capture", dir + "/capture.jsonl"}),
                dir),
        port(process.wait_listening()),
        url("http://127.0.0.1:" + std::to_string(port) + "/webhooks") {}

  launcher::ChildProcess process;
  int port;
  std::string url;  // its /webhooks
};

}  // namespace webhooks::test
