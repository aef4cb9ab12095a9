// An enum's stable names as one table: the name of a value (to_string) and the value of a name
// (parse) read the same entries, so the two cannot disagree. For the enums whose names are a wire
// or storage format (a task's state in the database, a verification status in a log line).
//
//   inline constexpr EnumNames<TaskState, 2> kTaskStateNames{
//       {{{TaskState::pending, "pending"}, {TaskState::dead, "dead"}}}, "pending"};
//   kTaskStateNames.name(TaskState::dead) == "dead"; kTaskStateNames.parse("x") == std::nullopt
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>

namespace webhooks {

template <typename Enum, std::size_t N>
struct EnumNames {
  std::array<std::pair<Enum, std::string_view>, N> entries;
  std::string_view fallback;  // the name of a value not in the table (a cast out of range)

  // The value's name, or `fallback`.
  constexpr std::string_view name(Enum value) const noexcept {
    for (const auto& [e, n] : entries) {
      if (e == value) return n;
    }
    return fallback;
  }
  // The value of exactly `text` (case-sensitive), or std::nullopt.
  constexpr std::optional<Enum> parse(std::string_view text) const noexcept {
    for (const auto& [e, n] : entries) {
      if (n == text) return e;
    }
    return std::nullopt;
  }
};

}  // namespace webhooks
