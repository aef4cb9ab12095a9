// The launcher's internals: starting a process (spawn.cc) and reading its files (files.cc).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "webhooks/launcher/child_process.h"

namespace webhooks::launcher::detail {

// The parent's environment as NAME=VALUE strings with `env` set over it. Throws Error for a
// NAME that is empty or holds '='.
std::vector<std::string> merged_environment(const Environment& env);

// fork + execve of `executable` with `args` and the environment `envp`: stdin on /dev/null,
// stdout and stderr on `out` and `err` (appended to, or emptied first), its own process group,
// PR_SET_PDEATHSIG = SIGTERM, no blocked signals, SIGPIPE and every signal the parent
// handles at its default (the parent's other ignored signals stay ignored, as exec keeps them).
// Throws Error when a file cannot be opened or fork fails. Returns the child's pid.
pid_t spawn(const std::filesystem::path& executable, const std::vector<std::string>& args,
            const std::vector<std::string>& envp, const std::filesystem::path& out,
            const std::filesystem::path& err, bool append);

// The bytes of `path` from `offset` on ("" when it cannot be read).
std::string read_from(const std::filesystem::path& path, std::uintmax_t offset = 0);
// Its size, 0 when it does not exist.
std::uintmax_t size_of(const std::filesystem::path& path);
// The last `lines` lines of `path`, each as "  LINE\n"; "  (empty)\n" when there are none.
std::string tail(const std::filesystem::path& path, int lines);

}  // namespace webhooks::launcher::detail
