#include "process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <fstream>
#include <sstream>
#include <thread>

namespace webhooks::demo {
namespace {

namespace fs = std::filesystem;

constexpr auto kPollInterval = std::chrono::milliseconds(20);

int open_append(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw Failure("cannot open " + path.string() + ": " + std::strerror(errno));
  }
  return fd;
}

// fork + exec with stdout/stderr on the given descriptors and stdin on /dev/null. Everything the
// child does between fork and exec is async-signal-safe (the parent has threads).
pid_t fork_exec(const fs::path& executable, const std::vector<std::string>& args, int out_fd,
                int err_fd) {
  std::vector<std::string> argv_strings;
  argv_strings.push_back(executable.string());
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const pid_t parent = ::getpid();

  const pid_t pid = ::fork();
  if (pid < 0) {
    if (null_fd >= 0) ::close(null_fd);
    throw Failure(std::string("fork failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::setpgid(0, 0);                     // Ctrl-C in the terminal reaches only the demo
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);  // the demo killed outright takes its servers along
    if (::getppid() != parent) ::_exit(126);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);  // the demo blocks SIGINT/SIGTERM; exec keeps masks
    ::signal(SIGPIPE, SIG_DFL);
    if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
    ::dup2(out_fd, STDOUT_FILENO);
    ::dup2(err_fd, STDERR_FILENO);
    ::execv(argv[0], argv.data());
    const char msg[] = "demo: exec failed\n";
    [[maybe_unused]] auto ignored = ::write(STDERR_FILENO, msg, sizeof msg - 1);
    ::_exit(127);
  }
  if (null_fd >= 0) ::close(null_fd);
  return pid;
}

std::string read_from(const fs::path& path, std::uintmax_t offset) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  in.seekg(static_cast<std::streamoff>(offset));
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::uintmax_t size_of(const fs::path& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  return ec ? 0 : size;
}

}  // namespace

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return "exit code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = ::strsignal(sig);
    return "killed by signal " + std::to_string(sig) + (name ? std::string(" (") + name + ")" : "");
  }
  return "wait status " + std::to_string(status);
}

Child::Child(std::string name, fs::path executable, std::vector<std::string> args,
             const fs::path& work_dir)
    : name_(std::move(name)),
      executable_(std::move(executable)),
      args_(std::move(args)),
      out_path_(work_dir / (name_ + ".out")),
      log_path_(work_dir / (name_ + ".log")) {}

Child::~Child() {
  try {
    stop(std::chrono::seconds(5));
  } catch (...) {
  }
}

void Child::spawn() {
  const int out_fd = open_append(out_path_);
  int err_fd = -1;
  try {
    err_fd = open_append(log_path_);
    pid_ = fork_exec(executable_, args_, out_fd, err_fd);
  } catch (...) {
    ::close(out_fd);
    if (err_fd >= 0) ::close(err_fd);
    throw;
  }
  ::close(out_fd);
  ::close(err_fd);
  status_.reset();
}

int Child::start(Clock::time_point deadline) {
  if (pid_ > 0 && running()) throw Failure(name_ + " is already running");
  const std::uintmax_t offset = size_of(out_path_);  // restarts append to the same file
  spawn();
  const std::string prefix = "listening on ";
  while (true) {
    const std::string out = read_from(out_path_, offset);
    if (const auto newline = out.find('\n'); newline != std::string::npos) {
      const std::string line = out.substr(0, newline);
      const auto colon = line.rfind(':');
      if (line.rfind(prefix, 0) != 0 || colon == std::string::npos) {
        throw Failure(name_ + " printed \"" + line + "\" instead of \"listening on HOST:PORT\"");
      }
      port_ = std::stoi(line.substr(colon + 1));
      return port_;
    }
    if (!running()) {
      throw Failure(name_ + " exited (" + describe_exit() + ") before listening. The end of " +
                    log_path_.string() + ":\n" + log_tail());
    }
    if (Clock::now() > deadline) {
      stop(std::chrono::seconds(2));
      throw Failure(name_ + " did not print \"listening on HOST:PORT\" in time. The end of " +
                    log_path_.string() + ":\n" + log_tail());
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

bool Child::running() {
  if (pid_ <= 0 || status_) return false;
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    status_ = status;
    return false;
  }
  return true;
}

std::string Child::describe_exit() const {
  return status_ ? describe_wait_status(*status_) : std::string("running");
}

std::optional<int> Child::stop(std::chrono::milliseconds grace) {
  if (pid_ <= 0) return std::nullopt;
  if (!running()) return status_;
  ::kill(pid_, SIGTERM);
  const auto deadline = Clock::now() + grace;
  while (running()) {
    if (Clock::now() > deadline) {
      ::kill(pid_, SIGKILL);
      int status = 0;
      if (::waitpid(pid_, &status, 0) == pid_) status_ = status;
      break;
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  return status_;
}

std::string Child::log_tail(int lines) const {
  std::ifstream in(log_path_);
  std::deque<std::string> last;
  for (std::string line; std::getline(in, line);) {
    last.push_back(line);
    if (static_cast<int>(last.size()) > lines) last.pop_front();
  }
  std::string out;
  for (const std::string& line : last) out += "  " + line + "\n";
  return out.empty() ? "  (empty)\n" : out;
}

Finished run_to_end(const fs::path& executable, const std::vector<std::string>& args,
                    const fs::path& out_file, const fs::path& log, Clock::time_point deadline) {
  std::error_code ec;
  fs::remove(out_file, ec);
  const int out_fd = open_append(out_file);
  const int err_fd = open_append(log);
  pid_t pid = -1;
  try {
    pid = fork_exec(executable, args, out_fd, err_fd);
  } catch (...) {
    ::close(out_fd);
    ::close(err_fd);
    throw;
  }
  ::close(out_fd);
  ::close(err_fd);
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (Clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      throw Failure(executable.filename().string() + " did not finish in time");
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  Finished done;
  done.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  done.out = read_from(out_file, 0);
  return done;
}

}  // namespace webhooks::demo
