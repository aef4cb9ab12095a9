// The publisher's durable queue on SQLite or PostgreSQL: endpoints and their secrets, events,
// delivery tasks and attempts (model.h; schema/publisher/<engine>/: 0001_queue.sql,
// 0002_parked_tasks.sql, 0003_console.sql), and the console's reads.
//
//   Store store(db);                                    // db already migrated
//   db->transact([&](db::Transaction& tx) { store.insert_event(tx, event, now); });
//   auto batch = store.claim("worker-1/42", 100, now, now + lease);
//   ... deliver ...
//   store.record(settlements, now);
//
// Claims take a lease in batches: on SQLite one UPDATE … RETURNING, on PostgreSQL a row lock with
// FOR UPDATE SKIP LOCKED, so several daemons on one database each claim a disjoint share. A task
// whose lease lapsed (its daemon died) is claimable again. Tasks of disabled endpoints are never
// claimed: they are parked (Task::parked), outside the index a claim reads, so however many there
// are, a poll does not look at them. A store never reads the clock: every `now` comes from the
// caller.
// Thread-safe: one Store serves every thread. Database failures throw Error(storage).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "webhooks/db.h"
#include "webhooks/publisher/model.h"

namespace webhooks::publisher {

// A claimed task with everything needed to deliver it.
struct ClaimedTask {
  Task task;    // state delivering; attempts = attempts made before this one
  Event event;  // with its ordering key and trace context
  std::string url;
  std::vector<std::string> secrets;  // the endpoint's keys (whsec_, whsk_) active at claim time
  DeliveryControl control;           // the endpoint's headers, auth and client certificate
  // The task's FIFO sequence (the event's ordering key, "" for none) on a FIFO endpoint;
  // std::nullopt otherwise.
  std::optional<std::string> sequence_key;
  std::string lease_owner;
};

// How much of one claim each endpoint may take, so that one endpoint's backlog or slowness never
// holds up the others' deliveries (docs/publisher-delivery.md, "Isolation").
struct ClaimLimits {
  // Tasks of one endpoint being delivered at once, every worker and daemon on the database
  // together (its tasks in state delivering, read when the claim starts: claims running at the
  // same moment on PostgreSQL may each take the rest, so it can be passed by what they take).
  // 0: no limit.
  int per_endpoint = 0;
  // The caller's own tasks of one endpoint in flight at most (its HTTP client's connections to
  // it), `held` counting those it has; 0: no limit.
  int per_endpoint_here = 0;
  const std::unordered_map<std::string, int>* held = nullptr;
  // Unix ms now, read for a rate-limited endpoint once its lock is held (the claim's `now` is
  // read before the transaction, which may wait for another claim's lock); empty: `now`.
  std::function<UnixMillis()> clock;
};

// A claimed task settled: its recorded attempt and what it leads to, written back by
// Store::record.
struct Settlement {
  // The attempt row; an empty delivery_id settles the task without one (age limit reached
  // before sending: error_message says so and becomes the task's last_error). task_id,
  // endpoint_id, status and the error are always used.
  DeliveryAttempt attempt;
  std::string lease_owner;  // the claim's owner; the task is updated only if it still holds it
  enum class Next { succeeded, retry, dead } next = Next::retry;
  UnixMillis next_attempt_at = 0;  // retry: when
  bool endpoint_failed = false;    // not 2xx: the endpoint's failing streak goes on
  std::string disable_reason;      // non-empty: disable the endpoint (410)
  // The task's FIFO sequence (ClaimedTask::sequence_key): once it succeeded or is dead, the next
  // waiting task of the sequence is due.
  std::optional<std::string> sequence_key;
};

// An endpoint Store::record disabled, and why ("410 Gone", kFailingContinuously).
struct DisabledEndpoint {
  std::string endpoint_id;
  std::string reason;
  bool operator==(const DisabledEndpoint&) const = default;
};
// The reason of an endpoint disabled for failing longer than disable_failing_before allows.
inline constexpr std::string_view kFailingContinuously = "failing continuously";

// How Store::record treats failing streaks. Times are Unix milliseconds; 0 turns a rule off.
struct FailingRules {
  UnixMillis disable_before = 0;  // a streak started at or before this disables the endpoint
  // A streak started at or before this is warned about, once per streak: the UPDATE that sets
  // failing_warned_at (schema 0004_endpoint_warnings.sql) claims the warning, so one daemon and
  // one worker report it, however many share the database.
  UnixMillis warn_before = 0;
  // Non-empty: each warning and each disable this call makes becomes an event of this merchant
  // (ops_events.h: endpoint.failing, endpoint.disabled), inserted in the same transaction and
  // delivered to that merchant's endpoints like any event. No event is made about the endpoints
  // of this merchant itself.
  std::string ops_merchant_id;
};

// An endpoint Store::record warned about: failing since `failing_since` (Unix ms).
struct FailingEndpoint {
  std::string endpoint_id;
  UnixMillis failing_since = 0;
  bool operator==(const FailingEndpoint&) const = default;
};

// What Store::record changed in endpoints: each once, in the order met.
struct RecordedHealth {
  std::vector<DisabledEndpoint> disabled;
  std::vector<FailingEndpoint> warned;
};

// Rows deleted by one Store::purge call (audit: entries of the audit log, audit_log.h).
struct PurgeCounts {
  std::int64_t events = 0, tasks = 0, attempts = 0, audit = 0;
  PurgeCounts& operator+=(const PurgeCounts& o) {
    events += o.events;
    tasks += o.tasks;
    attempts += o.attempts;
    audit += o.audit;
    return *this;
  }
  bool operator==(const PurgeCounts&) const = default;
};

// Which events a listing returns (GET /v1/events, the console's events page). Every filter set
// applies (AND). Each combination reads one index range: newest first, at most `limit` + 1 rows
// (a filter by state walks that state's tasks by their event's created_at instead).
struct EventQuery {
  std::string merchant_id;          // empty: every merchant
  std::string type;                 // empty: every type; else this exact type
  std::optional<TaskState> state;   // only events having at least one task in this state
  std::optional<UnixMillis> since;  // created at or after
  std::optional<UnixMillis> until;  // created before (exclusive)
  // Non-empty: only the event with this id, and the events ingested with this Idempotency-Key
  // (exact, unquoted; one per merchant that used the key).
  std::string q;
  // Where the page starts: EventPage::next_cursor of the previous page (opaque; empty: the
  // newest). It is a position, not an offset, so events arriving meanwhile shift nothing.
  std::string cursor;
  int limit = 100;  // events per page, 1..1000
  // With a state and a merchant or type, the listing walks that state's tasks newest first and
  // keeps the matching events; a page reads at most this many of those tasks (>= 1), so a rare
  // merchant costs no more than a common one. Such a page may then hold fewer than `limit`
  // events, even none, and still a next_cursor: the walk goes on from there.
  int scan_limit = 2000;
};

// One page of a listing.
struct EventPage {
  // Newest first: by created_at, then event_id, both descending.
  std::vector<Event> events;
  // Each listed event's tasks counted by state (states without a task are absent).
  std::map<std::string, std::map<TaskState, int>> task_states;
  // Pass as EventQuery::cursor (with the same filters) for the next page; empty on the last.
  // Set on a short page too when the walk stopped at EventQuery::scan_limit.
  std::string next_cursor;
};

// The window of Store::endpoint_stats: an endpoint's last 100 attempts.
inline constexpr int kStatsWindow = 100;

// How an endpoint fared over its last kStatsWindow attempts (all zero when it has none).
struct EndpointStats {
  std::string endpoint_id;
  int attempts = 0;         // in the window: 0..kStatsWindow
  int succeeded = 0;        // of those, answered 2xx
  double success_rate = 0;  // succeeded / attempts (0..1); 0 when attempts is 0
  std::int64_t p50_ms = 0;  // median latency (nearest rank), ms; attempts without a response
  std::int64_t p99_ms = 0;  // count with the time they took until they failed
  int last_status = 0;      // the newest attempt's HTTP status, 0 when no response arrived
  std::optional<UnixMillis> last_attempt_at;  // the newest attempt's start; none without one
};

// Attempts started in one minute [start, start + 60 s).
struct MinuteBucket {
  UnixMillis start = 0;
  std::int64_t attempts = 0;  // every HTTP try (deliveries)
  std::int64_t failures = 0;  // those not answered 2xx (no response included)
  bool operator==(const MinuteBucket&) const = default;
};

// An endpoint that needs an operator's eye: disabled, or failing (a run of failures going on).
struct EndpointAttention {
  std::string endpoint_id;
  std::string merchant_id;
  bool enabled = true;
  std::string reason;                       // why it was disabled; empty while enabled
  std::optional<UnixMillis> failing_since;  // first failure of the current run
  bool operator==(const EndpointAttention&) const = default;
};

// The state of the whole publisher at a glance (the console's overview, GET /v1/overview).
struct Overview {
  // The last hour in 60 minutes, oldest first: the last bucket is the minute holding `now`
  // (minutes start at whole Unix minutes), the first starts 59 minutes before it.
  std::vector<MinuteBucket> minutes;
  // Every state present, zero when none: pending, delivering and dead are the whole queue;
  // succeeded counts the tasks of events created at or after `succeeded_since` (the first
  // minute's start), so the overview reads the last hour and the queue, never the whole history
  // (count_tasks counts every succeeded task, at a cost linear in the stored tasks).
  std::map<TaskState, std::int64_t> tasks;
  UnixMillis succeeded_since = 0;
  // When the oldest task waiting to be delivered (pending, not parked) was queued: its age_from
  // (creation, replay or recovery). None when nothing waits.
  std::optional<UnixMillis> oldest_pending_since;
  std::vector<EndpointAttention> attention;  // disabled or failing endpoints, by id
};

class Store {
 public:
  // Uses `db`, which must already be migrated. Throws nothing.
  explicit Store(std::shared_ptr<db::Database> db);
  db::Database& database() { return *db_; }

