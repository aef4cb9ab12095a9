// The publisher store's SQL. $1..$n placeholders on both engines; where the engines differ (the
// claim), one constant per engine.
#pragma once

#include <string_view>

namespace webhooks::publisher::detail::sql {

#define WEBHOOKS_ENDPOINT_COLUMNS                                                              \
  "id, merchant_id, url, event_types, description, enabled, disabled_reason, failing_since, "  \
  "created_at, updated_at, signing, rate_limit, ordering, headers, auth, client_certificate, " \
  "client_key"
#define WEBHOOKS_TASK_COLUMNS                                                             \
  "id, event_id, endpoint_id, state, attempts, next_attempt_at, next_trigger, age_from, " \
  "last_status, last_error, created_at, updated_at, parked, sequence_key"
#define WEBHOOKS_ATTEMPT_COLUMNS                                                            \
  "delivery_id, task_id, event_id, endpoint_id, attempt_number, trigger_kind, started_at, " \
  "status, latency_ms, error, response_snippet, traceparent"
// 1 when the task's endpoint is disabled or gone, else 0: the `parked` of a task put back to
// pending (a parked task is outside the due index, schema/<engine>/0004_parked_tasks.sql).
#define WEBHOOKS_PARKED_UNLESS_ENABLED                                  \
  "CASE WHEN EXISTS (SELECT 1 FROM publisher_endpoints e WHERE e.id = " \
  "publisher_tasks.endpoint_id "                                        \
  "AND e.enabled = 1) THEN 0 ELSE 1 END"

// --- endpoints ---
inline constexpr std::string_view kInsertEndpoint =
    "INSERT INTO publisher_endpoints (" WEBHOOKS_ENDPOINT_COLUMNS
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)";
inline constexpr std::string_view kInsertSecret =
    "INSERT INTO publisher_endpoint_secrets (endpoint_id, secret, created_at, expires_at) "
    "VALUES ($1, $2, $3, $4)";
// A key given again at a rotation (rolling back to an earlier key) replaces its old row, so it
// signs again as the current key, without expiry.
inline constexpr std::string_view kDeleteSecret =
    "DELETE FROM publisher_endpoint_secrets WHERE endpoint_id = $1 AND secret = $2";
inline constexpr std::string_view kSelectEndpoint =
    "SELECT " WEBHOOKS_ENDPOINT_COLUMNS " FROM publisher_endpoints WHERE id = $1";
inline constexpr std::string_view kSelectEndpoints =
    "SELECT " WEBHOOKS_ENDPOINT_COLUMNS
    " FROM publisher_endpoints WHERE ($1 = '' OR merchant_id = $1) ORDER BY created_at, id";
inline constexpr std::string_view kSelectSecrets =
    "SELECT secret, created_at, expires_at FROM publisher_endpoint_secrets WHERE endpoint_id = $1 "
    "ORDER BY created_at DESC, secret";
inline constexpr std::string_view kUpdateEndpoint =
    "UPDATE publisher_endpoints SET url = $2, event_types = $3, description = $4, updated_at = $5, "
    "rate_limit = $6, ordering = $7, headers = $8, auth = $9, client_certificate = $10, "
    "client_key = $11 WHERE id = $1";
// An endpoint no longer FIFO: its waiting tasks (parked 2) are due at once, outside any sequence.
inline constexpr std::string_view kReleaseSequences =
    "UPDATE publisher_tasks SET sequence_key = NULL, parked = CASE WHEN parked = 2 "
    "THEN " WEBHOOKS_PARKED_UNLESS_ENABLED
    " ELSE parked END WHERE endpoint_id = $1 AND sequence_key IS NOT NULL "
    "AND state IN ('pending', 'delivering')";
inline constexpr std::string_view kDeleteSecrets =
    "DELETE FROM publisher_endpoint_secrets WHERE endpoint_id = $1";
inline constexpr std::string_view kDeleteEndpoint = "DELETE FROM publisher_endpoints WHERE id = $1";
inline constexpr std::string_view kKillEndpointTasks =
    "UPDATE publisher_tasks SET state = 'dead', lease_owner = NULL, lease_expires_at = NULL, "
    "last_error = 'endpoint deleted', updated_at = $2 "
    "WHERE endpoint_id = $1 AND state IN ('pending', 'delivering')";
