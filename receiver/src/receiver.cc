#include "webhooks/receiver/receiver.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <map>
#include <mutex>

#include "webhooks/error_body.h"
#include "webhooks/ed25519.h"
#include "webhooks/error.h"
#include "webhooks/fingerprint.h"
#include "webhooks/idempotency/answers.h"
#include "webhooks/idempotency/claims.h"
#include "webhooks/idempotency/group_commit.h"
#include "webhooks/idempotency/lease_keeper.h"
#include "webhooks/idempotency/maintenance.h"
#include "webhooks/idempotency/replay_cache.h"
#include "webhooks/idempotency/schema.h"
#include "webhooks/json_parse.h"
#include "webhooks/log.h"
#include "webhooks/secret.h"
#include "webhooks/verifier.h"
#include "webhooks/wire.h"

namespace webhooks::receiver {
namespace {

using idempotency::BeginOutcome;
using idempotency::BeginResult;
using idempotency::kEventVocabulary;

Answer error_answer(int status, std::string_view code, std::string_view message) {
  return idempotency::error_response(status, code, message);
}

Verifier make_verifier(const Config& config) {
  std::vector<Secret> secrets;
  for (const std::string& text : config.secrets) secrets.push_back(Secret::parse(text));
  std::vector<Ed25519PublicKey> keys;
  for (const std::string& text : config.public_keys) keys.push_back(Ed25519PublicKey::parse(text));
  return Verifier(secrets, std::move(keys), VerifyOptions{config.tolerance, true});
}

std::shared_ptr<db::Database> migrated(std::shared_ptr<db::Database> database, const Clock& clock) {
  database->migrate({idempotency::schema()}, clock.now_ms());  // idempotency_records only
  return database;
}

// A record's times, kept from begin for the replay cache.
struct RecordTimes {
  UnixMillis created_at = 0, expires_at = 0;
};

// Thrown inside a transactional handler's savepoint to roll its writes back: why it failed.
struct HandlerFailed {
  std::string why;
};

// Which Receivers share a SQLite file (Config::Claims::automatic), told by a flock on the file:
// exclusive while the Receivers of one process use in-process claims (they share one claim set,
// below), shared among durable ones. The claims are keyed by consumer, so Receivers of different
// consumers on one file never block each other.
struct FileLock {
  int fd = -1;
  bool exclusive = false;
  idempotency::InProcessClaims claims;  // shared by this process's in-process Receivers
  ~FileLock() {
    if (fd >= 0) ::close(fd);
  }
};

[[noreturn]] void refuse_shared(const std::string& path) {
  throw Error(ErrorCode::invalid_argument,
              "another process's receiver uses " + path +
                  " alone (in-process claims); give every receiver sharing a SQLite file "
                  "Config::claims = durable");
}

// The process's lock on `path`, one per process and file: when `exclusive` is wanted, exclusive
// if no other process holds a lock, else shared when the others are shared (durable or
// transactional); otherwise shared. The first Receiver of the process to lock the file decides;
// the others get the same lock. Throws Error(invalid_argument) when another process holds it
// exclusively, Error(storage) when the file cannot be opened.
std::shared_ptr<FileLock> lock_file(const std::string& path, bool exclusive) {
  static std::mutex mutex;
  static std::map<std::pair<dev_t, ino_t>, std::weak_ptr<FileLock>> locks;
  auto lock = std::make_shared<FileLock>();
  lock->fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (lock->fd < 0 || ::fstat(lock->fd, &st) != 0) {
    throw Error(ErrorCode::storage, "cannot open " + path + " to lock it");
  }
  std::lock_guard guard(mutex);
  auto& slot = locks[{st.st_dev, st.st_ino}];
  if (auto existing = slot.lock()) return existing;  // this process locked it already
  if (exclusive && ::flock(lock->fd, LOCK_EX | LOCK_NB) == 0) {
    lock->exclusive = true;
  } else if (::flock(lock->fd, LOCK_SH | LOCK_NB) != 0) {
    refuse_shared(path);
  }
  slot = lock;
  return lock;
}

}  // namespace

bool Headers::same_name(std::string_view a, std::string_view b) {
  // ASCII case folding: header names are ASCII (RFC 9110), and no locale is consulted per byte.
  constexpr auto lower = [](char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c;
  };
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                            [&](char x, char y) { return lower(x) == lower(y); });
}

