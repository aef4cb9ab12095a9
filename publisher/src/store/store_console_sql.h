// The SQL of the console's reads and of replay-missing (store_console.cc, store_stats.cc), the
// same on both engines. A listing's WHERE is put together from the filters set (store_console.cc),
// so that each combination is a plain index range the planner cannot miss; the indexes are those
// of schema/publisher/<engine>/0003_console.sql.
#pragma once

#include <string_view>

#include "webhooks/db.h"
#include "webhooks/publisher/model.h"

namespace webhooks::publisher::detail {

// An Event from the nine columns WEBHOOKS_EVENT_COLUMNS (store_sql.h), starting at `first`.
Event event_from(const db::Rows& rows, std::size_t r, std::size_t first = 0);

namespace sql {

// --- the events listing: "SELECT … FROM … WHERE" + conditions + order + "LIMIT $n" ---
// Newest first over the events' own indexes (merchant, type or time).
inline constexpr std::string_view kPageFromEvents =
    "SELECT event_id, merchant_id, event_type, payload, created_at, idempotency_key, "
    "ordering_key, traceparent, tracestate, created_at FROM publisher_events e WHERE 1 = 1";
// Newest first over the tasks of one state (its partial index publisher_tasks_<state>_events,
// which the planner takes only for the state written as a literal: the caller adds
// "AND t.state = '<state>'"), each event once per task it has in that state (the caller skips the
// repeats). CROSS JOIN keeps the tasks outermost
// on SQLite (PostgreSQL plans it as a join either way).
inline constexpr std::string_view kPageFromTasks =
    "SELECT e.event_id, e.merchant_id, e.event_type, e.payload, e.created_at, e.idempotency_key, "
    "e.ordering_key, e.traceparent, e.tracestate, t.event_created_at "
    "FROM publisher_tasks t CROSS JOIN publisher_events e "
    "WHERE e.event_id = t.event_id";
inline constexpr std::string_view kOrderEvents = " ORDER BY e.created_at DESC, e.event_id DESC";
inline constexpr std::string_view kOrderTasks =
    " ORDER BY t.event_created_at DESC, t.event_id DESC";
// The exact search: the event of that id and the events of that Idempotency-Key, by their
// indexes (an OR of the two would let the planner walk the time index instead).
inline constexpr std::string_view kSearchCondition =
    " AND e.event_id IN (SELECT event_id FROM publisher_events WHERE event_id = $? UNION ALL "
    "SELECT event_id FROM publisher_events WHERE idempotency_key = $?)";
inline constexpr std::string_view kHasTaskInState =
    " AND EXISTS (SELECT 1 FROM publisher_tasks s WHERE s.event_id = e.event_id AND s.state = $?)";

// --- replay missing ---
inline constexpr std::string_view kSelectMissingEndpoint =
    "SELECT merchant_id, event_types, enabled FROM publisher_endpoints WHERE id = $1";
// PostgreSQL: the same under a share lock, so a concurrent enable or disable either commits
// first (and `parked` follows it) or waits for these tasks (and parks or unparks them).
inline constexpr std::string_view kSelectMissingEndpointLocked =
    "SELECT merchant_id, event_types, enabled FROM publisher_endpoints WHERE id = $1 FOR SHARE";
// One batch: $1 merchant, $2 endpoint, after ($3 created_at, $4 event_id) in the listing's order
// (created_at >= $3 reads the merchant's time index), at most $5 events.
inline constexpr std::string_view kSelectMissingEvents =
    "SELECT e.event_id, e.event_type, e.created_at FROM publisher_events e "
    "WHERE e.merchant_id = $1 AND e.created_at >= $3 AND (e.created_at > $3 OR e.event_id > $4) "
    "AND NOT EXISTS "
    "(SELECT 1 FROM publisher_tasks t WHERE t.event_id = e.event_id AND t.endpoint_id = $2) "
    "ORDER BY e.created_at, e.event_id LIMIT $5";
// $1 event, $2 endpoint, $3 now, $4 the event's created_at, $5 parked.
inline constexpr std::string_view kInsertMissingTask =
    "INSERT INTO publisher_tasks (event_id, endpoint_id, state, attempts, next_attempt_at, "
    "next_trigger, age_from, created_at, updated_at, event_created_at, parked) "
    "VALUES ($1, $2, 'pending', 0, $3, 'manual', $3, $3, $3, $4, $5) "
    "ON CONFLICT (event_id, endpoint_id) DO NOTHING";

// --- stats and overview ---
inline constexpr std::string_view kSelectEndpointWindow =
    "SELECT status, latency_ms, started_at FROM publisher_attempts WHERE endpoint_id = $1 "
    "ORDER BY started_at DESC, delivery_id DESC LIMIT $2";
// $1 the first minute's start, $2 the end of the last minute: (minute index, attempts, failures).
inline constexpr std::string_view kSelectMinutes =
    "SELECT (started_at - $1) / 60000, COUNT(*), "
    "SUM(CASE WHEN status >= 200 AND status < 300 THEN 0 ELSE 1 END) FROM publisher_attempts "
    "WHERE started_at >= $1 AND started_at < $2 GROUP BY 1";
// Tasks by state in one statement: pending, delivering and dead each on its own partial index
// (the `event_created_at >= 0` lets SQLite's planner take it). kCountTasksByState counts the
// succeeded tasks of events created at or after $1 (the overview: an hour ago), an index range
// as long as that hour; kCountAllTasks counts every task (O(history): SQLite walks its smallest
// index), so succeeded is the rest.
inline constexpr std::string_view kCountTasksByState =
    "SELECT (SELECT COUNT(*) FROM publisher_tasks WHERE state = 'pending' AND event_created_at >= "
    "0), (SELECT COUNT(*) FROM publisher_tasks WHERE state = 'delivering' AND event_created_at >= "
    "0), (SELECT COUNT(*) FROM publisher_tasks WHERE state = 'dead' AND event_created_at >= 0), "
    "(SELECT COUNT(*) FROM publisher_tasks WHERE state = 'succeeded' AND event_created_at >= $1)";
inline constexpr std::string_view kCountAllTasks =
    "SELECT (SELECT COUNT(*) FROM publisher_tasks WHERE state = 'pending' AND event_created_at >= "
    "0), (SELECT COUNT(*) FROM publisher_tasks WHERE state = 'delivering' AND event_created_at >= "
    "0), (SELECT COUNT(*) FROM publisher_tasks WHERE state = 'dead' AND event_created_at >= 0), "
    "(SELECT COUNT(*) FROM publisher_tasks)";
inline constexpr std::string_view kSelectOldestPending =
    "SELECT MIN(age_from) FROM publisher_tasks WHERE state = 'pending' AND parked = 0";
inline constexpr std::string_view kSelectAttention =
    "SELECT id, merchant_id, enabled, disabled_reason, failing_since FROM publisher_endpoints "
    "WHERE enabled = 0 OR failing_since IS NOT NULL ORDER BY id";

}  // namespace sql
}  // namespace webhooks::publisher::detail
