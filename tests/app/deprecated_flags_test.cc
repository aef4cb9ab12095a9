#include "webhooks/app/deprecated_flags.h"

#include <errno.h>

#include <catch2/catch.hpp>
#include <iostream>
#include <sstream>

using namespace webhooks::app;

namespace {

// A command line parsed by a small app with the flags the executables use; what it printed on
// stderr, and the exit code parse_command_line gave (-1: go on).
struct Parsed {
  std::int64_t timeout_ms = 30'000;
  double lease_s = 30;
  int threads = 64;
  std::string err;
  int exit_code = -1;
};

Parsed parse(std::vector<std::string> args) {
  Parsed p;
  CLI::App app{"test"};
  CLI::Option* timeout = add_duration(app, "--request-timeout", p.timeout_ms, StoreAs::milliseconds,
                                      "time for a request");
  add_deprecated_alias(app, timeout, "--request-timeout-ms", OldValue::milliseconds);
  add_duration(app, "--lease", p.lease_s, StoreAs::seconds, "lease")
      ->transform(deprecated_bare_number("--lease", DurationUnit::seconds));
  CLI::Option* threads = app.add_option("--threads", p.threads)->check(count(1, 4096));
  add_deprecated_alias(app, threads, "--http-threads");
  args.insert(args.begin(), "prog");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  std::ostringstream err;
  std::streambuf* saved = std::cerr.rdbuf(err.rdbuf());
  p.exit_code = parse_command_line(app, static_cast<int>(argv.size()), argv.data()).value_or(-1);
  std::cerr.rdbuf(saved);
  p.err = err.str();
  return p;
}

const std::string kProgram = std::string(program_invocation_short_name) + ": ";

// `args` (an old spelling) parsed: it printed one line, `line` after the program's name.
Parsed deprecated(const std::vector<std::string>& args, const std::string& line) {
  Parsed p = parse(args);
  CHECK(p.err == kProgram + line);
  return p;
}

}  // namespace

TEST_CASE("the new spellings take a unit and print nothing") {
  const Parsed p = parse({"--request-timeout", "1500ms", "--lease", "5m", "--threads", "8"});
  CHECK(p.exit_code == -1);
  CHECK(p.timeout_ms == 1500);
  CHECK(p.lease_s == 300);
  CHECK(p.threads == 8);
  CHECK(p.err.empty());
  CHECK(parse({"--lease", "250ms"}).lease_s == 0.25);
}

TEST_CASE("an old spelling works and prints one line naming the new one") {
  const Parsed p = deprecated({"--request-timeout-ms", "30000"},
                              "--request-timeout-ms is deprecated; use --request-timeout 30s\n");
  CHECK(p.exit_code == -1);
  CHECK(p.timeout_ms == 30'000);
  CHECK(deprecated({"--request-timeout-ms", "1500"},
                   "--request-timeout-ms is deprecated; use --request-timeout 1500ms\n")
            .timeout_ms == 1500);
  CHECK(deprecated({"--http-threads", "8"}, "--http-threads is deprecated; use --threads\n")
            .threads == 8);
  CHECK(deprecated({"--lease", "30"}, "--lease 30 without a unit is deprecated; use --lease 30s\n")
            .lease_s == 30);
  CHECK(deprecated({"--lease", "0.5"},
                   "--lease 0.5 without a unit is deprecated; use --lease 500ms\n")
            .lease_s == 0.5);
}

TEST_CASE("bad values are usage errors, the old spelling checked as it was") {
  Parsed p = parse({"--request-timeout", "30"});
  CHECK(p.exit_code == kUsageExitCode);
  CHECK(p.err ==
        "--request-timeout: duration \"30\" has no unit; use ms, s, m, h or d\nRun with --help "
        "for more information.\n");
  p = parse({"--request-timeout", "0s"});
  CHECK(p.exit_code == kUsageExitCode);
  CHECK(p.err.starts_with("--request-timeout: must be greater than 0, e.g. \"5s\"\n"));
  p = parse({"--request-timeout-ms", "1.5"});
  CHECK(p.exit_code == kUsageExitCode);
  CHECK(
      p.err.starts_with("--request-timeout-ms: must be a whole number of milliseconds from 1 to "
                        "315360000000 (10 years), not 1.5\n"));
  p = parse({"--lease", "0.0001"});
  CHECK(p.exit_code == kUsageExitCode);
  CHECK(
      p.err.starts_with("--lease: must be a number of seconds from 0.001 to 315360000 (10 "
                        "years), not 0.0001\n"));
  p = parse({"--http-threads", "0"});
  CHECK(p.exit_code == kUsageExitCode);
  CHECK(p.err.find("--threads: must be a whole number from 1 to 4096, not 0\n") !=
        std::string::npos);
}
