// The idempotency store's SQL, one set per engine. $1..$n placeholders on both; each statement
// takes exactly the parameters listed (PostgreSQL refuses more). The record layout is
// schema/idempotency/*/0002_compact_records.sql, 0003_record_views.sql and
// 0004_rendered_answers.sql: fingerprint 32 bytes (db::Bytes), state 0 in_progress / 1 completed /
// 2 failed, response_headers NULL when there are none, response_ref (bytes) set instead of
// response_headers and response_body for an answer stored by reference.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "webhooks/db.h"
#include "webhooks/idempotency/store.h"

namespace webhooks::idempotency::detail {

// The codes of the state column.
enum StateCode : std::int64_t { kInProgress = 0, kCompleted = 1, kFailed = 2 };

struct Statements {
  std::string_view
      insert;  // scope, key, fingerprint, token, lease_expires_at, now, expires_at, route
  std::string_view select_lock;  // scope, key -> the record, row-locked where the engine can
  std::string_view
      restart;  // scope, key, fingerprint, token, lease_expires_at, now, expires_at, route
  std::string_view reacquire;  // scope, key, token, lease_expires_at, now
  std::string_view complete;   // scope, key, token, status, headers, body, now, response_ref
  std::string_view fail;       // scope, key, token, now, status (NULL: none)
  std::string_view renew;      // scope, key, token, lease_expires_at
  std::string_view sweep;      // now
  std::string_view purge;      // now, limit
  std::string_view select;     // scope, key
  // scope, key, fingerprint, status, headers, body, created_at, expires_at, route, now,
  // response_ref: the record completed at once, in place of an expired one.
  std::string_view insert_completed;
};

const Statements& statements(db::Engine engine);

// The state of a state column's code (an unknown code reads as in_progress).
State parse_state(std::int64_t code);
// Stored bytes as lowercase hex, as request_fingerprint writes them.
std::string to_hex(std::string_view bytes);

}  // namespace webhooks::idempotency::detail
