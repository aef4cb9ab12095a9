#include "process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <thread>

namespace receiver_test {

Process::Process(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  int fds[2];
  REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_ = ::fork();
  REQUIRE(pid_ >= 0);
  if (pid_ == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  stdout_fd_ = fds[0];
  std::string line;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (line.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    pollfd p{stdout_fd_, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char c;
    if (::read(stdout_fd_, &c, 1) != 1) break;
    line.push_back(c);
  }
  INFO("first stdout line of " << argv[0] << ": " << line);
  const std::string prefix = "listening on ";
  REQUIRE(line.rfind(prefix, 0) == 0);
  port_ = std::stoi(line.substr(line.rfind(':') + 1));
  REQUIRE(port_ > 0);
}

int Process::wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      reaped_ = true;
      return status;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return -1;
}

Process::~Process() {
  if (pid_ > 0 && !reaped_) {
    ::kill(pid_, SIGTERM);
    if (wait(std::chrono::seconds(5)) == -1) {
      ::kill(pid_, SIGKILL);
      wait(std::chrono::seconds(5));
    }
  }
  if (stdout_fd_ >= 0) ::close(stdout_fd_);
}

}  // namespace receiver_test
