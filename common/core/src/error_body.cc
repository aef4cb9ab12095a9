#include "webhooks/error_body.h"

#include <nlohmann/json.hpp>

namespace webhooks {

std::string error_body(std::string_view code, std::string_view message) {
  // Invalid UTF-8 becomes U+FFFD instead of a type_error 316 that would turn a client error into
  // a 503 storage_unavailable.
  return nlohmann::json{{"error", {{"code", code}, {"message", message}}}}.dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace webhooks
