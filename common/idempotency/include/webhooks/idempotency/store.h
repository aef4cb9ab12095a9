// The idempotency core: one record per (scope, idempotency_key) with a request fingerprint, a
// state (in_progress / completed / failed), a lease and a TTL. docs/idempotency.md.
//
//   auto begun = store.begin(scope, key, fingerprint, clock.now_ms());
//   switch (begun.outcome) { case BeginOutcome::replay: return *begun.response; ... }
//   // acquired or reacquired: run the operation, then
//   store.complete(begun.lease, response, clock.now_ms());   // or store.fail(...)
//
// The database's unique key (scope, idempotency_key) is the arbiter: two racing callers are never
// both told `acquired`. Thread-safe: one Store serves every thread of a process, and several
// processes may share one PostgreSQL database (or one SQLite file).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "webhooks/clock.h"
#include "webhooks/db.h"

namespace webhooks::idempotency {

// What a merchant (or an operator) may see of one idempotency record: Store::lookup and
// Store::list return it (docs/idempotency.md, "Looking a key up"). No lease token and no stored
// response headers: a view answers "did my request with key K go through, and with what?".
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
  // integer "id" (the order or payout the request made); for an answer stored by reference
  // (Response::rendered_from), the store's ReplayRenderer::resource_id; otherwise none.
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

// Counts, in memory, the duplicates answered from an idempotency record without running its
// operation: replays, 409s (in progress) and 422s (mismatch), per (scope, key). The Guard counts
// each answer here (a map update under a mutex, no database write: a replay is answered from the
// ReplayCache without one), and Store::flush_counts adds them to the record's replays, conflicts
// and mismatches columns in the background (Maintenance, every second by default). So the
// stored counts lag by up to one flush interval, and a crash loses the counts not flushed yet
// (docs/idempotency.md, "Looking a key up"). Thread-safe.
enum class BeginOutcome;

class OutcomeCounts {
 public:
  // At most `max_keys` keys wait for a flush; an answer for another key beyond that is not
  // counted (see dropped()), so a database that refuses writes for long costs bounded memory.
  // About 100 bytes per key plus its scope and key.
  explicit OutcomeCounts(std::size_t max_keys = 65'536) : max_keys_(max_keys) {}

  // One answer for (scope, key): replay, in_progress (409) or mismatch (422); any other outcome
  // is ignored.
  void add(std::string_view scope, std::string_view key, BeginOutcome outcome);

  struct Increment {
    std::string scope, key;
    std::int64_t replays = 0, conflicts = 0, mismatches = 0;
  };
  // Removes and returns up to `limit` keys' pending increments (in no particular order).
  std::vector<Increment> take(std::size_t limit);
  // Returns increments that could not be written (their counts are added to any new ones).
  void put_back(std::vector<Increment> increments);

  std::size_t pending_keys() const;
  // Answers not counted because max_keys keys were pending.
  std::int64_t dropped() const;

 private:
  void merge_locked(Increment&& increment);

  const std::size_t max_keys_;
  mutable std::mutex mutex_;
  // Keyed by scope + '\n' + key (a key is printable ASCII, so '\n' never occurs in it).
  std::unordered_map<std::string, Increment> pending_;
  std::int64_t dropped_ = 0;
};

// The scope of `id` (a merchant id) within `component` ("orders-api", "publisher"):
// "<component>:<id>". Components that share one database (orders-api and the publisher's ingest,
// both scoped by merchant) keep one key space each, so one merchant's Idempotency-Key sent to both
// is two requests, not a 422 on the second (docs/idempotency.md, "Scopes").
std::string component_scope(std::string_view component, std::string_view id);

enum class State { in_progress, completed, failed };

enum class BeginOutcome {
  acquired,     // no live record: one was inserted in_progress with our lease; run the operation
  replay,       // completed with the same fingerprint: answer the stored response
  in_progress,  // another caller holds a live lease (same fingerprint): answer 409
  mismatch,     // same key, different fingerprint: answer 422
  reacquired,   // failed, or in_progress with a lapsed lease (same fingerprint): run it again
};

std::string_view to_string(State state) noexcept;
std::string_view to_string(BeginOutcome outcome) noexcept;

// A stored answer: HTTP status, selected headers, body.
struct Response {
  Response() = default;
  explicit Response(int status_code) : status(status_code) {}
  // As in `Response{201, {{"Location", "/orders/1"}}, body}`.
  Response(int status_code, std::vector<std::pair<std::string, std::string>> header_pairs,
           std::string body_text = {})
      : status(status_code), headers(std::move(header_pairs)), body(std::move(body_text)) {}

  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  // Not sent. Set by an operation whose answer is a rendering of rows it keeps anyway and never
  // changes (orders-api's 201 to POST /orders: the order as created): the bytes that name those
  // rows (the order's id), at most kMaxRenderedFrom. When the Store has a ReplayRenderer, a
  // completed record stores these bytes and the status instead of headers and body, and a replay
  // asks the renderer for the answer again (docs/idempotency.md, "Answers stored by reference").
  // Empty: the answer is stored as it is.
  std::string rendered_from;
};

constexpr std::size_t kMaxRenderedFrom = 64;

// Rebuilds the answers that records store by reference (Response::rendered_from), for the Store
// of an application that sets rendered_from. The application's contract, which makes a replay
// byte for byte the first answer: render() gives exactly the headers and body that the operation
// answered with that rendered_from, whenever it is called while the record lives, so it reads
// only what never changes after the operation committed (an order's amount, not its status), and
// a change to what it renders takes a new form of reference while records of the old one live.
// Implementations must be thread-safe; the Store holds one shared by its copies.
class ReplayRenderer {
 public:
  virtual ~ReplayRenderer() = default;