template <typename F>
void Headers::each_value(std::string_view name, F&& f) const {
  struct Context {
    F& f;
    bool stopped = false;
  } context{f};
  if (visit_) {
    visit_(viewed_, name, &context, [](void* c, std::string_view value) {
      auto& ctx = *static_cast<Context*>(c);
      ctx.stopped = !ctx.f(value);
      return !ctx.stopped;
    });
    if (context.stopped) return;
  }
  for (const auto& [n, v] : entries_) {
    if (same_name(n, name) && !f(std::string_view(v))) return;
  }
}

std::optional<std::string_view> Headers::get(std::string_view name) const {
  std::optional<std::string_view> first;
  each_value(name, [&](std::string_view value) {
    first = value;
    return false;
  });
  return first;
}

std::optional<std::string> Headers::joined(std::string_view name) const {
  std::optional<std::string> out;
  each_value(name, [&](std::string_view value) {
    if (out) {
      out->push_back(' ');
      out->append(value);
    } else {
      out.emplace(value);
    }
    return true;
  });
  return out;
}

struct Receiver::Impl {
  Impl(Config c, std::shared_ptr<db::Database> database)
      : config(std::move(c)),
        clock(config.clock ? *config.clock : system_clock()),
        verifier(make_verifier(config)),
        db(migrated(std::move(database), clock)),
        store(db, idempotency::Settings{config.lease, config.ttl}),
        group(*db, idempotency::GroupCommitOptions{128, 0, config.lock_timeout}),
        replays(config.replay_cache_entries),
        keeper(store, clock) {
    if (config.consumer.empty()) {
      throw Error(ErrorCode::invalid_argument, "the receiver's consumer name must not be empty");
    }
    if (config.maintenance_interval.count() > 0) {
      maintenance =
          std::make_unique<idempotency::Maintenance>(store, clock, config.maintenance_interval);
    }
  }
  // Resolves Config::claims at the first non-transactional delivery; while that throws (another
  // process holds the file alone), each call tries again, so the receiver works once that
  // process has stopped.
  bool durable_claims() {
    if (claims_resolved.load(std::memory_order_acquire)) return durable;
    std::lock_guard lock(claims_mutex);
    if (!claims_resolved.load(std::memory_order_relaxed)) {
      durable = resolve_claims();
      claims_resolved.store(true, std::memory_order_release);
    }
    return durable;
  }

  // Sets `file` and `claims`; true for durable claims.
  bool resolve_claims() {
    using Claims = Config::Claims;
    if (db->engine() == db::Engine::postgres) return config.claims != Claims::in_process;
    if (db->file_path().empty() || config.claims == Claims::in_process) {  // in memory: one process
      return config.claims == Claims::durable;
    }
    lock_database_file(config.claims == Claims::automatic);
    return config.claims == Claims::durable || !file->exclusive;
  }

  // Takes this process's lock on the SQLite file once (lock_file: exclusive only when asked and
  // no other process holds one), and the lock's claim set while it is exclusive, so this
  // process's Receivers of the file see each other's claims. Caller holds claims_mutex.
  void lock_database_file(bool exclusive) {
    if (!file) file = lock_file(db->file_path(), exclusive);
    if (file->exclusive) claims.store(&file->claims);
  }

  // Before the first transactional delivery (SQLite file, automatic or durable claims): at least a
  // shared lock, so that no other process handles this file's events under in-process claims
  // meanwhile (its handlers could run beside ours). Throws as lock_file; retried at the next
  // delivery.
  void share_for_transactions() {
    if (transactions_locked.load(std::memory_order_acquire)) return;
    std::lock_guard lock(claims_mutex);
    if (transactions_locked.load(std::memory_order_relaxed)) return;
    if (db->engine() == db::Engine::sqlite && !db->file_path().empty() &&
        config.claims != Config::Claims::in_process) {
      lock_database_file(false);
    }
    transactions_locked.store(true, std::memory_order_release);
  }

