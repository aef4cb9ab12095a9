// The `webhooks` CLI: each subcommand registers itself on the app and sets `action`, which main
// runs after parsing. Exit codes: 0 success, 1 a failed check or request, 2 bad usage.
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>

#include "webhooks/app/flags.h"
#include "webhooks/app/secret_flags.h"

namespace webhooks::cli {

using Action = std::function<int()>;

inline constexpr int kOk = 0;
inline constexpr int kFailed = 1;
inline constexpr int kUsage = app::kUsageExitCode;

void add_sign(CLI::App& app, Action& action);
void add_verify(CLI::App& app, Action& action);
void add_send(CLI::App& app, Action& action);
void add_listen(CLI::App& app, Action& action);
void add_admin(CLI::App& app, Action& action);     // replay, events, attempts
void add_endpoint(CLI::App& app, Action& action);  // endpoint list, show, create, update, …
void add_publish(CLI::App& app, Action& action);

// A usage error raised after parsing (a file that cannot be read, a bad secret): printed with the
// subcommand's name, exit code 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The largest input file the CLI reads (a body, data, headers, a capture): 64 MiB, so that a
// wrong path (/dev/zero, a log) is refused instead of filling memory.
inline constexpr std::size_t kMaxInputBytes = std::size_t{64} << 20;

// The bytes of `path`, or of standard input for "-". Throws UsageError: "cannot read PATH:
// <strerror>" (a missing file, a directory), "PATH is larger than 64 MiB", or for an empty path
// "a file name is missing (…)".
std::string read_input(const std::string& path);

// A --header flag's "Name: value" as (Name, value): the name an RFC 9110 token (section 5.6.2),
// the value without the spaces around it and without CR, LF or NUL. Throws UsageError
// ("--header must be \"Name: value\", not \"…\"").
std::pair<std::string, std::string> parse_header_flag(const std::string& text);

// The event data of --data TEXT (or @FILE) or --data-file FILE, exactly one of them: a JSON
// object, compacted with its number tokens and member order as written, nested at most
// kMaxJsonDepth - 1 deep (the event wraps it). Throws UsageError naming the flag.
std::string read_event_data(const std::string& data, const std::string& data_file);

}  // namespace webhooks::cli