  // The answer of a record completed with `status` and `rendered_from` by a request on `route`
  // ("POST /orders"; empty for a record begun without one), read with db.read: `db` is the
  // transaction that begins the record, or the database. std::nullopt when the rows are gone or
  // `rendered_from` is not one of its forms: the Store then throws Error(invalid_argument), which
  // the guard answers 500 internal_error (Error(storage), 503, would invite retries that cannot
  // succeed). Throws Error(storage) when the database fails.
  virtual std::optional<Response> render(db::Statements& db, std::string_view route, int status,
                                         std::string_view rendered_from) const = 0;
  // The id of the resource `rendered_from` names, for Store::lookup's RecordView::resource_id
  // (without a read); std::nullopt when there is none.
  virtual std::optional<std::string> resource_id(std::string_view rendered_from) const = 0;
};

// What identifies the current holder of a record's lease. Only the holder may complete, fail or
// renew the record.
struct Lease {
  std::string scope;
  std::string key;
  std::string token;  // random, unique per begin that acquired or reacquired
};

struct BeginResult {
  BeginOutcome outcome = BeginOutcome::acquired;
  Lease lease;                       // acquired, reacquired: ours; otherwise empty
  std::optional<Response> response;  // replay: the stored response
  UnixMillis lease_expires_at = 0;   // in_progress: when the holder's lease lapses
  int attempts = 0;           // how many times the operation has been started, this one included
  UnixMillis created_at = 0;  // when the record was first created (for logs: age)
  // When the record expires (begin: once committed; peek: if it were begun now).
  UnixMillis expires_at = 0;
  // begin_deferred on SQLite: `acquired` with no record written yet (lease.scope and lease.key
  // set, no token); complete_begun inserts it completed.
  bool deferred = false;
  std::string route;  // deferred: the route complete_begun stores
};

// A whole record, for inspection (tests, debugging, admin tools).
struct Record {
  std::string scope, key, fingerprint;  // fingerprint: 64 lowercase hex digits (stored as 32 bytes)
  State state = State::in_progress;
  std::optional<std::string> lease_owner;
  UnixMillis lease_expires_at = 0;  // 0 when no lease
  int attempts = 0;
  // completed: the answer, rebuilt by the store's ReplayRenderer when stored by reference
  // (std::nullopt when it cannot be).
  std::optional<Response> response;
  std::string rendered_from;  // what the answer is stored by; empty when it is stored whole
  UnixMillis created_at = 0, expires_at = 0;
};

struct Settings {
  Settings() = default;
  // As in `Settings{30s, 24h}`.
  Settings(std::chrono::milliseconds lease_duration, std::chrono::milliseconds record_ttl,
           std::shared_ptr<const ReplayRenderer> answers = nullptr)
      : lease(lease_duration), ttl(record_ttl), renderer(std::move(answers)) {}