  // --- Endpoints (store_endpoints.cc) ---
  // Inserts the endpoint with its secrets. Throws Error(storage) (e.g. a duplicate id).
  void create_endpoint(const Endpoint& endpoint);
  std::optional<Endpoint> find_endpoint(const std::string& id);
  // Every endpoint of `merchant_id` (all when empty), oldest first.
  std::vector<Endpoint> list_endpoints(const std::string& merchant_id);
  // Writes url, event_types, description and the delivery control (model.h). An endpoint no
  // longer FIFO releases its waiting tasks (due at once, parked if it is disabled). False when
  // there is no such endpoint.
  bool update_endpoint(const Endpoint& endpoint, UnixMillis now);
  // Deletes the endpoint and its secrets; its unfinished tasks become dead ("endpoint deleted").
  bool delete_endpoint(const std::string& id, UnixMillis now);
  // Enables (clearing the reason and failing streak) or disables with `reason`. In the same
  // transaction, disabling parks the endpoint's pending and delivering tasks; enabling unparks
  // them, each due again at its own next_attempt_at (past ones at once).
  bool set_enabled(const std::string& id, bool enabled, const std::string& reason, UnixMillis now);
  // Adds `secret` as the newest; every other secret that has no earlier expiry stops signing at
  // `old_expires_at`. False when there is no such endpoint.
  bool rotate_secret(const std::string& id, const std::string& secret, UnixMillis old_expires_at,
                     UnixMillis now);
  // As rotate_secret for several new keys at once (a "both" endpoint's whsec_ and whsk_), and
  // sets the endpoint's signing scheme to `signing`, in one transaction.
  bool rotate_keys(const std::string& id, const std::vector<std::string>& keys,
                   SigningScheme signing, UnixMillis old_expires_at, UnixMillis now);
  std::int64_t count_disabled_endpoints();