inline constexpr std::string_view kEnableEndpoint =
    "UPDATE publisher_endpoints SET enabled = 1, disabled_reason = NULL, failing_since = NULL, "
    "failing_warned_at = NULL, updated_at = $2 WHERE id = $1";
inline constexpr std::string_view kDisableEndpoint =
    "UPDATE publisher_endpoints SET enabled = 0, disabled_reason = $2, updated_at = $3 "
    "WHERE id = $1";
// Disabling parks the endpoint's unfinished tasks (delivering ones too: a retry recorded after the
// disable stays parked); enabling unparks them, keeping their next_attempt_at. On PostgreSQL an
// ingest whose fan-out read the endpoint just before a disable committed may still add an unparked
// task: the claim's join skips it, and it costs one due-index entry until the next enable.
inline constexpr std::string_view kParkEndpointTasks =
    "UPDATE publisher_tasks SET parked = 1 "
    "WHERE endpoint_id = $1 AND state IN ('pending', 'delivering') AND parked = 0";
inline constexpr std::string_view kUnparkEndpointTasks =
    "UPDATE publisher_tasks SET parked = 0 "
    "WHERE endpoint_id = $1 AND state IN ('pending', 'delivering') AND parked = 1";
inline constexpr std::string_view kExpireSecrets =
    "UPDATE publisher_endpoint_secrets SET expires_at = $2 "
    "WHERE endpoint_id = $1 AND (expires_at IS NULL OR expires_at > $2)";
inline constexpr std::string_view kTouchEndpoint =
    "UPDATE publisher_endpoints SET updated_at = $2 WHERE id = $1";
inline constexpr std::string_view kSetSigning =
    "UPDATE publisher_endpoints SET signing = $2, updated_at = $3 WHERE id = $1";
inline constexpr std::string_view kCountDisabled =
    "SELECT COUNT(*) FROM publisher_endpoints WHERE enabled = 0";

// --- events ---
inline constexpr std::string_view kInsertEvent =
    "INSERT INTO publisher_events (event_id, merchant_id, event_type, payload, created_at, "
    "idempotency_key, ordering_key, traceparent, tracestate) "
    "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)";
inline constexpr std::string_view kSelectFanOut =
    "SELECT id, event_types, ordering FROM publisher_endpoints WHERE merchant_id = $1 "
    "AND enabled = 1 ORDER BY id";
// A task of a FIFO endpoint: $5 its sequence; it waits (parked 2) behind an unfinished task of the
// same sequence. On PostgreSQL the caller holds the sequence's lock (kLockSequence) first.
inline constexpr std::string_view kInsertSequencedTask =
    "INSERT INTO publisher_tasks (event_id, endpoint_id, state, attempts, next_attempt_at, "
    "next_trigger, age_from, created_at, updated_at, event_created_at, sequence_key, parked) "
    "VALUES ($1, $2, 'pending', 0, $3, 'scheduled', $4, $3, $3, $4, $5, CASE WHEN EXISTS "
    "(SELECT 1 FROM publisher_tasks w WHERE w.endpoint_id = $2 AND w.sequence_key = $5 "
    "AND w.state IN ('pending', 'delivering')) THEN 2 ELSE 0 END)";
// PostgreSQL: serializes the writers of one sequence ($1: endpoint id, $2: key) until commit, so
// a task is never added behind one that is being settled unseen. Taken in (endpoint, key) order.
inline constexpr std::string_view kLockSequence =
    "SELECT pg_advisory_xact_lock(hashtextextended($1 || chr(10) || $2, 0))";
// After a task of the sequence settled (succeeded or dead): the next waiting task is due now (its
// age limit counting from now: it waited, it did not fail),
// unless another task of the sequence is still unfinished and not waiting (the head, when the one
// settled was a replay or recovery sent outside the sequence): that one advances it when it
// settles, so a sequence never has two tasks going out at once.
inline constexpr std::string_view kAdvanceSequence =
    "UPDATE publisher_tasks SET parked = 0, next_attempt_at = $3, age_from = $3, updated_at = $3 "
    "WHERE id = (SELECT MIN(id) FROM publisher_tasks WHERE endpoint_id = $1 AND sequence_key = $2 "
    "AND state = 'pending' AND parked = 2) AND NOT EXISTS (SELECT 1 FROM publisher_tasks h "
    "WHERE h.endpoint_id = $1 AND h.sequence_key = $2 AND h.state IN ('pending', 'delivering') "
    "AND h.parked <> 2)";
