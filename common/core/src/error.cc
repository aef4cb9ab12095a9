#include "webhooks/error.h"

#include "webhooks/enum_names.h"

namespace webhooks {

constexpr EnumNames<ErrorCode, 8> kErrorCodeNames{
    {"invalid_secret", "invalid_key", "invalid_json", "invalid_argument", "crypto", "storage",
     "conflict", "io"},
    "unknown"};
std::string_view to_string(ErrorCode code) noexcept { return kErrorCodeNames.name(code); }

}  // namespace webhooks
