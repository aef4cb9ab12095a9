#include "webhooks/launcher/child_process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <thread>

#include "spawn.h"

namespace webhooks::launcher {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

constexpr auto kListenPoll = milliseconds(10);
constexpr auto kExitPoll = milliseconds(5);
constexpr std::string_view kListening = "listening on ";

fs::path resolve(fs::path executable) {
  if (executable.string().find('/') == std::string::npos) executable = bin_dir() / executable;
  if (::access(executable.c_str(), X_OK) != 0) {
    throw Error("cannot start " + executable.string() + ": " + std::strerror(errno));
  }
  return executable;
}

std::string default_label(const fs::path& executable) {
  static std::atomic<int> counter{0};
  return executable.filename().string() + "." + std::to_string(++counter);
}

// PORT of `listening on HOST:PORT`, or 0 when `line` is not that.
int port_of(const std::string& line) {
  const std::size_t colon = line.rfind(':');
  if (!line.starts_with(kListening) || colon == std::string::npos) return 0;
  int port = 0;
  const char* end = line.data() + line.size();
  const auto [ptr, ec] = std::from_chars(line.data() + colon + 1, end, port);
  return ec == std::errc() && ptr == end && port > 0 && port <= 65535 ? port : 0;
}

}  // namespace

fs::path bin_dir() { return WEBHOOKS_LAUNCHER_BIN_DIR; }

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return "exit code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = ::strsignal(sig);
    return "killed by signal " + std::to_string(sig) + (name ? std::string(" (") + name + ")" : "");
  }
  return "wait status " + std::to_string(status);
}

int exit_code(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

ChildProcess::ChildProcess(fs::path executable, std::vector<std::string> args, const fs::path& dir,
                           Options options)
    : executable_(resolve(std::move(executable))),
      args_(std::move(args)),
      env_(std::move(options.env)),
      label_(options.label.empty() ? default_label(executable_) : std::move(options.label)),
      out_path_(options.out_path.empty() ? dir / (label_ + ".out") : std::move(options.out_path)),
      err_path_(options.err_path.empty() ? dir / (label_ + ".err") : std::move(options.err_path)),
      append_(options.append) {
  launch();
}

ChildProcess::~ChildProcess() { stop(); }

void ChildProcess::launch() {
  out_offset_ = append_ ? detail::size_of(out_path_) : 0;
  pid_ = detail::spawn(executable_, args_, detail::merged_environment(env_), out_path_, err_path_,
                       append_);
  status_.reset();
  port_ = 0;
}

void ChildProcess::restart() {
  if (running()) throw Error(label_ + " is still running");
  launch();
}

int ChildProcess::wait_listening(milliseconds timeout) {
  return wait_listening(Clock::now() + timeout);
}

int ChildProcess::wait_listening(Clock::time_point deadline) {
  while (true) {
    const std::string text = detail::read_from(out_path_, out_offset_);
    if (const std::size_t newline = text.find('\n'); newline != std::string::npos) {
      const std::string line = text.substr(0, newline);
      port_ = port_of(line);
      if (port_ == 0) {
        throw Error(label_ + " printed \"" + line + "\" instead of \"listening on HOST:PORT\"");
      }
      return port_;
    }
    if (!running()) {
      throw Error(label_ + " exited (" + describe_exit() + ") before listening. The end of " +
                  err_path_.string() + ":\n" + err_tail());
    }
    if (Clock::now() > deadline) {
      throw Error(label_ + " did not print \"listening on HOST:PORT\" in time. The end of " +
                  err_path_.string() + ":\n" + err_tail());
    }
    std::this_thread::sleep_for(kListenPoll);
  }
}

int ChildProcess::kill_and_wait(int signal, milliseconds timeout) {
  if (running()) ::kill(pid_, signal);
  const auto status = wait_exit(timeout);
  if (!status) {
    throw Error(label_ + " did not exit within " + std::to_string(timeout.count()) +
                " ms of signal " + std::to_string(signal));
  }
  return *status;
}

std::optional<int> ChildProcess::wait_exit(milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (running() && Clock::now() < deadline) std::this_thread::sleep_for(kExitPoll);
  return status_;
}

bool ChildProcess::running() {
  if (status_) return false;
  int status = 0;
  pid_t done = 0;
  do {
    done = ::waitpid(pid_, &status, WNOHANG);
  } while (done < 0 && errno == EINTR);
  if (done == pid_) status_ = status;
  if (done < 0) status_ = 255 << 8;  // ECHILD: reaped elsewhere; recorded as exit code 255
  return !status_;
}

int ChildProcess::stop(milliseconds grace) {
  if (!running()) return *status_;
  ::kill(pid_, SIGTERM);
  if (wait_exit(grace)) return *status_;
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  status_ = status;
  return status;
}

std::string ChildProcess::describe_exit() const {
  return status_ ? describe_wait_status(*status_) : std::string("running");
}

std::string ChildProcess::out() const { return detail::read_from(out_path_); }
std::string ChildProcess::err() const { return detail::read_from(err_path_); }
std::string ChildProcess::err_tail(int lines) const { return detail::tail(err_path_, lines); }

Finished run_to_end(fs::path executable, std::vector<std::string> args, const fs::path& dir,
                    Options options, milliseconds timeout) {
  ChildProcess child(std::move(executable), std::move(args), dir, std::move(options));
  const auto status = child.wait_exit(timeout);
  if (!status) {
    child.stop(milliseconds(0));
    throw Error(child.label() + " did not finish within " + std::to_string(timeout.count()) +
                " ms");
  }
  return Finished{exit_code(*status), child.out(), child.err()};
}

}  // namespace webhooks::launcher
