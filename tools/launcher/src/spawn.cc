#include "spawn.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

extern char** environ;

namespace webhooks::launcher::detail {
namespace {

namespace fs = std::filesystem;

int open_output(const fs::path& path, bool append) {
  const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC);
  const int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) throw Error("cannot open " + path.string() + ": " + std::strerror(errno));
  return fd;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Makes `fd` the child's descriptor `target`, open across exec.
void install(int fd, int target) {
  if (fd == target) {
    ::fcntl(fd, F_SETFD, 0);
  } else {
    ::dup2(fd, target);
  }
}

// In the child, between fork and exec: only async-signal-safe calls (the parent has threads).
// Every signal is blocked until the parent's handlers are gone, so that none runs in the child.
[[noreturn]] void become(char* const argv[], char* const envp[], pid_t parent, int null_fd,
                         int out_fd, int err_fd) {
  struct sigaction action {};
  for (int sig = 1; sig < NSIG; ++sig) {
    if (::sigaction(sig, nullptr, &action) == 0 && action.sa_handler != SIG_IGN &&
        action.sa_handler != SIG_DFL) {
      ::signal(sig, SIG_DFL);
    }
  }
  ::signal(SIGPIPE, SIG_DFL);               // exec keeps ignored signals
  ::setpgid(0, 0);                          // a terminal's Ctrl-C reaches only the parent
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);       // the parent killed outright takes its children along
  if (::getppid() != parent) ::_exit(126);  // it died before prctl
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);  // exec keeps the mask (the demo blocks SIGINT)
  if (null_fd >= 0) install(null_fd, STDIN_FILENO);
  install(out_fd, STDOUT_FILENO);
  install(err_fd, STDERR_FILENO);
  ::execve(argv[0], argv, envp);
  const char msg[] = "launcher: exec failed\n";
  [[maybe_unused]] auto ignored = ::write(STDERR_FILENO, msg, sizeof msg - 1);
  ::_exit(127);
}

}  // namespace

std::vector<std::string> merged_environment(const Environment& env) {
  for (const auto& [name, value] : env) {
    if (name.empty() || name.find('=') != std::string::npos) {
      throw Error("environment variable name \"" + name + "\" is empty or holds '='");
    }
  }
  auto set_later = [&](std::string_view name, std::size_t from) {
    for (std::size_t i = from; i < env.size(); ++i) {
      if (env[i].first == name) return true;
    }
    return false;
  };
  std::vector<std::string> out;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    if (!set_later(text.substr(0, text.find('=')), 0)) out.emplace_back(text);
  }
  for (std::size_t i = 0; i < env.size(); ++i) {
    if (!set_later(env[i].first, i + 1)) out.push_back(env[i].first + "=" + env[i].second);
  }
  return out;
}

pid_t spawn(const fs::path& executable, const std::vector<std::string>& args,
            const std::vector<std::string>& envp, const fs::path& out, const fs::path& err,
            bool append) {
  std::vector<std::string> argv_strings{executable.string()};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<std::string> env_strings = envp;
  const std::vector<char*> argv = pointers(argv_strings);
  const std::vector<char*> env = pointers(env_strings);
  const int out_fd = open_output(out, append);
  int err_fd = -1;
  try {
    err_fd = open_output(err, append);
  } catch (...) {
    ::close(out_fd);
    throw;
  }
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const pid_t parent = ::getpid();
  sigset_t all, before;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &before);
  const pid_t pid = ::fork();
  if (pid == 0) become(argv.data(), env.data(), parent, null_fd, out_fd, err_fd);
  const int fork_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  for (int fd : {null_fd, out_fd, err_fd}) {
    if (fd >= 0) ::close(fd);
  }
  if (pid < 0)
    throw Error("cannot start " + executable.string() +
                ": fork failed: " + std::strerror(fork_errno));
  return pid;
}

}  // namespace webhooks::launcher::detail
