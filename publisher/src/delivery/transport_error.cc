#include <optional>

#include "webhooks/enum_names.h"
#include "webhooks/publisher/model.h"

namespace webhooks::publisher {

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
  if (const std::size_t colon = text.find(": "); colon != std::string_view::npos) {
    const std::optional<TransportError> code = kTransportErrorNames.parse(text.substr(0, colon));
    if (code && *code != TransportError::none) {
      message = std::string(text.substr(colon + 2));
      return *code;
    }
  }
  message = std::string(text);
  return text.empty() ? TransportError::none : TransportError::other;
}

}  // namespace webhooks::publisher
