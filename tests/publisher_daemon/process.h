// webhooks-publisherd as a child process, for the daemon tests.
#pragma once

#include "support/process.h"

namespace webhooks::test {

// build/bin/webhooks-publisherd with `args`, stdout and stderr in files of `dir`.
class Daemon : public Process {
 public:
  Daemon(const std::vector<std::string>& args, const std::string& dir)
      : Process("webhooks-publisherd", args, dir) {}
};

}  // namespace webhooks::test
