// Command-line conventions every executable of examples/ shares (CLI11): the same --log-level and
// --sqlite-synchronous values, readable messages for numbers out of range, and exit code 2 for
// any usage error (0 for --help and --version).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>

namespace webhooks::examples {

// Exit code of a command line that could not be parsed.
inline constexpr int kUsageExitCode = 2;

// Parses argv with `app`. Returns std::nullopt when the program should go on, otherwise the exit
// code: 0 after --help or --version (printed on stdout), kUsageExitCode after a usage error
// (CLI11's message on stderr), whatever CLI11's own code for it.
std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv);

// --log-level: debug, info, warn or error, any case (the value becomes lower case).
CLI::Validator log_levels();
// --sqlite-synchronous: db::kSqliteSynchronousValues (NORMAL, FULL, EXTRA), any case (the value
// becomes upper case).
CLI::Validator sqlite_synchronous_values();

// A number greater than 0 / at least 0; the message names the value and the bound only, e.g.
// "--lease: must be a number greater than 0, not -1".
CLI::Validator positive_number();
CLI::Validator non_negative_number();

}  // namespace webhooks::examples
