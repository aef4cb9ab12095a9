// webhooks-publisherd as a child process, for the daemon tests.
#pragma once

#include "support/process.h"

namespace webhooks::test {

// build/bin/webhooks-publisherd with `args`, stdout and stderr in files of `dir`, `env`'s
// NAME=VALUE entries added to the environment.
class Daemon : public Process {
 public:
  Daemon(const std::vector<std::string>& args, const std::string& dir,
         const std::vector<std::string>& env = {})
      : Process("webhooks-publisherd", args, dir, env) {}
};

}  // namespace webhooks::test
