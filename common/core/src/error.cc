#include "webhooks/error.h"

namespace webhooks {

std::string_view to_string(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::invalid_secret:
      return "invalid_secret";
    case ErrorCode::invalid_key:
      return "invalid_key";
    case ErrorCode::invalid_json:
      return "invalid_json";
    case ErrorCode::invalid_argument:
      return "invalid_argument";
    case ErrorCode::crypto:
      return "crypto";
    case ErrorCode::storage:
      return "storage";
    case ErrorCode::conflict:
      return "conflict";
    case ErrorCode::io:
      return "io";
  }
  return "unknown";
}

}  // namespace webhooks
