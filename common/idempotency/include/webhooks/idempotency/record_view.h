// What a merchant (or an operator) may see of one idempotency record: Store::lookup and
// Store::list return it (docs/idempotency.md, "Looking a key up"). No lease token and no stored
// response headers: a view answers "did my request with key K go through, and with what?".
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "webhooks/clock.h"

namespace webhooks::idempotency {

enum class State;

struct RecordView {
  std::string key;
  State state{};  // as stored; an in_progress record whose lease lapsed is swept to failed
  // "METHOD /path" of the request that began the record, e.g. "POST /orders"; empty for a record
  // begun before migration 0003 or by a caller that passed no route.
  std::string route;
  std::string fingerprint;    // the request's SHA-256, 64 lowercase hex digits
  int attempts = 0;           // times the operation was started, the first included
  std::optional<int> status;  // the stored HTTP status: completed, and failed when one was stored
  // Unix milliseconds. updated_at: the last change of state (begin, reacquire, complete, fail,
  // sweep), created_at for a record last changed before migration 0003.
  UnixMillis created_at = 0, updated_at = 0, expires_at = 0;
  // The "id" member of the stored response body when it is a JSON object with a string or
  // integer "id" (the order or payout the request made); otherwise none.
  std::optional<std::string> resource_id;
  // Duplicates answered from the record without running the operation: with the stored response
  // (replays), 409 while in progress (conflicts), 422 for another body or route (mismatches).
  // Counted in memory and written by Store::flush_counts, so they lag by up to the flush interval
  // (Maintenance: 1 s) and lose the last interval's counts when the process crashes.
  std::int64_t replays = 0, conflicts = 0, mismatches = 0;
};

// Store::list's filter and page. Times are Unix milliseconds.
struct ListQuery {
  std::optional<State> state;   // only records in this state; none: every state
  UnixMillis created_from = 0;  // created_at >= created_from
  UnixMillis created_until = std::numeric_limits<UnixMillis>::max();  // created_at < this
  // ListPage::next_cursor of the previous page; empty: the newest records. Opaque.
  std::string cursor;
  int limit = 50;  // records per page, 1 to kMaxListLimit
};

constexpr int kMaxListLimit = 200;

struct ListPage {
  std::vector<RecordView> records;  // newest first: created_at descending, then key descending
  std::string next_cursor;          // empty when this is the last page
};

}  // namespace webhooks::idempotency
