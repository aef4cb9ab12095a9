#include "webhooks/wire.h"

#include <algorithm>

namespace webhooks {

bool is_valid_webhook_id(std::string_view id) noexcept {
  return !id.empty() && id.size() <= 255 &&
         std::all_of(id.begin(), id.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

std::optional<std::int64_t> parse_webhook_timestamp(std::string_view text) noexcept {
  if (text.empty() || text.size() > 10) return std::nullopt;
  std::int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

}  // namespace webhooks
