// The `webhooks` CLI run from a test (cli_test.cc, cli_usage_test.cc): build/bin/webhooks in a
// shell, stdout and stderr captured; a file written; the conformance vectors' secret and headers
// (secrets_test.cc's too).
#pragma once

#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <string>

#include "support/test_env.h"

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

inline std::string write(const std::string& dir, const std::string& name,
                         const std::string& content) {
  const std::string path = dir + "/" + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

const std::string kSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
// Signed with kSecret (the Standard Webhooks example).
const std::string kHeaders =
    "webhook-id: msg_p5jXN8AQM9LWM0D4loKWxJek\nwebhook-timestamp: 1614265330\n"
    "webhook-signature: v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=\n";

}  // namespace webhooks::test
