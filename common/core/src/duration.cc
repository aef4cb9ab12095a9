#include "webhooks/duration.h"

#include <array>
#include <cstdint>

#include "webhooks/error.h"

namespace webhooks {
namespace {

struct Unit {
  std::string_view name;
  std::int64_t ms;
};

// Largest first, for format_duration.
constexpr std::array<Unit, 5> kUnits = {{
    {"d", 86'400'000},
    {"h", 3'600'000},
    {"m", 60'000},
    {"s", 1'000},
    {"ms", 1},
}};

[[noreturn]] void fail(std::string_view what, std::string_view text, std::string_view problem) {
  throw Error(ErrorCode::invalid_argument,
              std::string(what) + " \"" + std::string(text) + "\" " + std::string(problem));
}

}  // namespace

std::chrono::milliseconds parse_duration(std::string_view text, std::string_view what) {
  if (text.empty()) {
    throw Error(ErrorCode::invalid_argument,
                std::string(what) + " is empty; expected a whole number and a unit, e.g. \"5s\"");
  }
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0) {
    fail(what, text, "does not start with a whole number; expected e.g. \"5s\" or \"250ms\"");
  }
  const std::string_view unit_text = text.substr(digits);
  if (unit_text.empty()) fail(what, text, "has no unit; use ms, s, m, h or d");
  const Unit* unit = nullptr;
  for (const Unit& u : kUnits) {
    if (u.name == unit_text) unit = &u;
  }
  if (unit == nullptr) {
    fail(what, text, "has unknown unit \"" + std::string(unit_text) + "\"; use ms, s, m, h or d");
  }
  // Accumulate in milliseconds and stop as soon as the bound is passed, so no overflow.
  const std::int64_t max_ms = kMaxDuration.count();
  std::int64_t count = 0;
  for (std::size_t i = 0; i < digits; ++i) {
    count = count * 10 + (text[i] - '0');
    if (count > max_ms / unit->ms) fail(what, text, "is longer than the maximum of 365d");
  }
  return std::chrono::milliseconds(count * unit->ms);
}

std::string format_duration(std::chrono::milliseconds value) {
  const std::int64_t ms = value.count();
  if (ms == 0) return "0s";
  for (const Unit& u : kUnits) {
    if (ms % u.ms == 0) return std::to_string(ms / u.ms) + std::string(u.name);
  }
  return std::to_string(ms) + "ms";  // unreachable: the ms unit divides everything
}

}  // namespace webhooks
