// The toolkit's version (semantic versioning).
#pragma once

#include <string_view>

namespace webhooks {

inline constexpr std::string_view kVersion = "0.1.0";

}  // namespace webhooks
