// webhooks-publisherd as a child process, for the daemon tests.
#pragma once

#include "support/secret_files.h"
#include "webhooks/launcher/child_process.h"

namespace webhooks::test {

// build/bin/webhooks-publisherd with `args`, stdout and stderr in files of `dir`, `env`'s
// NAME=VALUE entries added to the environment.
class Daemon : public launcher::ChildProcess {
 public:
  Daemon(const std::vector<std::string>& args, const std::string& dir,
         const std::vector<std::string>& env = {})
      : launcher::ChildProcess("webhooks-publisherd", args, dir, with_env(env)) {}
};

// The webhooks CLI run to its end in `dir` against the daemon at `url` as `token`: each call's
// args, then --publisher-url, --admin-token and `tail`.
struct PublisherCli {
  launcher::Finished operator()(std::vector<std::string> args) const {
    args.insert(args.end(), {"--publisher-url", url, "--admin-token", token});
    args.insert(args.end(), tail.begin(), tail.end());
    return launcher::run_to_end("webhooks", args, dir);
  }
  std::string url;
  std::string token;
  std::string dir;
  std::vector<std::string> tail;
};

}  // namespace webhooks::test
