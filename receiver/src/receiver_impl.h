// The Receiver's private state and steps, shared by the receiver's source files (not installed):
//   receiver.cc       construction and the two handle() entry points
//   admit.cc          verification and parsing of a delivery, the reads that need no write
//   outcomes.cc       the answers of the outcomes, their log lines and the replay cache
//   run.cc            the handler's call and the durable and in-process paths
//   transactional.cc  the transactional path (the handler inside the record's transaction)
//   claims.cc         Config::claims resolved, the SQLite file's lock
//   headers.cc        Headers, read_signed_headers
//   form_payload.cc   GitHub's form deliveries decoded
#pragma once

#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "webhooks/idempotency/answers.h"
#include "webhooks/idempotency/claims.h"
#include "webhooks/idempotency/group_commit.h"
#include "webhooks/idempotency/replay_cache.h"
#include "webhooks/idempotency/service.h"
#include "webhooks/log.h"
#include "webhooks/providers/provider.h"
#include "webhooks/receiver/receiver.h"
#include "webhooks/verifier.h"

namespace webhooks::receiver {

// A record's times, kept from begin for the replay cache.
struct RecordTimes {
  UnixMillis created_at = 0, expires_at = 0;
};

// Which Receivers share a SQLite file (Config::Claims::automatic), told by a flock on the file:
// exclusive while the Receivers of one process use in-process claims (they share one claim set,
// below), shared among durable ones. The claims are keyed by consumer, so Receivers of different
// consumers on one file never block each other.
struct FileLock {
  int fd = -1;
  bool exclusive = false;
  idempotency::InProcessClaims claims;  // shared by this process's in-process Receivers
  ~FileLock();
};

// The process's lock on `path`, one per process and file: when `exclusive` is wanted, exclusive
// if no other process holds a lock, else shared when the others are shared (durable or
// transactional); otherwise shared. The first Receiver of the process to lock the file decides;
// the others get the same lock. Throws Error(invalid_argument) when another process holds it
// exclusively, Error(storage) when the file cannot be opened.
std::shared_ptr<FileLock> lock_file(const std::string& path, bool exclusive);

// The `payload` field of an application/x-www-form-urlencoded `body` (webhooks/form.h): GitHub's
// form deliveries. std::nullopt with `why` set (a sentence) when the form has no payload field,
// or two.
std::optional<std::string> form_payload(std::string_view body, std::string& why);

// What a delivery's Event views that is not in the request: the provider's id read from the body,
// the JSON decoded from a form body, the body's type. Lives as long as the Event
// (Receiver::handle).
struct Owned {
  std::string provider_id;
  std::string form_json;
  std::string type;  // the body's "type"
};

// What Receiver::Impl::admit fills for one delivery. Lives as long as its handling: the event views
// `owned`, and the claim is held until the handler's answer is recorded.
struct Admission {
  Event event;
  std::optional<idempotency::InProcessClaims::Claim> claim;
  std::string fingerprint;
  Owned owned;
  bool durable = true;  // the claims outlive the process (admit_or_answer, not transactional)
};

// Logs a failure of the dedup store and answers 503 (idempotency::storage_unavailable).
Answer store_failed(const std::exception& e);

// True when the handler ran longer than Config::handler_timeout (0: no limit).
bool timed_out(const Config& config, std::chrono::steady_clock::time_point started);

// Runs the handler; its final reply, or std::nullopt with `why` set.
template <typename Call>
std::optional<Reply> call_handler(const Config& config, Call&& call, std::string& why) {
  const auto started = std::chrono::steady_clock::now();
  std::optional<Reply> reply;
  try {
    reply = call();
  } catch (const std::exception& e) {
    why = std::string("the handler threw: ") + e.what();
    return std::nullopt;
  } catch (...) {
    why = "the handler threw";
    return std::nullopt;
  }
  if (timed_out(config, started)) {
    why = "the handler timed out";
    return std::nullopt;
  }
  if (!idempotency::is_final_status(reply->status)) {
    why = "the handler answered " + std::to_string(reply->status);
    return std::nullopt;
  }
  return reply;
}

struct Receiver::Impl {
  Impl(Config c, std::shared_ptr<db::Database> database);

  // Resolves Config::claims at the first non-transactional delivery; while that throws (another
  // process holds the file alone), each call tries again, so the receiver works once that
  // process has stopped.
  bool durable_claims() {
    if (claims_resolved.load(std::memory_order_acquire)) return durable;
    return resolve_claims_once();
  }
  // durable_claims' first call: resolve_claims under claims_mutex.
  bool resolve_claims_once();
  // Sets `file` and `claims`; true for durable claims.
  bool resolve_claims();
  // Takes this process's lock on the SQLite file once (lock_file: exclusive only when asked and
  // no other process holds one), and the lock's claim set while it is exclusive, so this
  // process's Receivers of the file see each other's claims. Caller holds claims_mutex.
  void lock_database_file(bool exclusive);
  // Before the first transactional delivery (SQLite file, automatic or durable claims): at least a
  // shared lock, so that no other process handles this file's events under in-process claims
  // meanwhile (its handlers could run beside ours). Throws as lock_file; retried at the next
  // delivery.
  void share_for_transactions() {
    if (transactions_locked.load(std::memory_order_acquire)) return;
    share_for_transactions_once();
  }
  void share_for_transactions_once();