  // Verification, parsing and the reads that need no write: the answer, or std::nullopt with
  // `event`, `claim` and `fingerprint` (the body's SHA-256, hex, computed once per delivery)
  // filled when the handler is to run. A duplicate of an event this process completed is
  // answered from `replays`. With `read_record` (the handler runs outside the record's
  // transaction) the record is also read, so that only a new or retryable event runs.
  std::optional<Answer> admit(const Headers& headers, std::string_view body,
                              nlohmann::json& payload, Event& event,
                              std::optional<idempotency::InProcessClaims::Claim>& claim,
                              std::string& fingerprint, bool read_record);
  // The answer of a final reply (its empty body replaced).
  static Answer final_answer(Reply reply);
  // Logs a failed handler, records the failed attempt and answers 500 handler_failed.
  Answer failed(const Event& event, std::string_view why, const idempotency::Lease* lease,
                std::string_view fingerprint);
  // The answer for a begin outcome that runs nothing, logged; a replay read from the database
  // (`fingerprint` not empty) is remembered in `replays`. A record read as completed is
  // committed (in-process claims keep two deliveries of one event out of one group).
  std::optional<Answer> settled(const Event& event, const BeginResult& begun,
                                std::string_view fingerprint);
  // Remembers a completed event's answer in `replays` (after its commit).
  void remember(const Event& event, std::string_view fingerprint, const Answer& answer,
                const RecordTimes& record);
  void log(const Event& event, std::string_view outcome, int status,
           spdlog::level::level_enum level = spdlog::level::info);
  // Logs a handled or rejected event and remembers its answer; after its commit.
  // `record`: the record's created_at and expires_at (from begin).
  Answer handled(const Event& event, std::string_view fingerprint, Answer answer,
                 const RecordTimes& record);
  Answer run_durable(const Event& event, const std::string& fingerprint, const Handler& handler);
  Answer run_in_process(const Event& event, const std::string& fingerprint,
                        const Handler& handler);

  Config config;
  const Clock& clock;
  Verifier verifier;
  std::shared_ptr<db::Database> db;
  idempotency::Store store;
  idempotency::GroupCommit group;
  idempotency::ReplayCache replays;
  idempotency::InProcessClaims own_claims;
  // Ours, or the file lock's (shared by this process's Receivers of the file) once resolved.
  std::atomic<idempotency::InProcessClaims*> claims{&own_claims};
  std::shared_ptr<FileLock> file;
  idempotency::LeaseKeeper keeper;
  std::unique_ptr<idempotency::Maintenance> maintenance;
  std::mutex claims_mutex;
  std::atomic<bool> claims_resolved{false};
  std::atomic<bool> transactions_locked{false};
  bool durable = true;
};

void Receiver::Impl::log(const Event& event, std::string_view outcome, int status,
                         spdlog::level::level_enum level) {
  if (!log_enabled(level)) return;
  log_event(level, {{"event", "webhook"},
                                  {"consumer", config.consumer},
                                  {"event_id", event.id},
                                  {"delivery_id", event.delivery_id},
                                  {"type", event.type},
                                  {"outcome", outcome},
                                  {"status", status}});
}

std::optional<Answer> Receiver::Impl::settled(const Event& event, const BeginResult& begun,
                                              std::string_view fingerprint) {
  std::optional<Answer> answer = idempotency::answer_for(begun, clock.now_ms(), kEventVocabulary);
  if (!answer) return std::nullopt;
  if (begun.outcome == BeginOutcome::replay && !fingerprint.empty()) {
    remember(event, fingerprint, *begun.response, {begun.created_at, begun.expires_at});
  }
  switch (begun.outcome) {
    case BeginOutcome::mismatch: log(event, "event_id_reused", 422); break;
    case BeginOutcome::in_progress: log(event, "event_in_progress", 409); break;
    default: log(event, "duplicate", answer->status); break;
  }
  return answer;
}

