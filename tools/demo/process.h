// The demo's child processes: one server from build/bin each, started with fork/exec in its own
// process group (so a terminal's Ctrl-C reaches only the demo, which then stops them in order),
// with PR_SET_PDEATHSIG so that none outlives a demo killed with SIGKILL, stdout and stderr
// appended to files of the work directory, and the port read from its first stdout line
// `listening on HOST:PORT` (DESIGN.md, "Interfaces that scripts rely on").
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace webhooks::demo {

using Clock = std::chrono::steady_clock;

// A failure that ends the demo; its message says what went wrong and where to look.
class Failure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// SIGINT or SIGTERM arrived: stop the servers and exit 130.
class Interrupted : public std::runtime_error {
 public:
  Interrupted() : std::runtime_error("interrupted") {}
};

class Child {
 public:
  // `name` labels messages and log files (<work_dir>/<name>.out and .log).
  Child(std::string name, std::filesystem::path executable, std::vector<std::string> args,
        const std::filesystem::path& work_dir);
  ~Child();  // stop()
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  // Starts the process and waits until it prints `listening on HOST:PORT` or `deadline` passes;
  // returns the port. Throws Failure (with the end of its log) when it exits or stays silent.
  // May be called again after the process has exited (a restart, with the same arguments).
  int start(Clock::time_point deadline);

  // True while the process runs; reaps it (without blocking) once it has exited.
  bool running();
  // The wait status once the process has exited and been reaped.
  std::optional<int> exit_status() const { return status_; }
  // "exit code 1", "killed by signal 9 (Killed)", or "running".
  std::string describe_exit() const;

  // Replaces the arguments used by the next start() (a restart with other flags).
  void set_args(std::vector<std::string> args) { args_ = std::move(args); }
  const std::vector<std::string>& args() const { return args_; }

  // SIGTERM, then SIGKILL when it has not exited within `grace`. Returns the wait status, or
  // std::nullopt when it was never started.
  std::optional<int> stop(std::chrono::milliseconds grace = std::chrono::seconds(10));

  // The last `lines` lines of its stderr log.
  std::string log_tail(int lines = 15) const;

  const std::string& name() const { return name_; }
  std::filesystem::path log_path() const { return log_path_; }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }

 private:
  void spawn();

  std::string name_;
  std::filesystem::path executable_;
  std::vector<std::string> args_;
  std::filesystem::path out_path_, log_path_;
  pid_t pid_ = -1;
  int port_ = 0;
  std::optional<int> status_;
};

// "exit code N" or "killed by signal N (name)" for a wait status.
std::string describe_wait_status(int status);

// Runs a command to its end, with stdout captured (stderr appended to `log`), killing it once
// `deadline` passes. Returns the exit code (or 128 + signal) and its stdout.
struct Finished {
  int exit_code = -1;
  std::string out;
};
Finished run_to_end(const std::filesystem::path& executable, const std::vector<std::string>& args,
                    const std::filesystem::path& out_file, const std::filesystem::path& log,
                    Clock::time_point deadline);

}  // namespace webhooks::demo
