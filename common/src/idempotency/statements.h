// The idempotency store's SQL, one set per engine. $1..$n placeholders on both.
#pragma once

#include <string_view>

#include "webhooks/db.h"

namespace webhooks::idempotency::detail {

struct Statements {
  std::string_view insert;       // scope, key, fingerprint, token, lease_expires_at, now, expires_at
  std::string_view select_lock;  // scope, key -> the record, row-locked where the engine can
  std::string_view restart;      // scope, key, fingerprint, token, lease_expires_at, now, expires_at
  std::string_view reacquire;    // scope, key, token, lease_expires_at, now
  std::string_view complete;     // scope, key, token, status, headers, body, now
  std::string_view fail;         // scope, key, token, now
  std::string_view renew;        // scope, key, token, lease_expires_at, now
  std::string_view sweep;        // now
  std::string_view purge;        // now, limit
  std::string_view select;       // scope, key
};

const Statements& statements(db::Engine engine);

}  // namespace webhooks::idempotency::detail