  // Verification, parsing and the reads that need no write: the answer, or std::nullopt with
  // `event`, `claim` and `fingerprint` (the body's SHA-256, hex, computed once per delivery)
  // filled when the handler is to run. A duplicate of an event this process completed is
  // answered from `replays`. With `read_record` (the handler runs outside the record's
  // transaction) the record is also read, so that only a new or retryable event runs.
  // `owned` holds what the event views beyond the request.
  std::optional<Answer> admit(const Headers& headers, std::string_view body, Admission& admission,
                              bool read_record);
  // admit after choosing the claim set: `transactional` shares it for transactions and reads no
  // record; otherwise admission.durable says whether the claims are durable, and the record is
  // read. A failure of the store, or another process holding the file alone, is answered by
  // store_failed.
  std::optional<Answer> admit_or_answer(const Headers& headers, std::string_view body,
                                        Admission& admission, bool transactional);
  // admit's first step: the body's size and signature; sets event.id, .timestamp and .body.
  std::optional<Answer> verify(const Headers& headers, std::string_view body, Event& event,
                               Owned& owned);
  // verify's signature step for another provider than standard (providers::ProviderVerifier).
  std::optional<Answer> verify_provider(const Headers& headers, std::string_view body, Event& event,
                                        Owned& owned);
  // admit's second step: the body checked as a JSON object without building a tree (a GitHub form
  // body: its payload field's JSON, kept in `owned` and set as event.body); sets event.type.
  std::optional<Answer> parse(const Headers& headers, std::string_view body, Event& event,
                              Owned& owned);
  // The answer of a final reply (its empty body replaced).
  static Answer final_answer(Reply reply);
  // Logs a failed handler, records the failed attempt and answers 500 handler_failed.
  Answer failed(const Event& event, std::string_view why, const idempotency::Lease* lease,
                std::string_view fingerprint);
  // The answer for a begin outcome that runs nothing, logged; a replay read from the database
  // (`fingerprint` not empty) is remembered in `replays`. A record read as completed is
  // committed (in-process claims keep two deliveries of one event out of one group).
  std::optional<Answer> settled(const Event& event, const idempotency::BeginResult& begun,
                                std::string_view fingerprint);
  // Remembers a completed event's answer in `replays` (after its commit), with its type as the
  // note that a duplicate answered before the scan is logged with (admit).
  void remember(const Event& event, std::string_view fingerprint, const Answer& answer,
                const RecordTimes& record);
  void log(const Event& event, std::string_view outcome, int status,
           spdlog::level::level_enum level = spdlog::level::info);
  // A refused delivery: logged as `code` with `status`, answered with the error body.
  Answer refuse(const Event& event, int status, std::string_view code, std::string_view message);
  // A failed verification's refusal (400 headers_invalid, 401 signature_invalid or
  // timestamp_out_of_tolerance, 400 event_id_missing), logged; std::nullopt when `status` is ok.
  std::optional<Answer> unverified(const Event& event, providers::ProviderStatus status,
                                   std::string_view message);
  // Logs a handled or rejected event and remembers its answer; after its commit.
  // `record`: the record's created_at and expires_at (from begin).
  Answer handled(const Event& event, std::string_view fingerprint, Answer answer,
                 const RecordTimes& record);
  // Durable claim: an in_progress record with a lease is committed before the handler runs.
  Answer run_durable(const Event& event, const std::string& fingerprint, const Handler& handler);
  // In-process claim: the handler runs under the claim; one commit records the answer.
  Answer run_in_process(const Event& event, const std::string& fingerprint, const Handler& handler);
  // One savepoint of a grouped transaction: the record (inserted in_progress, completed before
  // the commit, so never seen in_progress outside it) and the handler's writes.
  Answer run_transactional(Event& event, const std::string& fingerprint,
                           const TransactionalHandler& handler);

  Config config;
  const Clock& clock;
  std::optional<Verifier> verifier;                                // Provider::standard
  std::unique_ptr<providers::ProviderVerifier> provider_verifier;  // the others
  std::shared_ptr<db::Database> db;
  // The dedup records, their leases and maintenance, and the group commit of the transactional
  // mode: the idempotency core built as everywhere else (service.h).
  idempotency::Service idempotency;
  idempotency::Store& store = idempotency.store();
  idempotency::GroupCommit& group = idempotency.group();
  idempotency::LeaseKeeper& keeper = idempotency.keeper();
  idempotency::ReplayCache replays;
  idempotency::InProcessClaims own_claims;
  // Ours, or the file lock's (shared by this process's Receivers of the file) once resolved.
  std::atomic<idempotency::InProcessClaims*> claims{&own_claims};
  std::shared_ptr<FileLock> file;
  std::mutex claims_mutex;
  std::atomic<bool> claims_resolved{false};
  std::atomic<bool> transactions_locked{false};
  bool durable = true;
};

}  // namespace webhooks::receiver
