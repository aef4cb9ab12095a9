// For the tests of secret flags (--NAME-file, app/secret_flags.h): files with a given mode, and
// what `ps` shows of a process.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <string>
#include <vector>

#include "support/test_env.h"
#include "webhooks/launcher/child_process.h"

namespace webhooks::test {

// Writes `content` to `path` with permission bits `mode` (0600: only the owner); returns `path`.
inline std::string write_secret_file(const std::string& path, const std::string& content,
                                     mode_t mode = 0600) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
  REQUIRE(::chmod(path.c_str(), mode) == 0);
  return path;
}

// /proc/PID/cmdline: the arguments `ps` shows, NUL-separated.
inline std::string command_line_of(pid_t pid) {
  return read_file("/proc/" + std::to_string(pid) + "/cmdline");
}

// Launcher options whose environment holds `entries`, each "NAME=VALUE" (split at the first '=').
inline launcher::Options with_env(const std::vector<std::string>& entries) {
  launcher::Options options;
  for (const std::string& entry : entries) {
    const std::size_t eq = entry.find('=');
    options.env.emplace_back(entry.substr(0, eq),
                             eq == std::string::npos ? "" : entry.substr(eq + 1));
  }
  return options;
}

}  // namespace webhooks::test
