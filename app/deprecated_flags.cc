#include "webhooks/app/deprecated_flags.h"

#include <errno.h>  // program_invocation_short_name

#include <cmath>
#include <iostream>

#include "webhooks/duration.h"
#include "webhooks/error.h"

namespace webhooks::app {
namespace {

void warn(const std::string& old_spelling, const std::string& new_spelling) {
  std::cerr << program_invocation_short_name << ": " << old_spelling << " is deprecated; use "
            << new_spelling << "\n";
}

// A value of the old flag as the new one takes it: "30000" (ms) -> "30s", "0.5" (s) -> "500ms".
std::string with_unit(const std::string& text, OldValue value) {
  if (value == OldValue::same) return text;
  double number = 0;
  CLI::detail::lexical_cast(text, number);  // checked before by duration(unit)
  const double ms = value == OldValue::seconds ? number * 1000 : number;
  return format_duration(std::chrono::milliseconds(std::llround(ms)));
}

}  // namespace

CLI::Option* add_deprecated_alias(CLI::App& app, CLI::Option* current, const std::string& old_name,
                                  OldValue value, Zero zero) {
  const std::string new_name = current->get_name();
  CLI::Option* alias = app.add_option_function<std::string>(
      old_name,
      [=](const std::string& text) {
        const std::string converted = with_unit(text, value);
        warn(old_name, value == OldValue::same ? new_name : new_name + " " + converted);
        current->clear();
        current->add_result(converted);
        current->run_callback();
      },
      "deprecated: use " + new_name);
  alias->group("Deprecated");
  if (value != OldValue::same) {
    const DurationUnit unit =
        value == OldValue::seconds ? DurationUnit::seconds : DurationUnit::milliseconds;
    alias->check(duration(unit, zero));
  }
  return alias;
}

CLI::Validator deprecated_bare_number(const std::string& flag, DurationUnit unit, Zero zero) {
  const OldValue value =
      unit == DurationUnit::milliseconds ? OldValue::milliseconds : OldValue::seconds;
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        if (text.empty() || text.find_first_not_of("0123456789.") != std::string::npos) return "";
        if (std::string problem = duration(unit, zero)(text); !problem.empty()) return problem;
        const std::string converted = with_unit(text, value);
        warn(flag + " " + text + " without a unit", flag + " " + converted);
        text = converted;
        return "";
      },
      "");
}

CLI::Option* add_whole_seconds(CLI::App& app, const std::string& name, std::int64_t& seconds,
                               const std::string& help, Zero zero) {
  return add_duration(app, name, seconds, StoreAs::seconds, help, zero)
      ->check(accepted_by("",
                          [](const std::string& text) {
                            if (parse_duration(text).count() % 1000 != 0) {
                              throw Error(ErrorCode::invalid_argument,
                                          "must be whole seconds, e.g. \"300s\" or \"5m\"");
                            }
                          }))
      ->transform(deprecated_bare_number(name, DurationUnit::whole_seconds, zero));
}

}  // namespace webhooks::app
