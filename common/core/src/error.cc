#include "webhooks/error.h"

#include "webhooks/enum_names.h"

namespace webhooks {

constexpr EnumNames<ErrorCode, 8> kErrorCodeNames{
    {{{ErrorCode::invalid_secret, "invalid_secret"},
      {ErrorCode::invalid_key, "invalid_key"},
      {ErrorCode::invalid_json, "invalid_json"},
      {ErrorCode::invalid_argument, "invalid_argument"},
      {ErrorCode::crypto, "crypto"},
      {ErrorCode::storage, "storage"},
      {ErrorCode::conflict, "conflict"},
      {ErrorCode::io, "io"}}},
    "unknown"};
std::string_view to_string(ErrorCode code) noexcept { return kErrorCodeNames.name(code); }

}  // namespace webhooks