inline constexpr std::string_view kInsertTask =
    "INSERT INTO publisher_tasks (event_id, endpoint_id, state, attempts, next_attempt_at, "
    "next_trigger, age_from, created_at, updated_at, event_created_at) "
    "VALUES ($1, $2, 'pending', 0, $3, 'scheduled', $4, $3, $3, $4)";
#define WEBHOOKS_EVENT_COLUMNS                                                              \
  "event_id, merchant_id, event_type, payload, created_at, idempotency_key, ordering_key, " \
  "traceparent, tracestate"
inline constexpr std::string_view kSelectEvent =
    "SELECT " WEBHOOKS_EVENT_COLUMNS " FROM publisher_events WHERE event_id = $1";
inline constexpr std::string_view kSelectEventTasks =
    "SELECT " WEBHOOKS_TASK_COLUMNS " FROM publisher_tasks WHERE event_id = $1 ORDER BY id";
inline constexpr std::string_view kSelectEventAttempts =
    "SELECT " WEBHOOKS_ATTEMPT_COLUMNS
    " FROM publisher_attempts WHERE event_id = $1 ORDER BY started_at, delivery_id";
inline constexpr std::string_view kReplay =
    "UPDATE publisher_tasks SET state = 'pending', attempts = 0, next_attempt_at = $2, "
    "next_trigger = 'manual', age_from = $2, lease_owner = NULL, lease_expires_at = NULL, "
    "parked = " WEBHOOKS_PARKED_UNLESS_ENABLED
    ", updated_at = $2 WHERE event_id = $1 AND ($3 = '' OR endpoint_id = $3) "
    "AND state <> 'delivering'";
inline constexpr std::string_view kRecover =
    "UPDATE publisher_tasks SET state = 'pending', attempts = 0, next_attempt_at = $3, "
    "next_trigger = 'manual', age_from = $3, parked = " WEBHOOKS_PARKED_UNLESS_ENABLED
    ", updated_at = $3 "
    "WHERE endpoint_id = $1 AND state = 'dead' AND event_id IN "
    "(SELECT event_id FROM publisher_events WHERE created_at >= $2)";
// PostgreSQL only, before kReplay / kRecover: a share lock on the endpoints whose tasks they
// re-queue, so an enable or disable in flight commits first (and the re-queue's `parked` sees it)
// or waits for the re-queue (and its park or unpark sees the task). SQLite writers are serial.
inline constexpr std::string_view kLockReplayEndpoints =
    "SELECT 1 FROM publisher_endpoints WHERE id IN (SELECT endpoint_id FROM publisher_tasks "
    "WHERE event_id = $1 AND ($2 = '' OR endpoint_id = $2)) FOR SHARE";
inline constexpr std::string_view kLockRecoverEndpoint =
    "SELECT 1 FROM publisher_endpoints WHERE id = $1 FOR SHARE";

// --- dispatch ---
// Tasks whose worker died: their lease lapsed, so they are pending again.
inline constexpr std::string_view kReap =
    "UPDATE publisher_tasks SET state = 'pending', lease_owner = NULL, lease_expires_at = NULL, "
    "updated_at = $1 WHERE state = 'delivering' AND lease_expires_at <= $1";
// The endpoints with due tasks, the one due longest first: $1 now. A loose scan of
// publisher_tasks_endpoint_due (one step per endpoint with pending tasks, however many it holds),
// then per endpoint its oldest due time, its tasks being delivered, its rate limit and (with one)
// its claims in the rate window (kForgetRateLog).
inline constexpr std::string_view kSelectDueEndpoints =
    "WITH RECURSIVE due(endpoint_id) AS ("
    "SELECT (SELECT endpoint_id FROM publisher_tasks WHERE state = 'pending' AND parked = 0 "
    "ORDER BY endpoint_id LIMIT 1) "
    "UNION ALL SELECT (SELECT t.endpoint_id FROM publisher_tasks t WHERE t.state = 'pending' "
    "AND t.parked = 0 AND t.endpoint_id > due.endpoint_id ORDER BY t.endpoint_id LIMIT 1) "
    "FROM due WHERE due.endpoint_id IS NOT NULL) "
    "SELECT id, first_due, busy, rate_limit, sent FROM (SELECT e.id, (SELECT "
    "MIN(t.next_attempt_at) "
    "FROM publisher_tasks t WHERE t.endpoint_id = e.id AND t.state = 'pending' AND t.parked = 0) "
    "AS first_due, (SELECT COUNT(*) FROM publisher_tasks b WHERE b.endpoint_id = e.id "
    "AND b.state = 'delivering') AS busy, e.rate_limit, CASE WHEN e.rate_limit IS NULL THEN 0 "
    "ELSE (SELECT COUNT(*) FROM publisher_rate_log l WHERE l.endpoint_id = e.id "
    "AND l.sent_at > CAST($1 AS BIGINT) - 1100) END AS sent FROM due d JOIN publisher_endpoints e "
    "ON e.id = d.endpoint_id WHERE e.enabled = 1) x WHERE first_due <= $1 ORDER BY first_due, id";
