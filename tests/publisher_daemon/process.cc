#include "process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <thread>

#include "support/test_env.h"

namespace webhooks::test {

Daemon::Daemon(const std::vector<std::string>& args, const std::string& dir) {
  static int counter = 0;
  const std::string stem = dir + "/publisherd-" + std::to_string(++counter);
  out_path_ = stem + ".out";
  err_path_ = stem + ".err";
  const std::string exe = bin_dir() + "/webhooks-publisherd";
  std::vector<std::string> argv_store{exe};
  argv_store.insert(argv_store.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_store) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_ = fork();
  REQUIRE(pid_ >= 0);
  if (pid_ == 0) {
    const int out = open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out, 1);
    dup2(err, 2);
    execv(exe.c_str(), argv.data());
    _exit(127);
  }
}

Daemon::~Daemon() {
  if (!exited_ && pid_ > 0) kill_and_wait(SIGKILL);
}

int Daemon::wait_listening() {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string text = out();
    const auto newline = text.find('\n');
    if (newline != std::string::npos) {
      const std::string line = text.substr(0, newline);
      REQUIRE(line.rfind("listening on ", 0) == 0);
      return std::stoi(line.substr(line.rfind(':') + 1));
    }
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      exited_ = true;
      FAIL("webhooks-publisherd exited before listening: " << err());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  FAIL("webhooks-publisherd did not print `listening on` within 15 s: " << err());
  return 0;
}

int Daemon::kill_and_wait(int signal) {
  kill(pid_, signal);
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (waitpid(pid_, &status, WNOHANG) != pid_) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  exited_ = true;
  return status;
}

std::string Daemon::out() const {
  std::FILE* f = std::fopen(out_path_.c_str(), "rb");
  if (!f) return {};
  std::string text;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  std::fclose(f);
  return text;
}

std::string Daemon::err() const {
  std::FILE* f = std::fopen(err_path_.c_str(), "rb");
  if (!f) return {};
  std::string text;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  std::fclose(f);
  return text.size() > 4000 ? text.substr(text.size() - 4000) : text;
}

}  // namespace webhooks::test
