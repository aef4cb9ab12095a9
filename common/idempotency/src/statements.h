// The idempotency store's SQL, one set per engine. $1..$n placeholders on both; each statement
// takes exactly the parameters listed (PostgreSQL refuses more). The record layout is
// schema/idempotency/*/0002_compact_records.sql: fingerprint 32 bytes (db::Bytes), state
// 0 in_progress / 1 completed / 2 failed, response_headers NULL when there are none.
#pragma once

#include <cstdint>
#include <string_view>

#include "webhooks/db.h"

namespace webhooks::idempotency::detail {

// The codes of the state column.
enum StateCode : std::int64_t { kInProgress = 0, kCompleted = 1, kFailed = 2 };

struct Statements {
  std::string_view insert;  // scope, key, fingerprint, token, lease_expires_at, now, expires_at
  std::string_view select_lock;  // scope, key -> the record, row-locked where the engine can
  std::string_view restart;    // scope, key, fingerprint, token, lease_expires_at, now, expires_at
  std::string_view reacquire;  // scope, key, token, lease_expires_at
  std::string_view complete;   // scope, key, token, status, headers, body
  std::string_view fail;       // scope, key, token
  std::string_view renew;      // scope, key, token, lease_expires_at
  std::string_view sweep;      // now
  std::string_view purge;      // now, limit
  std::string_view select;     // scope, key
  // scope, key, fingerprint, status, headers, body, now, expires_at: the record completed at
  // once, in place of an expired one.
  std::string_view insert_completed;
};

const Statements& statements(db::Engine engine);

}  // namespace webhooks::idempotency::detail