// One endpoint's share of a claim: $1 owner, $2 now, $3 limit, $4 lease_until, $5 endpoint id.
#define WEBHOOKS_CLAIM                                                                         \
  "UPDATE publisher_tasks SET state = 'delivering', lease_owner = $1, lease_expires_at = $4, " \
  "updated_at = $2 WHERE id IN (SELECT t.id FROM publisher_tasks t WHERE t.endpoint_id = $5 "  \
  "AND t.state = 'pending' AND t.parked = 0 AND t.next_attempt_at <= $2 "                      \
  "ORDER BY t.next_attempt_at LIMIT $3"
inline constexpr std::string_view kClaimSqlite = WEBHOOKS_CLAIM ")";
inline constexpr std::string_view kClaimPostgres = WEBHOOKS_CLAIM " FOR UPDATE SKIP LOCKED)";
// The rate limit's window, $1 endpoint id, $2 now: lock the endpoint's row (PostgreSQL: the
// counting claims of all daemons take turns), forget claims 1100 ms old or more, count the rest.
// The window is 100 ms longer than a second so that the time between a claim and its request
// going out (a few ms, more on a loaded machine) never puts N + 1 requests in one second on the
// wire: N per 1.1 s is what is sent at most.
inline constexpr std::string_view kForgetRateLog =
    "DELETE FROM publisher_rate_log WHERE endpoint_id = $1 AND sent_at <= CAST($2 AS BIGINT) - "
    "1100";
inline constexpr std::string_view kLockRateLimited =
    "SELECT 1 FROM publisher_endpoints WHERE id = $1 FOR UPDATE";
inline constexpr std::string_view kCountRateLog =
    "SELECT COUNT(*) FROM publisher_rate_log WHERE endpoint_id = $1";
// One row per task of endpoint $1 just claimed by $3, at $2.
inline constexpr std::string_view kLogRate =
    "INSERT INTO publisher_rate_log (endpoint_id, sent_at) SELECT $1, $2 FROM publisher_tasks "
    "WHERE lease_owner = $3 AND endpoint_id = $1 AND state = 'delivering'";
inline constexpr std::string_view kSelectClaimed =
    "SELECT t.id, t.event_id, t.endpoint_id, t.attempts, t.next_attempt_at, t.next_trigger, "
    "t.age_from, t.created_at, e.url, ev.merchant_id, ev.event_type, ev.payload, ev.created_at, "
    "ev.ordering_key, ev.traceparent, ev.tracestate, t.sequence_key, e.rate_limit, e.ordering, "
    "e.headers, e.auth, e.client_certificate, e.client_key "
    "FROM publisher_tasks t JOIN publisher_endpoints e ON e.id = t.endpoint_id "
    "JOIN publisher_events ev ON ev.event_id = t.event_id "
    "WHERE t.lease_owner = $1 AND t.state = 'delivering' ORDER BY t.next_attempt_at, t.id";
inline constexpr std::string_view kSelectClaimedSecrets =
    "SELECT s.endpoint_id, s.secret FROM publisher_endpoint_secrets s WHERE s.endpoint_id IN "
    "(SELECT endpoint_id FROM publisher_tasks WHERE lease_owner = $1 AND state = 'delivering') "
    "AND (s.expires_at IS NULL OR s.expires_at > $2) ORDER BY s.endpoint_id, s.created_at DESC";
// ON CONFLICT: Store::record may run again after a COMMIT whose answer was lost (the connection
// broke); the attempt row it already wrote stays as it is.
inline constexpr std::string_view kInsertAttempt =
    "INSERT INTO publisher_attempts (" WEBHOOKS_ATTEMPT_COLUMNS
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) "
    "ON CONFLICT (delivery_id) DO NOTHING";