void Receiver::Impl::remember(const Event& event, std::string_view fingerprint,
                              const Answer& answer, const RecordTimes& record) {
  replays.remember(config.consumer, event.id, fingerprint, answer, record.created_at,
                   record.expires_at);
}

std::optional<Answer> Receiver::Impl::admit(
    const Headers& headers, std::string_view body, nlohmann::json& payload, Event& event,
    std::optional<idempotency::InProcessClaims::Claim>& claim, std::string& fingerprint,
    bool read_record) {
  event.delivery_id = headers.get(kHeaderDeliveryId).value_or("");
  if (body.size() > config.max_body_bytes) {
    log(event, "payload_too_large", 413);
    return error_answer(
        413, "payload_too_large",
        "the body is larger than " + std::to_string(config.max_body_bytes) + " bytes");
  }
  const std::optional<std::string> signature = headers.joined(kHeaderSignature);
  const SignedHeaders signed_headers{
      headers.get(kHeaderId), headers.get(kHeaderTimestamp),
      signature ? std::optional<std::string_view>(*signature) : std::nullopt};
  const VerifyResult verified = verifier.verify(signed_headers, body, clock.now_seconds());
  switch (verified.status) {
    case VerifyStatus::ok:
      break;
    case VerifyStatus::missing_header:
    case VerifyStatus::malformed_header:
      log(event, "headers_invalid", 400);
      return error_answer(400, "headers_invalid", verified.message);
    case VerifyStatus::no_matching_signature:
      log(event, "signature_invalid", 401);
      return error_answer(401, "signature_invalid", verified.message);
    case VerifyStatus::timestamp_too_old:
    case VerifyStatus::timestamp_too_new:
      log(event, "timestamp_out_of_tolerance", 401);
      return error_answer(401, "timestamp_out_of_tolerance", verified.message);
  }
  event.id = *signed_headers.id;
  event.timestamp = verified.timestamp;
  event.body = body;
  try {
    payload = parse_json(body);
  } catch (const Error& e) {
    log(event, "invalid_json", 400);
    return error_answer(400, "invalid_json", e.what());
  }
  if (!payload.is_object()) {
    log(event, "invalid_json", 400);
    return error_answer(400, "invalid_json", "the body is not a JSON object");
  }
  event.payload = &payload;
  if (const auto type = payload.find("type"); type != payload.end() && type->is_string()) {
    event.type = type->get_ref<const std::string&>();
  } else {
    event.type = headers.get(kHeaderEventType).value_or("");
  }
  fingerprint = sha256_hex(body);
  if (const auto cached = replays.find(config.consumer, event.id, fingerprint, clock.now_ms())) {
    return settled(event, *cached, {});
  }
  claim = claims.load()->try_claim(config.consumer, event.id);
  if (!claim) {  // a delivery of this event is being handled by this process right now
    log(event, "event_in_progress", 409);
    return idempotency::in_use(kEventVocabulary, kEventVocabulary.in_use_message);
  }
  if (!read_record) return std::nullopt;
  const BeginResult seen = store.peek(config.consumer, event.id, fingerprint, clock.now_ms());
  event.attempt = seen.attempts;
  return settled(event, seen, fingerprint);
}

Answer Receiver::Impl::final_answer(Reply reply) {
  Answer answer{reply.status, {}, std::move(reply.body)};
  if (answer.body.empty()) {
    answer.body = reply.status < 300 ? std::string("{\"received\":true}")
                                     : error_body("event_rejected",
                                                               "the handler rejected the event");
  }
  return answer;
}

// A handled event is the `acquired` outcome, logged at debug only (docs/DESIGN.md: every outcome
// but acquired is logged); a rejected one at info.
Answer Receiver::Impl::handled(const Event& event, std::string_view fingerprint, Answer answer,
                               const RecordTimes& record) {
  if (answer.status < 300) {
    log(event, "handled", answer.status, spdlog::level::debug);
  } else {
    log(event, "rejected", answer.status);
  }
  remember(event, fingerprint, answer, record);
  return answer;
}

