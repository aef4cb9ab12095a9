#include <array>

#include "webhooks/enum_names.h"
#include "webhooks/publisher/model.h"

namespace webhooks::publisher {
namespace {

constexpr std::array<TransportError, 6> kFailures = {
    TransportError::timeout, TransportError::connect,         TransportError::address_refused,
    TransportError::tls,     TransportError::invalid_request, TransportError::other};

}  // namespace

constexpr EnumNames<TransportError, 7> kTransportErrorNames{
    {"none", "timeout", "connect", "address_refused", "tls", "invalid_request", "other"},
    "unknown"};
std::string_view to_string(TransportError error) noexcept {
  return kTransportErrorNames.name(error);
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
