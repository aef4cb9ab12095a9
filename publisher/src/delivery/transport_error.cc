#include <array>

#include "webhooks/publisher/model.h"

namespace webhooks::publisher {
namespace {

constexpr std::array<TransportError, 6> kFailures = {
    TransportError::timeout, TransportError::connect,         TransportError::address_refused,
    TransportError::tls,     TransportError::invalid_request, TransportError::other};

}  // namespace

std::string_view to_string(TransportError error) noexcept {
  switch (error) {
    case TransportError::none:
      return "none";
    case TransportError::timeout:
      return "timeout";
    case TransportError::connect:
      return "connect";
    case TransportError::address_refused:
      return "address_refused";
    case TransportError::tls:
      return "tls";
    case TransportError::invalid_request:
      return "invalid_request";
    case TransportError::other:
      return "other";
  }
  return "unknown";
}

std::string error_text(TransportError error, std::string_view message) {
  if (error == TransportError::none) return std::string(message);
  return std::string(to_string(error)) + ": " + std::string(message);
}

TransportError parse_error_text(std::string_view text, std::string& message) {
  for (const TransportError code : kFailures) {
    const std::string_view name = to_string(code);
    if (text.size() >= name.size() + 2 && text.substr(0, name.size()) == name &&
        text.substr(name.size(), 2) == ": ") {
      message = std::string(text.substr(name.size() + 2));
      return code;
    }
  }
  message = std::string(text);
  return text.empty() ? TransportError::none : TransportError::other;
}

}  // namespace webhooks::publisher
