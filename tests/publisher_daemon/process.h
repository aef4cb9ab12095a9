// webhooks-publisherd as a child process, for the daemon tests.
#pragma once

#include "webhooks/launcher/child_process.h"

namespace webhooks::test {

// build/bin/webhooks-publisherd with `args`, stdout and stderr in files of `dir`.
class Daemon : public launcher::ChildProcess {
 public:
  Daemon(const std::vector<std::string>& args, const std::string& dir)
      : launcher::ChildProcess("webhooks-publisherd", args, dir) {}
};

}  // namespace webhooks::test
