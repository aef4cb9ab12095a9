// One child-process launcher for the tests, the benchmarks and the demo driver (tools/demo): an
// executable run as a child process with stdin on /dev/null, stdout and stderr in files, and
// extra environment variables; its port read from its first stdout line `listening on HOST:PORT`
// (DESIGN.md, "Interfaces that scripts rely on"); signalled, waited for with a bound, restarted.
//
// No child outlives its parent: each runs in its own process group (a Ctrl-C in a terminal
// reaches only the parent, which then stops its children in order) with PR_SET_PDEATHSIG =
// SIGTERM (the parent killed outright takes its children along), and the destructor sends
// SIGTERM, then SIGKILL after 10 s. PR_SET_PDEATHSIG fires when the *thread* that started the
// child ends: start children from a thread that outlives them (main's, a test's).
//
// Built in the build tree only (never installed). Not thread-safe: one owner per ChildProcess.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace webhooks::launcher {

using Clock = std::chrono::steady_clock;

// A child that could not be started, or did not do what a wait expected. The message names the
// child (its label), says what happened and, where it helps, quotes the end of its stderr file.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Variables (NAME, VALUE) set in the child's environment over the parent's: a NAME the parent has
// too gets VALUE, the parent's other variables are passed unchanged, and of two pairs with one
// NAME the later wins. A NAME must be non-empty and hold no '=' (else Error). Secrets passed this
// way do not show in `ps`, unlike arguments.
using Environment = std::vector<std::pair<std::string, std::string>>;

struct Options {
  Environment env;
  // Names the child in messages and files. Default: "<executable's file name>.<N>", N counting
  // the children this process started, so that two runs of one executable keep separate files.
  std::string label;
  // Where its stdout and stderr go. Default: <dir>/<label>.out and <dir>/<label>.err.
  std::filesystem::path out_path, err_path;
  // Append to those files (so that restart() continues them) instead of emptying them first.
  bool append = false;
};

// This build's bin directory (build/bin), where a bare executable name is looked up; fixed when
// the launcher is compiled (it lives in the build tree only).
std::filesystem::path bin_dir();

// "exit code N", "killed by signal N (NAME)", or "wait status N" for a raw wait status.
std::string describe_wait_status(int status);
// The shell's convention for a raw wait status: the exit code, or 128 + the ending signal.
int exit_code(int status);

class ChildProcess {
 public:
  // Starts `executable` (a path with a '/', else a name in bin_dir()) with `args`. Throws Error
  // when the executable is missing or not executable, a file cannot be opened, an env name is
  // invalid, or fork fails.
  ChildProcess(std::filesystem::path executable, std::vector<std::string> args,
               const std::filesystem::path& dir, Options options = {});
  ~ChildProcess();  // stop(): SIGTERM, then SIGKILL when it has not exited within 10 s
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Waits for the first stdout line this launch printed, `listening on HOST:PORT`, and returns
  // PORT (also kept as port()). Throws Error when the line says something else, when the process
  // exits before printing a line, or when `timeout` (or `deadline`) passes first; the process
  // then keeps running until stop() or the destructor.
  int wait_listening(std::chrono::milliseconds timeout = std::chrono::seconds(15));
  int wait_listening(Clock::time_point deadline);

  // Sends `signal` (unless it has already exited) and waits up to `timeout` for the exit.
  // Returns the raw wait status; throws Error when it has not exited by then.
  int kill_and_wait(int signal, std::chrono::milliseconds timeout = std::chrono::seconds(15));
  // Waits up to `timeout` (0: only looks) for the exit; the raw wait status, or std::nullopt
  // while it runs. Reaps the process.
  std::optional<int> wait_exit(std::chrono::milliseconds timeout);
  // True while the process runs; reaps it (without blocking) once it has exited.
  bool running();
  // SIGTERM, then SIGKILL when it has not exited within `grace`; the raw wait status.
  int stop(std::chrono::milliseconds grace = std::chrono::seconds(10));

  // Starts the process again, once it has exited, with args() (see set_args). With
  // Options::append its output continues the same files. Throws Error while it still runs.
  void restart();
  void set_args(std::vector<std::string> args) { args_ = std::move(args); }
  const std::vector<std::string>& args() const { return args_; }

  // The raw wait status once the process has exited and been reaped; std::nullopt before.
  std::optional<int> exit_status() const { return status_; }
  // describe_wait_status(*exit_status()), or "running".
  std::string describe_exit() const;

  // Everything in its stdout / stderr file so far ("" when it cannot be read).
  std::string out() const;
  std::string err() const;
  // The last `lines` lines of its stderr file, each indented by two spaces; "  (empty)\n" if none.
  std::string err_tail(int lines = 15) const;

  const std::string& label() const { return label_; }
  const std::filesystem::path& out_path() const { return out_path_; }
  const std::filesystem::path& err_path() const { return err_path_; }
  int port() const { return port_; }  // 0 until wait_listening() returned
  pid_t pid() const { return pid_; }

 private:
  void launch();

  std::filesystem::path executable_;
  std::vector<std::string> args_;
  Environment env_;
  std::string label_;
  std::filesystem::path out_path_, err_path_;
  bool append_ = false;
  std::uintmax_t out_offset_ = 0;  // where this launch's stdout begins in out_path_
  pid_t pid_ = -1;
  int port_ = 0;
  std::optional<int> status_;
};

// A command run to its end: exit_code(status), and its whole stdout and stderr.
struct Finished {
  int exit_code = -1;
  std::string out, err;
};
// Runs `executable` (as ChildProcess does) until it ends. When it has not ended within `timeout`
// it is killed with SIGKILL and Error is thrown.
Finished run_to_end(std::filesystem::path executable, std::vector<std::string> args,
                    const std::filesystem::path& dir, Options options = {},
                    std::chrono::milliseconds timeout = std::chrono::seconds(60));

}  // namespace webhooks::launcher
