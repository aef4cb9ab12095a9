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

}  // namespace webhooks::test
