#include "webhooks/examples/flags.h"

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "webhooks/db.h"
#include "webhooks/error.h"
#include "webhooks/examples/server.h"
#include "webhooks/rfc3339.h"
#include "webhooks/secret.h"

namespace webhooks::examples {
namespace {

constexpr std::int64_t kMaxSeconds = kMaxFlagDuration.count();

// A validator that accepts `text` when `holds(text)` and otherwise says "must be <rule>, not
// <text>". `tag` is what --help shows after the type. CLI::Range prints a double's bounds with
// 300 digits; these messages print them as written here.
CLI::Validator rule(const std::string& tag, const std::string& what,
                    std::function<bool(const std::string&)> holds) {
  return CLI::Validator(
      [what, holds](std::string& text) -> std::string {
        return holds(text) ? std::string() : "must be " + what + ", not " + text;
      },
      tag);
}

// A whole number from `min` to `max`, written in decimal digits only (CLI11 would read "010" as
// octal 8 and "0x10" as 16; "1.5" and "1e3" it refuses):
// "must be a whole number <of>from <min> to <max><note>, not <text>".
CLI::Validator whole_number(const std::string& tag, const std::string& of, std::int64_t min,
                            std::int64_t max, const std::string& note = "") {
  return rule(tag,
              "a whole number " + of + "from " + std::to_string(min) + " to " +
                  std::to_string(max) + note,
              [min, max](const std::string& text) {
                const bool decimal = !text.empty() &&
                                     text.find_first_not_of("0123456789") == std::string::npos &&
                                     (text.size() == 1 || text[0] != '0');
                std::int64_t value = 0;
                return decimal && CLI::detail::lexical_cast(text, value) && value >= min &&
                       value <= max;
              });
}

}  // namespace

std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kUsageExitCode;
  }
}

CLI::Validator log_levels() {
  return CLI::IsMember(std::vector<std::string>{"debug", "info", "warn", "error"},
                       CLI::ignore_case);
}

CLI::Validator sqlite_synchronous_values() {
  const std::vector<std::string> values(std::begin(db::kSqliteSynchronousValues),
                                        std::end(db::kSqliteSynchronousValues));
  return CLI::IsMember(values, CLI::ignore_case);
}

CLI::Validator duration(DurationUnit unit, Zero zero) {
  const bool zero_ok = zero == Zero::allowed;
  const std::string tag = zero_ok ? "NONNEGATIVE" : "POSITIVE";
  const std::string years = " (10 years)";
  const std::int64_t min = zero_ok ? 0 : 1;
  if (unit == DurationUnit::seconds) {
    const double least = zero_ok ? 0.0 : 0.001;  // 1 ms, the step it is kept in
    return rule(tag,
                std::string("a number of seconds from ") + (zero_ok ? "0" : "0.001") + " to " +
                    std::to_string(kMaxSeconds) + years,
                [least](const std::string& text) {
                  double value = 0;
                  return CLI::detail::lexical_cast(text, value) && std::isfinite(value) &&
                         value >= least && value <= static_cast<double>(kMaxSeconds);
                });
  }
  const bool ms = unit == DurationUnit::milliseconds;
  const std::int64_t max = ms ? std::chrono::milliseconds(kMaxFlagDuration).count() : kMaxSeconds;
  return whole_number(tag, ms ? "of milliseconds " : "of seconds ", min, max, years);
}

CLI::Validator count(int min, int max) {
  return whole_number(min > 0 ? "POSITIVE" : "NONNEGATIVE", "", min, max);
}

CLI::Validator unix_seconds(std::int64_t max) {
  std::string latest = format_rfc3339(max * 1000);  // "9999-12-31T23:59:59.000Z"
  latest.erase(latest.size() - 5, 4);                 // without the milliseconds
  return whole_number("UNIX_SECONDS", "of Unix seconds ", 0, max, " (" + latest + ")");
}

std::chrono::milliseconds seconds_to_millis(double seconds) {
  return std::chrono::milliseconds(std::llround(seconds * 1000));
}

CLI::Validator accepted_by(const std::string& tag, std::function<void(const std::string&)> parse) {
  return CLI::Validator(
      [parse](std::string& text) -> std::string {
        try {
          parse(text);
          return {};
        } catch (const Error& e) {
          return e.what();
        }
      },
      tag);
}

CLI::Validator listen_address() {
  return accepted_by("HOST:PORT", [](const std::string& text) { parse_listen(text); });
}

CLI::Validator signing_secret() {
  return accepted_by("whsec_...", [](const std::string& text) { Secret::parse(text); });
}

}  // namespace webhooks::examples
