#include "webhooks/examples/flags.h"

#include <string>
#include <vector>

#include "webhooks/db.h"

namespace webhooks::examples {
namespace {

// Numbers greater than 0, or at least 0 when `zero_too`. CLI::PositiveNumber's message prints
// its bounds with 300 digits.
CLI::Validator number_above_zero(bool zero_too, const std::string& name) {
  const std::string rule = zero_too ? "at least 0" : "greater than 0";
  return CLI::Validator(
      [zero_too, rule](std::string& text) -> std::string {
        double value = 0;
        const bool number = CLI::detail::lexical_cast(text, value);
        if (number && (zero_too ? value >= 0 : value > 0)) return {};
        return "must be a number " + rule + ", not " + text;
      },
      name);
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

CLI::Validator positive_number() { return number_above_zero(false, "POSITIVE"); }
CLI::Validator non_negative_number() { return number_above_zero(true, "NONNEGATIVE"); }

}  // namespace webhooks::examples
