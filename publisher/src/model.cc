#include "webhooks/publisher/model.h"

namespace webhooks::publisher {

bool filter_matches(const std::vector<std::string>& filter, std::string_view event_type) {
  if (filter.empty()) return true;
  for (const std::string& entry : filter) {
    if (entry == "*") return true;
    if (entry.size() >= 2 && entry.ends_with(".*")) {
      const std::string_view prefix = std::string_view(entry).substr(0, entry.size() - 1);
      if (event_type.size() > prefix.size() && event_type.starts_with(prefix)) return true;
    } else if (entry == event_type) {
      return true;
    }
  }
  return false;
}

std::string_view to_string(TaskState state) noexcept {
  switch (state) {
    case TaskState::pending:
      return "pending";
    case TaskState::delivering:
      return "delivering";
    case TaskState::succeeded:
      return "succeeded";
    case TaskState::dead:
      return "dead";
  }
  return "pending";
}

std::string_view to_string(Trigger trigger) noexcept {
  return trigger == Trigger::manual ? "manual" : "scheduled";
}

std::optional<TaskState> parse_task_state(std::string_view text) noexcept {
  for (TaskState s :
       {TaskState::pending, TaskState::delivering, TaskState::succeeded, TaskState::dead}) {
    if (to_string(s) == text) return s;
  }
  return std::nullopt;
}

std::optional<Trigger> parse_trigger(std::string_view text) noexcept {
  if (text == "scheduled") return Trigger::scheduled;
  if (text == "manual") return Trigger::manual;
  return std::nullopt;
}

std::string_view to_string(SigningScheme scheme) noexcept {
  switch (scheme) {
    case SigningScheme::v1a:
      return "v1a";
    case SigningScheme::both:
      return "both";
    case SigningScheme::v1:
      break;
  }
  return "v1";
}

std::optional<SigningScheme> parse_signing_scheme(std::string_view text) noexcept {
  for (SigningScheme s : {SigningScheme::v1, SigningScheme::v1a, SigningScheme::both}) {
    if (to_string(s) == text) return s;
  }
  return std::nullopt;
}

}  // namespace webhooks::publisher
