// A server or command from build/bin as a real child process, for tests that start, signal and
// restart the toolkit's executables (SIGKILL where a crash is the point).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace webhooks::test {

// A child process of build/bin with stdout and stderr in files of `dir`, in this process's
// environment with `env`'s NAME=VALUE entries added (replacing a variable of the same name).
class Process {
 public:
  Process(const std::string& executable, const std::vector<std::string>& args,
          const std::string& dir, const std::vector<std::string>& env = {});
  ~Process();  // SIGTERM, then SIGKILL if it has not exited within 10 s
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  // Waits (up to 15 s) for the first stdout line `listening on HOST:PORT`; returns the port.
  int wait_listening();
  // Sends `signal` and waits for the exit; returns the raw wait status.
  int kill_and_wait(int signal);
  // Waits up to `timeout` for the exit; returns the raw wait status, or std::nullopt.
  std::optional<int> wait_exit(std::chrono::milliseconds timeout);
  std::string out() const;
  std::string err() const;
  pid_t pid() const { return pid_; }

 private:
  std::string out_path_, err_path_, label_;
  pid_t pid_ = -1;
  std::optional<int> status_;
};

// Runs a command to its end (up to 60 s), with `env` as for Process.
struct Finished {
  int exit_code = -1;
  std::string out, err;
};
Finished run_to_end(const std::string& executable, const std::vector<std::string>& args,
                    const std::string& dir, const std::vector<std::string>& env = {});

}  // namespace webhooks::test
