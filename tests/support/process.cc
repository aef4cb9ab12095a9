#include "support/process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "support/test_env.h"

extern char** environ;

namespace webhooks::test {
namespace {

using namespace std::chrono;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "signal " + std::to_string(WTERMSIG(status));
  return "status " + std::to_string(status);
}

// environ with `extra`'s NAME=VALUE entries added, replacing those of the same name.
std::vector<std::string> environment_with(const std::vector<std::string>& extra) {
  const auto name_of = [](const std::string& entry) { return entry.substr(0, entry.find('=')); };
  std::vector<std::string> entries;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    bool replaced = false;
    for (const std::string& x : extra) replaced = replaced || name_of(x) == name_of(entry);
    if (!replaced) entries.push_back(entry);
  }
  entries.insert(entries.end(), extra.begin(), extra.end());
  return entries;
}

}  // namespace

Process::Process(const std::string& executable, const std::vector<std::string>& args,
                 const std::string& dir, const std::vector<std::string>& env) {
  static int counter = 0;
  label_ = executable + "." + std::to_string(++counter);
  out_path_ = dir + "/" + label_ + ".out";
  err_path_ = dir + "/" + label_ + ".err";
  const std::string path = bin_dir() + "/" + executable;
  std::vector<std::string> argv_storage = {path};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  std::vector<std::string> env_storage = environment_with(env);
  std::vector<char*> envp;
  for (std::string& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);
  const int rc = posix_spawn(&pid_, path.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) FAIL("cannot start " << path << ": " << std::strerror(rc));
}

Process::~Process() {
  if (status_ || pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  if (!wait_exit(seconds(10))) {
    ::kill(pid_, SIGKILL);
    wait_exit(seconds(10));
  }
}

int Process::wait_listening() {
  const auto deadline = steady_clock::now() + seconds(15);
  while (steady_clock::now() < deadline) {
    const std::string text = out();
    const std::size_t newline = text.find('\n');
    if (newline != std::string::npos) {
      const std::string line = text.substr(0, newline);
      const std::size_t colon = line.rfind(':');
      if (line.rfind("listening on ", 0) != 0 || colon == std::string::npos) {
        FAIL(label_ << ": first line is not `listening on HOST:PORT`: " << line);
      }
      return std::stoi(line.substr(colon + 1));
    }
    if (auto status = wait_exit(milliseconds(0))) {
      FAIL(label_ << " ended (" << describe_status(*status) << ") before listening: " << err());
    }
    std::this_thread::sleep_for(milliseconds(10));
  }
  FAIL(label_ << " did not print `listening on` within 15 s: " << err());
  return 0;
}

int Process::kill_and_wait(int signal) {
  if (!status_) ::kill(pid_, signal);
  const auto status = wait_exit(seconds(15));
  if (!status) FAIL(label_ << " did not exit after signal " << signal);
  return *status;
}

std::optional<int> Process::wait_exit(milliseconds timeout) {
  const auto deadline = steady_clock::now() + timeout;
  while (!status_) {
    int status = 0;
    const pid_t done = ::waitpid(pid_, &status, WNOHANG);
    if (done == pid_) {
      status_ = status;
      break;
    }
    if (steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(milliseconds(5));
  }
  return status_;
}

std::string Process::out() const { return slurp(out_path_); }
std::string Process::err() const { return slurp(err_path_); }

Finished run_to_end(const std::string& executable, const std::vector<std::string>& args,
                    const std::string& dir, const std::vector<std::string>& env) {
  Process process(executable, args, dir, env);
  const auto status = process.wait_exit(seconds(60));
  if (!status) FAIL(executable << " did not finish within 60 s");
  Finished done;
  done.exit_code = WIFEXITED(*status) ? WEXITSTATUS(*status) : 128 + WTERMSIG(*status);
  done.out = process.out();
  done.err = process.err();
  return done;
}

}  // namespace webhooks::test
