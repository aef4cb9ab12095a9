#include "webhooks/publisher/model.h"

#include <algorithm>
#include <cctype>
#include <span>

#include "webhooks/base64.h"

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

namespace webhooks::publisher {

std::string_view to_string(Ordering ordering) noexcept {
  return ordering == Ordering::fifo ? "fifo" : "none";
}

std::optional<Ordering> parse_ordering(std::string_view text) noexcept {
  if (text == "none") return Ordering::none;
  if (text == "fifo") return Ordering::fifo;
  return std::nullopt;
}

std::string_view to_string(EndpointAuth::Type type) noexcept {
  switch (type) {
    case EndpointAuth::Type::bearer:
      return "bearer";
    case EndpointAuth::Type::basic:
      return "basic";
    case EndpointAuth::Type::none:
      break;
  }
  return "none";
}

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
