// Compact JSON text that keeps every number token byte for byte: what the publisher stores and
// delivers as an event's data, and what `webhooks send` signs. A tree (nlohmann::json) would turn
// 36893488147419103233 into 3.6893488147419103e+19; this never builds one.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "webhooks/json_parse.h"

namespace webhooks {

// `json` without insignificant whitespace: members in document order, number tokens exactly as
// written (1e3 stays 1e3, 36893488147419103233 stays itself), strings re-escaped the way
// nlohmann's dump() writes them (UTF-8 kept, \" \\ \b \f \n \r \t, other controls as \u00xx).
// Time and memory linear in json.size().
// Throws webhooks::Error(ErrorCode::invalid_json) as parse_json() does (invalid JSON, invalid
// UTF-8, nesting deeper than max_depth).
std::string compact_json(std::string_view json, std::size_t max_depth = kMaxJsonDepth);

}  // namespace webhooks
