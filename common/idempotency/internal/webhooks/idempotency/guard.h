// The idempotency guard for HTTP handlers: reads and validates `Idempotency-Key`, fingerprints the
// request (webhooks::request_fingerprint), runs the operation at most once per (scope, key) and
// maps every outcome to these answers (docs/idempotency.md):
//   missing key              400 idempotency_key_missing (when required)
//   empty, > 255 chars, or a non-printable character   400 idempotency_key_invalid
//   body not JSON            400 invalid_json
//   replay                   the stored status, headers and body, plus `Idempotent-Replayed: true`
//   in_progress              409 idempotency_key_in_use, `Retry-After` = seconds left (>= 1)
//   mismatch                 422 idempotency_key_reused
//   acquired / reacquired    the operation's answer; stored when final (is_final_status)
//   operation throws Error(storage)   503 storage_unavailable, `Retry-After: 1`; the record is
//                            failed, a retry runs again
//   operation throws Error(conflict)  409 idempotency_key_in_use, `Retry-After: 1` (its lease was
//                            lost: another caller took the record over)
//   operation throws anything else    500 internal_error; the record is failed, a retry runs again
// (answers.h writes each of them.) run_in_transaction() gives the same answers in one commit.
// When failing the record cannot be written either (the database that failed the operation, e.g.
// a full disk, refuses that write too), the guard keeps the lease and writes the failure before
// its next begin, so once the database takes writes again the retry runs at once instead of
// getting 409 until the lease lapses.
// Every outcome but `acquired` is logged as one JSON line (scope, key, path, outcome, age_ms), and
// each replay, 409 and 422 is counted in the store's OutcomeCounts (no database write). A record
// is begun with its route, "METHOD /path" (Store::lookup shows it).
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "webhooks/clock.h"
#include "webhooks/idempotency/answers.h"
#include "webhooks/idempotency/claims.h"
#include "webhooks/idempotency/group_commit.h"
#include "webhooks/idempotency/lease_keeper.h"
#include "webhooks/idempotency/replay_cache.h"
#include "webhooks/idempotency/store.h"
#include "webhooks/json_body.h"

namespace webhooks::idempotency {

// The result of reading an `Idempotency-Key` header value.
struct KeyCheck {
  enum class Status { ok, missing, invalid } status = Status::missing;
  std::string key;      // ok: the key, unquoted
  std::string message;  // missing/invalid: why
};

// Accepts a bare key (`abc`) or an RFC 8941 structured-field string (`"abc"`, where only a
// backslash before a quote or a backslash is an escape); both mean `abc`. The key must be 1 to
// 255 characters, each printable ASCII (0x20-0x7e).
KeyCheck parse_idempotency_key(std::optional<std::string_view> header);

// What identifies a guarded request: its key and its fingerprint.
struct KeyedRequest {
  std::string key;
  std::string fingerprint;  // webhooks::request_fingerprint(method, path, body), hex
};

// Reads `key_header` (parse_idempotency_key) and fingerprints the request. Returns the 400 answer
// (idempotency_key_missing, idempotency_key_invalid, invalid_json) or std::nullopt with `out`
// filled. Throws nothing but std::bad_alloc.
std::optional<Response> key_request(std::optional<std::string_view> key_header,
                                    std::string_view method, std::string_view path,
                                    std::string_view body, KeyedRequest& out);
// The same for a body its handler has already read with its canonical form (json_body.h,
// read_json_body(body, true)), so the body is parsed once: a body that repeats a member name is
// answered 400 invalid_json, as request_fingerprint refuses it.
std::optional<Response> key_request(std::optional<std::string_view> key_header,
                                    std::string_view method, std::string_view path,
                                    const JsonBody& body, KeyedRequest& out);

// The structured log line of a begin outcome (every one but `acquired`, DESIGN "Logging"):
// {"event":"idempotency","scope","key","path","outcome","age_ms"}.
void log_outcome(std::string_view scope, std::string_view key, std::string_view path,
                 BeginOutcome outcome, UnixMillis age_ms);

// What a running operation can do besides returning its answer.
class Attempt {
 public:
  virtual ~Attempt() = default;
  virtual const Lease& lease() const = 0;
  // true when an earlier attempt started (reacquired): look for what it saved before acting.
  virtual bool reacquired() const = 0;
  virtual int attempts() const = 0;
  virtual db::Database& database() = 0;
  // Runs `fn` in one transaction and, in that same transaction, completes the record with the
  // response it returns (when final), so the operation's writes and the record commit together or
  // not at all. Throws Error(conflict) if the lease was lost (the transaction rolls back).
  virtual Response commit(const std::function<Response(db::Transaction&)>& fn) = 0;
};

using Operation = std::function<Response(Attempt&)>;
// An operation made only of writes to the guard's database: it runs inside the transaction that
// also inserts and completes the idempotency record (`begun`: acquired or reacquired; for a
// request without a key when keys are optional, outcome acquired and an empty lease).
using TransactionalOperation = std::function<Response(db::Transaction&, const BeginResult& begun)>;

struct GuardOptions {
  bool key_required = true;  // false: requests without a key run unguarded
  // How run_in_transaction's commits are grouped; on PostgreSQL a racing duplicate from another
  // process waits at most 1 s for the first one's transaction, then is answered 409.
  GroupCommitOptions group{128, 0, std::chrono::seconds(1)};
  // Completed answers run_in_transaction keeps in memory (ReplayCache), so a replay or a reused
  // key with another body is answered without the database. 0: none.
  std::size_t replay_cache_entries = 65'536;
};

class Guard {
 public:
  // `keeper` renews leases while operations run. All three must outlive the Guard.
  Guard(Store& store, LeaseKeeper& keeper, const Clock& clock, GuardOptions options = {});

