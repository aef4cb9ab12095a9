// Old spellings of flags, kept for one release after issue 28 made every executable spell one
// meaning one way (docs/operations.md, "Flag names"). An old spelling still works; it prints one
// line on stderr, `PROGRAM: --http-threads is deprecated; use --threads`, and --help lists it in
// the group "Deprecated".
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "webhooks/app/flags.h"

namespace webhooks::app {

// What a value of the old spelling is.
enum class OldValue {
  same,          // what the new flag takes (--http-threads 8 is --threads 8)
  milliseconds,  // a whole number of milliseconds (--request-timeout-ms 30000 is
                 // --request-timeout 30s)
  seconds,       // a number of seconds, a fraction allowed (--lease 0.5 was 500ms)
};

// Adds `old_name` to `app` as a deprecated spelling of `current` (an option already added to
// `app`, typically taking a duration with a unit). When given, its value is checked as the old
// flag checked it (for milliseconds and seconds: duration(unit, zero), naming `old_name`),
// converted (a number of milliseconds or seconds becomes the same duration with a unit, e.g.
// "30000" -> "30s"), and handed to `current`, replacing a value from the environment or a
// --config file; the warning names the value to write instead when it changed:
// `orders-api: --request-timeout-ms is deprecated; use --request-timeout 30s`.
// Returns the alias.
CLI::Option* add_deprecated_alias(CLI::App& app, CLI::Option* current, const std::string& old_name,
                                  OldValue value = OldValue::same, Zero zero = Zero::refused);

// A transform for a duration flag that now takes a unit (--lease 30s) and used to take a bare
// number of `unit`s (--lease 30): a bare number is checked as before (duration(unit, zero)),
// replaced by the same duration with a unit, and warned about once:
// `merchant-receiver: --lease 30 without a unit is deprecated; use --lease 30s`. Any other text
// passes unchanged to the next check (duration_text). Put it before that check.
CLI::Validator deprecated_bare_number(const std::string& flag, DurationUnit unit,
                                      Zero zero = Zero::refused);

// A duration flag kept in whole seconds (--tolerance 300s, 5m), stored in `seconds`: add_duration
// with a check that the value is whole seconds ("--tolerance: must be whole seconds, e.g. \"300s\"
// or \"5m\"") and a bare number of seconds as its deprecated spelling (deprecated_bare_number,
// checked as DurationUnit::whole_seconds was). Returns the option.
CLI::Option* add_whole_seconds(CLI::App& app, const std::string& name, std::int64_t& seconds,
                               const std::string& help, Zero zero = Zero::refused);

}  // namespace webhooks::app
