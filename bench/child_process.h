// A server binary of this build run as a child process for a benchmark: its stdout and stderr go
// to files in a directory, its port is read from its first line `listening on HOST:PORT`, and it
// is stopped with SIGTERM (SIGKILL after 10 s) when the object goes.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace bench {

// The whole file as text ("" when it cannot be read).
inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// build/bin/NAME beside this benchmark (build/bin/bench/), or "" when it was not built.
inline std::string bin_path(const char* name) {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const auto path = self.parent_path().parent_path() / name;
  return std::filesystem::exists(path) ? path.string() : std::string();
}

struct ChildProcess {
  pid_t pid = -1;
  int port = 0;  // 0: it did not announce `listening on HOST:PORT` within 15 s
  std::string out, err;  // DIR/LABEL.out and DIR/LABEL.err

  ChildProcess(const std::string& path, const std::vector<std::string>& args,
               const std::string& dir, const std::string& label)
      : out(dir + "/" + label + ".out"), err(dir + "/" + label + ".err") {
    std::vector<std::string> text = {path};
    text.insert(text.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : text) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int rc = posix_spawn(&pid, path.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
      pid = -1;
      return;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (std::chrono::steady_clock::now() < deadline) {
      const std::string text = slurp(out);
      if (const std::size_t newline = text.find('\n'); newline != std::string::npos) {
        const std::string line = text.substr(0, newline);
        if (line.rfind("listening on ", 0) == 0) {
          port = std::atoi(line.c_str() + line.rfind(':') + 1);
        }
        return;
      }
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        pid = -1;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess() {
    if (pid <= 0) return;
    ::kill(pid, SIGTERM);
    int status = 0;
    for (int i = 0; i < 1000; ++i) {
      if (::waitpid(pid, &status, WNOHANG) == pid) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
};

}  // namespace bench
