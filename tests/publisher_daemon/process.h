// webhooks-publisherd as a child process, for the daemon tests.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace webhooks::test {

class Daemon {
 public:
  // Starts build/bin/webhooks-publisherd with `args`, stdout and stderr in files of `dir`.
  Daemon(const std::vector<std::string>& args, const std::string& dir);
  ~Daemon();  // SIGKILL if still running
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Waits (up to 15 s) for the first stdout line `listening on HOST:PORT`; returns the port.
  // FAILs the test when it does not come.
  int wait_listening();
  // Sends `signal` and waits (up to 30 s) for the exit; returns the raw wait status.
  int kill_and_wait(int signal);
  std::string out() const;
  std::string err() const;

 private:
  std::string out_path_, err_path_;
  pid_t pid_ = -1;
  bool exited_ = false;
};

}  // namespace webhooks::test