Answer Receiver::Impl::failed(const Event& event, std::string_view why,
                              const idempotency::Lease* lease, std::string_view fingerprint) {
  log_event(spdlog::level::warn, {{"event", "webhook_handler_failed"},
                                  {"consumer", config.consumer},
                                  {"event_id", event.id},
                                  {"delivery_id", event.delivery_id},
                                  {"attempt", event.attempt},
                                  {"error", why}});
  // The failed attempt is recorded (state failed), so the next delivery runs it again as attempt
  // + 1. A failure to record it changes nothing else: the next delivery runs it again anyway.
  try {
    group.run([&](db::Transaction& tx) {
      if (lease) {
        store.fail(tx, *lease, clock.now_ms());
        return;
      }
      const BeginResult begun = store.begin(tx, config.consumer, event.id, fingerprint,
                                            clock.now_ms());
      if (!begun.lease.token.empty()) store.fail(tx, begun.lease, clock.now_ms());
    });
  } catch (const std::exception& e) {
    log_event(spdlog::level::err, {{"event", "webhook_fail_failed"}, {"error", e.what()}});
  }
  log(event, "failed", 500);
  return error_answer(500, "handler_failed",
                      "the handler failed (" + std::string(why) +
                          "); the next delivery runs it again");
}

namespace {

bool timed_out(const Config& config, std::chrono::steady_clock::time_point started) {
  return config.handler_timeout.count() > 0 &&
         std::chrono::steady_clock::now() - started > config.handler_timeout;
}

Answer store_failed(const std::exception& e) {
  log_event(spdlog::level::err, {{"event", "webhook_store_failed"}, {"error", e.what()}});
  return idempotency::storage_unavailable("the dedup store is unavailable");
}

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

}  // namespace

// Durable claim: an in_progress record with a lease is committed before the handler runs.
Answer Receiver::Impl::run_durable(const Event& event, const std::string& fingerprint,
                                   const Handler& handler) {
  BeginResult begun;
  try {
    group.run([&](db::Transaction& tx) {
      begun = store.begin(tx, config.consumer, event.id, fingerprint, clock.now_ms());
    });
  } catch (const std::exception& e) {
    return store_failed(e);
  }
  if (auto answer = settled(event, begun, fingerprint)) return std::move(*answer);
  Event running = event;
  running.attempt = begun.attempts;
  std::string why;
  std::optional<Reply> reply;
  {
    const idempotency::LeaseKeeper::Hold hold = keeper.hold(begun.lease);
    reply = call_handler(config, [&] { return handler(running); }, why);
  }
  if (!reply) return failed(running, why, &begun.lease, fingerprint);
  Answer answer = final_answer(std::move(*reply));
  bool kept = false;
  try {
    group.run([&](db::Transaction& tx) {
      kept = store.complete(tx, begun.lease, answer, clock.now_ms());
    });
  } catch (const std::exception& e) {
    return store_failed(e);
  }
  if (!kept) {
    log(running, "event_in_progress", 409);
    return idempotency::in_use(kEventVocabulary,
                               "the lease on this event was lost while the handler ran");
  }
  return handled(running, fingerprint, std::move(answer), {begun.created_at, begun.expires_at});
}

// In-process claim: the handler runs under the claim; one commit records the answer.
Answer Receiver::Impl::run_in_process(const Event& event, const std::string& fingerprint,
                                      const Handler& handler) {
  std::string why;
  std::optional<Reply> reply = call_handler(config, [&] { return handler(event); }, why);
  if (!reply) return failed(event, why, nullptr, fingerprint);
  Answer answer = final_answer(std::move(*reply));
  std::optional<Answer> other;
  RecordTimes record;
  try {
    group.run([&](db::Transaction& tx) {
      const BeginResult begun =
          store.begin_deferred(tx, config.consumer, event.id, fingerprint, clock.now_ms());
      // Settled meanwhile by another process (sharing the database by mistake).
      if ((other = idempotency::answer_for(begun, clock.now_ms(), kEventVocabulary))) return;
      store.complete_begun(tx, begun, fingerprint, answer, clock.now_ms());
      record = {begun.created_at, begun.expires_at};
    });
  } catch (const std::exception& e) {
    return store_failed(e);
  }
  if (other) return std::move(*other);
  return handled(event, fingerprint, std::move(answer), record);
}

