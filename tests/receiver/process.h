// A server process under test: started from build/bin with fork/exec, its first stdout line read
// for the port (`listening on HOST:PORT`), stopped with SIGTERM (or found dead) at the end.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace receiver_test {

class Process {
 public:
  // Starts `argv[0]` (a path) with `argv`; fails the current test if it does not print
  // `listening on HOST:PORT` within `timeout`.
  explicit Process(const std::vector<std::string>& argv,
                   std::chrono::milliseconds timeout = std::chrono::seconds(20));
  ~Process();  // SIGTERM, then SIGKILL after 5 s, if still running
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  // Waits (bounded) for the process to end; returns its wait status, or -1 on timeout.
  int wait(std::chrono::milliseconds timeout = std::chrono::seconds(20));

 private:
  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  int port_ = 0;
  bool reaped_ = false;
};

}  // namespace receiver_test