  // Framework-independent core: the answer for one request. `key_header` is the raw
  // Idempotency-Key value if present; `method`, `path` and `body` feed the fingerprint.
  Response run(std::string_view scope, std::optional<std::string_view> key_header,
               std::string_view method, std::string_view path, std::string_view body,
               const Operation& operation);

  // The same answers in one commit, for an operation that only writes to this database: a key
  // this process completed (or replayed) lately is answered from memory (ReplayCache); a caller
  // of this process already running the key is answered 409 at once (InProcessClaims); otherwise
  // one transaction, grouped with concurrent callers' (GroupCommit), begins the record (a replay,
  // mismatch or another process's live lease is answered from it, the operation not run), runs
  // `operation` and completes the record with its answer, so the record is never seen
  // `in_progress`. A racing duplicate from another process waits for that transaction and is
  // replayed. An answer that is not final (is_final_status) rolls back the operation's writes and
  // leaves no record (a retry runs again); so does an exception: Error(storage) 503
  // storage_unavailable, Error(conflict) 409 idempotency_key_in_use, anything else 500
  // internal_error. Throws Error(storage) when the database fails outside the operation.
  Response run_in_transaction(std::string_view scope, std::optional<std::string_view> key_header,
                              std::string_view method, std::string_view path, std::string_view body,
                              const TransactionalOperation& operation);
  // The same for a request whose key and fingerprint its handler has read (key_request with a
  // JsonBody); `request` nullptr: the request has no key (400 idempotency_key_missing when keys
  // are required, else unguarded).
  Response run_in_transaction(std::string_view scope, const KeyedRequest* request,
                              std::string_view method, std::string_view path,
                              const TransactionalOperation& operation);

  // The record store and clock the guard uses, for callers that write a record in their own
  // transaction (Store::begin/complete with a db::Transaction) with the same answers.
  Store& store() const { return store_; }
  const Clock& clock() const { return clock_; }
  // The group commit of the store's database, for callers that write a record together with
  // their own rows (the publisher's ingest).
  GroupCommit& group() { return group_; }

 private:
  // Logs an outcome of a key and counts it (replay, in_progress, mismatch) in store_.counts().
  void note(std::string_view scope, std::string_view key, std::string_view path,
            BeginOutcome outcome, UnixMillis age_ms);
  // Fails the records of unreleased_ that can be written now; keeps the others.
  void release_unreleased();

  Store& store_;
  LeaseKeeper& keeper_;
  const Clock& clock_;
  GuardOptions options_;
  GroupCommit group_;
  InProcessClaims claims_;
  ReplayCache replays_;
  // Leases of operations that threw whose record could not be failed (at most
  // kMaxUnreleased, oldest dropped: their lease lapses on its own).
  static constexpr std::size_t kMaxUnreleased = 1024;
  std::mutex unreleased_mutex_;
  std::vector<Lease> unreleased_;
  std::atomic<bool> has_unreleased_{false};
};

}  // namespace webhooks::idempotency