// $1 id, $2 owner, $3 state, $4 next_attempt_at, $5 status, $6 error, $7 now.
inline constexpr std::string_view kSettleTask =
    "UPDATE publisher_tasks SET state = $3, attempts = attempts + 1, next_attempt_at = $4, "
    "next_trigger = 'scheduled', lease_owner = NULL, lease_expires_at = NULL, last_status = $5, "
    "last_error = $6, updated_at = $7 WHERE id = $1 AND lease_owner = $2 AND state = 'delivering'";
inline constexpr std::string_view kEndpointHealthy =
    "UPDATE publisher_endpoints SET failing_since = NULL, failing_warned_at = NULL "
    "WHERE id = $1 AND failing_since IS NOT NULL";
inline constexpr std::string_view kEndpointFailing =
    "UPDATE publisher_endpoints SET failing_since = $2 WHERE id = $1 AND failing_since IS NULL";
inline constexpr std::string_view kDisableIfEnabled =
    "UPDATE publisher_endpoints SET enabled = 0, disabled_reason = $2, updated_at = $3 "
    "WHERE id = $1 AND enabled = 1";
inline constexpr std::string_view kDisableIfFailing =
    "UPDATE publisher_endpoints SET enabled = 0, disabled_reason = $2, updated_at = $3 "
    "WHERE id = $1 AND enabled = 1 AND failing_since IS NOT NULL AND failing_since <= $4";
// Claims the warning of the endpoint's current streak (schema 0004_endpoint_warnings.sql): $1 id,
// $2 now, $3 warn_before.
inline constexpr std::string_view kWarnIfFailing =
    "UPDATE publisher_endpoints SET failing_warned_at = $2 WHERE id = $1 AND enabled = 1 "
    "AND failing_warned_at IS NULL AND failing_since IS NOT NULL AND failing_since <= $3";
inline constexpr std::string_view kSelectEndpointHealth =
    "SELECT merchant_id, url, failing_since FROM publisher_endpoints WHERE id = $1";
inline constexpr std::string_view kSelectFailing =
    "SELECT id, failing_since FROM publisher_endpoints "
    "WHERE enabled = 1 AND failing_since IS NOT NULL ORDER BY id";
inline constexpr std::string_view kRelease =
    "UPDATE publisher_tasks SET state = 'pending', lease_owner = NULL, lease_expires_at = NULL, "
    "next_attempt_at = $2, updated_at = $2 WHERE lease_owner = $1 AND state = 'delivering'";

// --- retention (store_retention.cc) ---
// $1 before, $2 limit: the oldest events with no unfinished task. Ordered by created_at alone, so
// the index publisher_events_created gives them in order and the LIMIT stops the scan (a tie-break
// by event_id would sort every event of a crowded millisecond).
inline constexpr std::string_view kSelectPurgeable =
    "SELECT event_id FROM publisher_events e WHERE created_at < $1 AND NOT EXISTS "
    "(SELECT 1 FROM publisher_tasks t WHERE t.event_id = e.event_id "
    "AND t.state IN ('pending', 'delivering')) ORDER BY created_at LIMIT $2";
// Each followed by the event ids as $1..$n (IN (…) is appended). The state test is evaluated
// again on rows a concurrent replay changed (PostgreSQL re-checks a locked row), so a re-queued
// task, its attempts and its event stay.
// The oldest audit entries recorded before $1, at most $2 (audit_log.h).
inline constexpr std::string_view kPurgeAudit =
    "DELETE FROM publisher_audit_log WHERE id IN (SELECT id FROM publisher_audit_log "
    "WHERE at < $1 ORDER BY at LIMIT $2)";
inline constexpr std::string_view kPurgeTasks =
    "DELETE FROM publisher_tasks WHERE state IN ('succeeded', 'dead') AND event_id IN ";
inline constexpr std::string_view kPurgeAttempts =
    "DELETE FROM publisher_attempts WHERE NOT EXISTS (SELECT 1 FROM publisher_tasks t "
    "WHERE t.id = publisher_attempts.task_id) AND event_id IN ";
inline constexpr std::string_view kPurgeEvents =
    "DELETE FROM publisher_events WHERE NOT EXISTS (SELECT 1 FROM publisher_tasks t "
    "WHERE t.event_id = publisher_events.event_id) AND event_id IN ";

}  // namespace webhooks::publisher::detail::sql