  // --- Events (store_events.cc) ---
  // Inserts `event` and one pending task (due at `now`) for every enabled endpoint of its
  // merchant whose filter matches its type, inside the caller's transaction. Returns the number
  // of tasks.
  int insert_event(db::Transaction& tx, const Event& event, UnixMillis now);
  std::optional<Event> find_event(const std::string& event_id);
  // The events of list_event_page's page.
  std::vector<Event> list_events(const EventQuery& query);
  std::vector<Task> tasks_of_event(const std::string& event_id);
  // Oldest first.
  std::vector<DeliveryAttempt> attempts_of_event(const std::string& event_id);
  // Puts the event's tasks (only `endpoint_id`'s when given) back to pending, due now, with a
  // manual trigger and a new round (attempts 0, age counted from now). Tasks being delivered
  // right now are left alone. Tasks of a disabled endpoint are re-queued parked. Returns how many.
  int replay(const std::string& event_id, const std::string& endpoint_id, UnixMillis now);
  // The same for every dead task of the endpoint whose event was created at or after `since`
  // (parked if the endpoint is disabled).
  int recover(const std::string& endpoint_id, UnixMillis since, UnixMillis now);
  // Tasks by state (every state present, zero when none).
  std::map<TaskState, std::int64_t> count_tasks();

  // --- The console's reads and replay-missing (store_console.cc, store_stats.cc) ---
  // Reads run on the database's read connections (Database::read): on SQLite they never wait
  // for, or hold up, a delivery's write.
  // One page of events matching `query`. Throws Error(invalid_argument) for a cursor that is not
  // one a page returned, or a limit outside 1..1000.
  EventPage list_event_page(const EventQuery& query);
  // Creates the tasks the endpoint is missing: for each event of its merchant created at or
  // after `since` whose type its filter selects and that has no task for this endpoint (accepted
  // while it was disabled, or before it was created), a pending task due at `now` with a manual
  // trigger and a new round (age counted from now); parked when the endpoint is disabled. Never
  // two tasks for one event and endpoint, even when called twice at once (the second adds none).
  // Works in transactions of 500 events each, so writers (delivery) never wait long; a crash
  // between two keeps what the first made, and a second call adds only the rest.
  // Returns how many it created; std::nullopt when there is no such endpoint. The caller bounds
  // `since` (the receivers' dedup window: --replay-max-age).
  std::optional<int> replay_missing(const std::string& endpoint_id, UnixMillis since,
                                    UnixMillis now);
  // The endpoint's last kStatsWindow attempts summed up (zeros for an unknown endpoint).
  EndpointStats endpoint_stats(const std::string& endpoint_id);
  // Attempts per minute over the hour up to `now`, tasks by state, the oldest waiting task, and
  // the endpoints disabled or failing.
  Overview overview(UnixMillis now);

