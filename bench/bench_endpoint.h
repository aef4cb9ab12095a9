// A new endpoint for a benchmark's publisher: a UUIDv7 id, created now with one fresh secret.
#pragma once

#include <optional>
#include <string>

#include "webhooks/clock.h"
#include "webhooks/publisher/store.h"
#include "webhooks/secret.h"
#include "webhooks/uuid.h"

namespace bench {

inline webhooks::publisher::Endpoint new_endpoint(const std::string& merchant,
                                                  const std::string& url) {
  webhooks::publisher::Endpoint e;
  e.id = webhooks::UuidV7Generator(webhooks::system_clock()).next();
  e.merchant_id = merchant;
  e.url = url;
  e.created_at = e.updated_at = webhooks::system_clock().now_ms();
  e.secrets.push_back({webhooks::Secret::generate().to_string(), e.created_at, std::nullopt});
  return e;
}

}  // namespace bench