  // How long a lease lives without a heartbeat. Short, so a crashed operation is retryable one
  // lease later; a live one renews it (see LeaseKeeper). Default 30 s.
  std::chrono::milliseconds lease{std::chrono::seconds(30)};
  // How long a record exists; after `ttl` the same key is a new request. Default 24 h.
  std::chrono::milliseconds ttl{std::chrono::hours(24)};
  // Rebuilds the answers stored by reference (Response::rendered_from). None (the default): every
  // answer is stored whole, rendered_from is ignored, and a record stored by reference (by a
  // process that had a renderer) is replayed as Error(invalid_argument), answered 500.
  std::shared_ptr<const ReplayRenderer> renderer;
};

// True for answers that are stored as `completed` and replayed: 2xx and deterministic 4xx (every
// 4xx but 408, 409, 425 and 429). Anything else marks the record failed, so a retry runs again.
bool is_final_status(int status) noexcept;

class Store {
 public:
  // Uses `db`, which must already be migrated (db::Database::migrate). Throws nothing.
  explicit Store(std::shared_ptr<db::Database> db, Settings settings = {});

  db::Database& database() { return *db_; }
  const Settings& settings() const { return settings_; }

  // Starts (or finds) the record for (scope, key). `fingerprint` is the request fingerprint
  // (webhooks::request_fingerprint: 64 hex digits, stored as its 32 bytes); `now` is Unix ms. A
  // record past its expires_at counts as absent. Throws Error(invalid_argument) for a fingerprint
  // that is not 64 hex digits (nothing is written) or for a replay whose answer is stored by
  // reference and cannot be rendered (no Settings::renderer, or the rows are gone; nothing is
  // written: here, in begin(tx), begin_deferred and peek), Error(storage) when the database fails.
  // `route` ("POST /orders") is stored with a new record for lookup() (empty: NULL); it costs the
  // INSERT its bytes and nothing else.
  BeginResult begin(std::string_view scope, std::string_view key, std::string_view fingerprint,
                    UnixMillis now, std::string_view route = {});
  // The same inside the caller's transaction `tx` (on this store's database), which the caller
  // commits: the outcome holds only once it has committed, and a rollback undoes the acquisition.
  // Lets a caller group several records' writes into one transaction. Returns the outcome as
  // above. Throws Error(invalid_argument) as above (before any statement), Error(storage) when
  // a statement fails and Error(conflict) when a record seen
  // by the failed INSERT is gone by the SELECT (a concurrent purge); in both cases the caller
  // must roll `tx` back (let the exception leave Database::transact) and may retry.
  BeginResult begin(db::Transaction& tx, std::string_view scope, std::string_view key,
                    std::string_view fingerprint, UnixMillis now, std::string_view route = {});

  // begin + complete in one write, for an operation whose own writes commit in `tx` with its
  // record (a GroupCommit caller's work). begin_deferred gives the outcome begin(tx) would give.
  // On SQLite, whose BEGIN IMMEDIATE keeps every other writer (of any process) out until `tx`
  // ends, a record that is absent or expired is not written yet: the outcome is `acquired` with
  // `deferred` set, and complete_begun inserts the record already completed — one write per new
  // record instead of an INSERT and an UPDATE (docs/idempotency.md, "Group commit"). On
  // PostgreSQL it is begin(tx): the INSERT comes first, so that another process's duplicate waits
  // on the unique key. complete_begun completes what begin_deferred acquired or reacquired, in
  // `tx`; it returns false when the lease was lost (nothing written). Both throw as begin(tx) and
  // complete(tx).
  BeginResult begin_deferred(db::Transaction& tx, std::string_view scope, std::string_view key,
                             std::string_view fingerprint, UnixMillis now,
                             std::string_view route = {});
  bool complete_begun(db::Transaction& tx, const BeginResult& begun, std::string_view fingerprint,
                      const Response& response, UnixMillis now);