Receiver::Receiver(Config config)
    : Receiver(config, db::Database::open(config.store, config.database)) {}

Receiver::Receiver(Config config, std::shared_ptr<db::Database> database)
    : impl_(std::make_unique<Impl>(std::move(config), std::move(database))) {}

Receiver::~Receiver() = default;

Answer Receiver::handle(const Headers& headers, std::string_view raw_body, const Handler& handler) {
  Impl& impl = *impl_;
  nlohmann::json payload;
  Event event;
  std::optional<idempotency::InProcessClaims::Claim> claim;
  std::string fingerprint;
  bool durable = true;
  try {
    durable = impl.durable_claims();  // before admit: it picks the claim set admit uses
    if (auto answer = impl.admit(headers, raw_body, payload, event, claim, fingerprint, true)) {
      return std::move(*answer);
    }
  } catch (const std::exception& e) {
    return store_failed(e);  // the store failed, or another process holds the file alone
  }
  return durable ? impl.run_durable(event, fingerprint, handler)
                 : impl.run_in_process(event, fingerprint, handler);
}

Answer Receiver::handle(const Headers& headers, std::string_view raw_body,
                        const TransactionalHandler& handler) {
  Impl& impl = *impl_;
  nlohmann::json payload;
  Event event;
  std::optional<idempotency::InProcessClaims::Claim> claim;
  std::string fingerprint;
  try {
    impl.share_for_transactions();  // before admit: it picks the claim set admit uses
    // No read of the record here: the group's begin below settles duplicates, so a new event
    // costs no read before its write.
    if (auto answer = impl.admit(headers, raw_body, payload, event, claim, fingerprint, false)) {
      return std::move(*answer);
    }
  } catch (const std::exception& e) {
    return store_failed(e);  // the store failed, or another process holds the file alone
  }
  // One savepoint of a grouped transaction: the record (inserted in_progress, completed before
  // the commit, so never seen in_progress outside it) and the handler's writes.
  std::optional<Answer> answer;
  bool ran = false;  // the handler ran and its answer commits (else `answer` is a settled one)
  RecordTimes record;
  try {
    impl.group.run([&](db::Transaction& tx) {
      const BeginResult begun = impl.store.begin_deferred(tx, impl.config.consumer, event.id,
                                                          fingerprint, impl.clock.now_ms());
      if ((answer = impl.settled(event, begun, fingerprint))) return;
      record = {begun.created_at, begun.expires_at};
      event.attempt = begun.attempts;
      std::string why;
      std::optional<Reply> reply = call_handler(impl.config, [&] { return handler(event, tx); }, why);
      if (!reply) throw HandlerFailed{std::move(why)};
      answer = Impl::final_answer(std::move(*reply));
      if (!impl.store.complete_begun(tx, begun, fingerprint, *answer, impl.clock.now_ms())) {
        throw Error(ErrorCode::storage, "the dedup record changed inside its own transaction");
      }
      ran = true;
    });
  } catch (const HandlerFailed& failure) {
    return impl.failed(event, failure.why, nullptr, fingerprint);
  } catch (const Error& e) {
    if (e.code() == ErrorCode::conflict) {  // another process's transaction holds the event
      impl.log(event, "event_in_progress", 409);
      return idempotency::in_use(kEventVocabulary, kEventVocabulary.in_use_message);
    }
    return store_failed(e);
  } catch (const std::exception& e) {
    return store_failed(e);
  }
  return ran ? impl.handled(event, fingerprint, std::move(*answer), record)
             : std::move(*answer);
}

db::Database& Receiver::database() { return *impl_->db; }
std::shared_ptr<db::Database> Receiver::shared_database() const { return impl_->db; }
idempotency::Store& Receiver::store() { return impl_->store; }
const Config& Receiver::config() const { return impl_->config; }
bool Receiver::durable_claims() { return impl_->durable_claims(); }

}  // namespace webhooks::receiver
