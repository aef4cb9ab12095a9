#include "webhooks/publisher/model.h"

#include <algorithm>
#include <cctype>
#include <span>

#include "webhooks/base64.h"
#include "webhooks/enum_names.h"

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

namespace {

// Each enum's names: its column in publisher_tasks / publisher_endpoints and its JSON value.
constexpr EnumNames<TaskState, 4> kTaskStates{{"pending", "delivering", "succeeded", "dead"},
                                              "pending"};
constexpr EnumNames<Trigger, 2> kTriggers{{"scheduled", "manual"}, "scheduled"};
constexpr EnumNames<SigningScheme, 3> kSigningSchemes{{"v1", "v1a", "both"}, "v1"};
constexpr EnumNames<Ordering, 2> kOrderings{{"none", "fifo"}, "none"};
constexpr EnumNames<EndpointAuth::Type, 3> kAuthTypes{{"none", "bearer", "basic"}, "none"};

}  // namespace

std::string_view to_string(TaskState state) noexcept { return kTaskStates.name(state); }
std::optional<TaskState> parse_task_state(std::string_view text) noexcept {
  return kTaskStates.parse(text);
}
std::string_view to_string(Trigger trigger) noexcept { return kTriggers.name(trigger); }
std::optional<Trigger> parse_trigger(std::string_view text) noexcept {
  return kTriggers.parse(text);
}
std::string_view to_string(SigningScheme scheme) noexcept { return kSigningSchemes.name(scheme); }
std::optional<SigningScheme> parse_signing_scheme(std::string_view text) noexcept {
  return kSigningSchemes.parse(text);
}
std::string_view to_string(Ordering ordering) noexcept { return kOrderings.name(ordering); }
std::optional<Ordering> parse_ordering(std::string_view text) noexcept {
  return kOrderings.parse(text);
}
std::string_view to_string(EndpointAuth::Type type) noexcept { return kAuthTypes.name(type); }

std::string authorization_value(const EndpointAuth& auth) {
  switch (auth.type) {
    case EndpointAuth::Type::bearer:
      return "Bearer " + auth.token;
    case EndpointAuth::Type::basic: {
      const std::string pair = auth.username + ":" + auth.password;
      return "Basic " + base64_encode(std::span(reinterpret_cast<const std::uint8_t*>(pair.data()),
                                                pair.size()));
    }
    case EndpointAuth::Type::none:
      break;
  }
  return {};
}

std::string check_static_header(std::string_view name, std::string_view value) {
  static constexpr std::string_view kTokenExtras = "!#$%&'*+-.^_`|~";
  if (name.empty()) return "a header name must not be empty";
  for (const char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (!std::isalnum(u) && kTokenExtras.find(c) == std::string_view::npos) {
      return "header name \"" + std::string(name) + "\" is not an HTTP token (RFC 9110 5.1)";
    }
  }
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static constexpr std::string_view kReserved[] = {"host",        "authorization", "user-agent",
                                                   "traceparent", "tracestate",    "expect"};
  for (const std::string_view reserved : kReserved) {
    if (lower == reserved) {
      return "header \"" + std::string(name) + "\" is set by the publisher" +
             (reserved == "authorization" ? " (use \"auth\")" : "");
    }
  }
  // The body's description (Content-*) and the connection's (hop-by-hop, RFC 9110 7.6.1, and
  // proxy credentials) belong to the publisher's HTTP client, never to an endpoint's settings.
  static constexpr std::string_view kConnection[] = {
      "transfer-encoding", "connection", "keep-alive", "upgrade", "te", "trailer"};
  const bool connection =
      std::find(std::begin(kConnection), std::end(kConnection), lower) != std::end(kConnection);
  if (connection || lower.starts_with("content-") || lower.starts_with("proxy-")) {
    return "header \"" + std::string(name) +
           "\" describes the body or the connection, which the publisher sets";
  }
  if (lower.starts_with("webhook-")) {
    return "webhook-* headers are the signature's (Standard Webhooks v1)";
  }
  if (value.empty()) return "the value of header \"" + std::string(name) + "\" is empty";
  if (value.front() == ' ' || value.front() == '\t' || value.back() == ' ' ||
      value.back() == '\t') {
    return "the value of header \"" + std::string(name) + "\" starts or ends with whitespace";
  }
  for (const char c : value) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7F) {
      return "the value of header \"" + std::string(name) + "\" has a control character";
    }
  }
  return {};
}

}  // namespace webhooks::publisher