  // A read without a write or a lock: the outcome begin() would give at `now`, with the same
  // fields, but no lease (lease.token empty) and nothing written. `mismatch`, `replay` and
  // `in_progress` (a live lease) stay true until the holder settles the record or it expires, so
  // a caller may answer from them and send only `acquired` (no record, or an expired one; attempts
  // 1) and `reacquired` (a failed record or a lapsed lease; attempts = the record's + 1) through
  // begin(). Throws Error(invalid_argument) for a fingerprint that is not 64 hex digits,
  // Error(storage) when the database fails.
  BeginResult peek(std::string_view scope, std::string_view key, std::string_view fingerprint,
                   UnixMillis now);

  // Marks the record completed with `response`, only if `lease` still holds it. Returns false when
  // the lease was lost (swept or taken over): nothing was written. The second form writes inside
  // the caller's transaction, so the caller's own writes and the record commit together; the
  // caller must abort the transaction (throw) when it returns false. Both throw Error(storage)
  // when the database fails, Error(invalid_argument) for a rendered_from longer than
  // kMaxRenderedFrom (nothing written; complete_begun too). With Settings::renderer and a
  // rendered_from, the answer is stored by reference. `now` (Unix ms) is stored as the record's
  // updated_at, here and in fail().
  bool complete(const Lease& lease, const Response& response, UnixMillis now);
  bool complete(db::Transaction& tx, const Lease& lease, const Response& response, UnixMillis now);

  // Marks the record failed (a retry with the same fingerprint will be `reacquired`), only if
  // `lease` still holds it. `status` (> 0) is the HTTP status the caller answered, stored for
  // lookup() (never replayed); 0 stores none. Returns false when the lease was lost: nothing was
  // written. The second form writes inside the caller's transaction (committed by the caller).
  // Both throw Error(storage) when the database fails.
  bool fail(const Lease& lease, UnixMillis now, int status = 0);
  bool fail(db::Transaction& tx, const Lease& lease, UnixMillis now, int status = 0);

  // Extends the lease to now + settings().lease. Returns false when the lease was lost.
  bool renew(const Lease& lease, UnixMillis now);

  // The sweeper: marks in_progress records whose lease lapsed before `now` as failed. Returns how
  // many.
  int sweep(UnixMillis now);
  // The purge: deletes records past expires_at, at most `limit` per call. Returns how many.
  int purge(UnixMillis now, int limit = 10'000);

  // The record, or std::nullopt. For inspection; not part of the request path.
  std::optional<Record> find(std::string_view scope, std::string_view key);

  // The read behind "did my request with key K go through?" (a merchant's page or API): the
  // record of (scope, key) as a RecordView, or std::nullopt when there is none or it expired
  // (expires_at <= now, Unix ms): a key of another scope is absent. One read, no lock, no write.
  // The counters are those flushed so far (see counts()). Throws Error(storage).
  std::optional<RecordView> lookup(std::string_view scope, std::string_view key, UnixMillis now);
  // The scope's unexpired records newest first, filtered by `query` (state, created time range),
  // one page of at most query.limit. Throws Error(invalid_argument) for a limit outside 1 to
  // kMaxListLimit or a cursor this method did not make, Error(storage) when the database fails.
  ListPage list(std::string_view scope, const ListQuery& query, UnixMillis now);

  // The duplicates answered from records (replay, in_progress, mismatch) that the Guard counts in
  // memory, shared by every copy of this Store. Thread-safe; no I/O.
  OutcomeCounts& counts() const { return *counts_; }
  // Adds the pending counts to their records: one UPDATE per key, up to `limit` keys, in one
  // transaction (the Maintenance thread calls it every second). A record that is gone (purged)
  // takes nothing. Returns the number of keys written. Throws Error(storage) when the database
  // fails; the increments are kept for the next flush.
  int flush_counts(std::size_t limit = 10'000);

 private:
  std::shared_ptr<db::Database> db_;
  Settings settings_;
  std::shared_ptr<OutcomeCounts> counts_;
};

}  // namespace webhooks::idempotency