  // --- Dispatch (store_dispatch.cc) ---
  // Leases up to `limit` due tasks to `lease_owner` until `lease_until`: pending tasks with
  // next_attempt_at <= now (delivering tasks whose lease lapsed are pending again first), of
  // enabled endpoints (parked and waiting FIFO tasks are not looked at). Endpoints take turns,
  // the one whose oldest task is due longest first, each taking its oldest due tasks up to
  // `limits` and, with a rate limit of N, up to N claimed in the last second (those claimed are
  // logged in publisher_rate_log; on PostgreSQL the endpoint's row is locked for the count, so
  // daemons never pass N together). Reads one index entry per endpoint with pending tasks, never
  // an endpoint's whole backlog. `lease_owner` must be unique per call (it identifies the batch).
  std::vector<ClaimedTask> claim(const std::string& lease_owner, int limit, UnixMillis now,
                                 UnixMillis lease_until, const ClaimLimits& limits = {});
  // Writes the attempts and the tasks' next states in one transaction. A task whose lease moved
  // on keeps its state (its attempt row is still written). `disable_failing_before`: an endpoint
  // whose failing streak started at or before it is disabled (0: never). Disabling an endpoint
  // (that or a 410) parks its tasks, the ones still being delivered included. Returns the
  // endpoints this call disabled (each once; none already disabled). Safe to call again with the
  // same records after it threw, even if its COMMIT had in fact been applied: attempt rows are
  // keyed by delivery_id and a settled task no longer holds the lease, so nothing is doubled.
  std::vector<DisabledEndpoint> record(const std::vector<Settlement>& records, UnixMillis now,
                                       UnixMillis disable_failing_before = 0);
  // The same with every rule of `rules`: also warns about streaks older than rules.warn_before
  // and writes the ops events (FailingRules).
  RecordedHealth record(const std::vector<Settlement>& records, UnixMillis now,
                        const FailingRules& rules);
  // record() and then claim() in one transaction (one commit instead of two, and the shares
  // the claim reads already count the settled tasks as done): the delivery workers' step.
  // `claimed` receives what claim() returns. Throws Error(storage) as both do; then nothing was
  // recorded or claimed, unless the COMMIT was applied with its answer lost (record() again and
  // release(lease_owner) are both safe).
  RecordedHealth record_and_claim(const std::vector<Settlement>& records, UnixMillis now,
                                  const FailingRules& rules, const std::string& lease_owner,
                                  int limit, UnixMillis lease_until, const ClaimLimits& limits,
                                  std::vector<ClaimedTask>& claimed);
  // Enabled endpoints with a failing streak and when it started, by id: the gauge
  // webhooks_endpoint_failing_seconds (metrics.h).
  std::vector<FailingEndpoint> failing_endpoints();

  // --- Retention (store_retention.cc) ---
  // Deletes up to `limit` events created before `before` (oldest first) whose tasks are all
  // finished (succeeded or dead; an event without tasks too), with their tasks and attempts, in
  // one transaction. A task re-queued meanwhile (a replay committed first) keeps its event, its
  // task and their attempts. In the same transaction, up to `limit` entries of the audit log
  // recorded before `before`. Returns what it deleted; fewer than `limit` events and audit
  // entries means nothing older is left to purge. REQUIRES: limit >= 1.
  PurgeCounts purge(UnixMillis before, int limit);
  // Puts tasks still leased by `lease_owner` back to pending, due at `now`. Returns how many.
  int release(const std::string& lease_owner, UnixMillis now);

 private:
  // The bodies of claim() and record(), inside the caller's transaction.
  void claim_in(db::Transaction& tx, const std::string& lease_owner, int limit, UnixMillis now,
                UnixMillis lease_until, const ClaimLimits& limits,
                std::vector<ClaimedTask>& claimed);
  void record_in(db::Transaction& tx, const std::vector<Settlement>& records, UnixMillis now,
                 const FailingRules& rules, RecordedHealth& health);

  std::shared_ptr<db::Database> db_;
};

}  // namespace webhooks::publisher
