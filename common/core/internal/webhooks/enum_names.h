// An enum's stable names as one table: the name of a value (to_string) and the value of a name
// (parse) read the same list, so the two cannot disagree. For the enums whose names are a wire
// or storage format (a task's state in the database, a verification status in a log line).
// The enum's values must be the default ones (0, 1, 2, … in declaration order): names[i] is the
// name of the value i.
//
//   enum class TaskState { pending, dead };
//   inline constexpr EnumNames<TaskState, 2> kTaskStateNames{{"pending", "dead"}, "pending"};
//   kTaskStateNames.name(TaskState::dead) == "dead"; kTaskStateNames.parse("x") == std::nullopt
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace webhooks {

template <typename Enum, std::size_t N>
struct EnumNames {
  std::array<std::string_view, N> names;  // names[i]: the name of Enum(i)
  std::string_view fallback;              // the name of a value past the list (a cast)

  // The value's name, or `fallback`.
  constexpr std::string_view name(Enum value) const noexcept {
    const auto i = static_cast<std::size_t>(value);
    return i < N ? names[i] : fallback;
  }
  // The value named exactly `text` (case-sensitive), or std::nullopt.
  constexpr std::optional<Enum> parse(std::string_view text) const noexcept {
    for (std::size_t i = 0; i < N; ++i) {
      if (names[i] == text) return static_cast<Enum>(i);
    }
    return std::nullopt;
  }
};

}  // namespace webhooks
