#include "webhooks/idempotency/guard.h"

#include "scoped_key.h"
#include "webhooks/error.h"
#include "webhooks/fingerprint.h"
#include "webhooks/json_body.h"
#include "webhooks/log.h"

namespace webhooks::idempotency {
namespace {

class GuardedAttempt final : public Attempt {
 public:
  GuardedAttempt(Store& store, const Clock& clock, const BeginResult& begun)
      : store_(store), clock_(clock), begun_(begun) {}

  const Lease& lease() const override { return begun_.lease; }
  bool reacquired() const override { return begun_.outcome == BeginOutcome::reacquired; }
  int attempts() const override { return begun_.attempts; }
  db::Database& database() override { return store_.database(); }

  Response commit(const std::function<Response(db::Transaction&)>& fn) override {
    Response response;
    store_.database().transact([&](db::Transaction& tx) {
      response = fn(tx);
      if (begun_.lease.token.empty() || !is_final_status(response.status)) return;  // unguarded
      if (!store_.complete(tx, begun_.lease, response, clock_.now_ms())) {
        throw Error(ErrorCode::conflict,
                    "the idempotency lease was lost before the operation committed");
      }
      settled_ = true;
    });
    return response;
  }

  bool settled() const { return settled_; }

 private:
  Store& store_;
  const Clock& clock_;
  const BeginResult& begun_;
  bool settled_ = false;
};

// An answer that is not final, carried out of a transaction to roll it back.
struct NotFinal {
  Response response;
};

// The answer to an operation that threw `e` (its writes were rolled back).
Response failed_operation(const std::exception& e, std::string_view scope, std::string_view key,
                          std::string_view path) {
  log_event(spdlog::level::err, {{"event", "operation_failed"},
                                 {"scope", scope},
                                 {"key", key},
                                 {"path", path},
                                 {"error", e.what()}});
  const auto* error = dynamic_cast<const Error*>(&e);
  if (error && error->code() == ErrorCode::storage) {
    return storage_unavailable("the database failed; retry with the same key");
  }
  if (error && error->code() == ErrorCode::conflict) return in_use();
  return error_response(500, "internal_error", "the operation failed; retry with the same key");
}

// The route a record is begun on: "METHOD /path".
std::string route_of(std::string_view method, std::string_view path) {
  return detail::joined(method, ' ', path);
}

}  // namespace

void log_outcome(std::string_view scope, std::string_view key, std::string_view path,
                 BeginOutcome outcome, UnixMillis age_ms) {
  log_event(spdlog::level::info, {{"event", "idempotency"},
                                  {"scope", scope},
                                  {"key", key},
                                  {"path", path},
                                  {"outcome", to_string(outcome)},
                                  {"age_ms", age_ms}});
}

namespace {

// The 400 answer to a missing or invalid key, or std::nullopt with `key` set.
std::optional<Response> check_key(std::optional<std::string_view> key_header, std::string& key) {
  KeyCheck check = parse_idempotency_key(key_header);
  if (check.status == KeyCheck::Status::missing) {
    return error_response(400, "idempotency_key_missing", check.message);
  }
  if (check.status == KeyCheck::Status::invalid) {
    return error_response(400, "idempotency_key_invalid", check.message);
  }
  key = std::move(check.key);
  return std::nullopt;
}

}  // namespace

std::optional<Response> key_request(std::optional<std::string_view> key_header,
                                    std::string_view method, std::string_view path,
                                    std::string_view body, KeyedRequest& out) {
  if (std::optional<Response> refused = check_key(key_header, out.key)) return refused;
  try {
    out.fingerprint = request_fingerprint(method, path, body);
  } catch (const Error& e) {
    return error_response(400, "invalid_json", e.what());
  }
  return std::nullopt;
}

std::optional<Response> key_request(std::optional<std::string_view> key_header,
                                    std::string_view method, std::string_view path,
                                    const JsonBody& body, KeyedRequest& out) {
  if (std::optional<Response> refused = check_key(key_header, out.key)) return refused;
  if (body.duplicate_name) {
    return error_response(400, "invalid_json", "invalid JSON: duplicate object member name");
  }
  out.fingerprint = canonical_request_fingerprint(method, path, body.canonical);
  return std::nullopt;
}

KeyCheck parse_idempotency_key(std::optional<std::string_view> header) {
  if (!header) return {KeyCheck::Status::missing, {}, "the Idempotency-Key header is required"};
  std::string_view raw = *header;
  std::string key;
  if (raw.size() >= 2 && raw.front() == '"' && raw.back() == '"') {
    raw = raw.substr(1, raw.size() - 2);  // RFC 8941 sf-string: \" and \\ are the only escapes
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '\\') {
        if (i + 1 == raw.size() || (raw[i + 1] != '"' && raw[i + 1] != '\\')) {
          return {KeyCheck::Status::invalid, {}, "Idempotency-Key has an invalid escape"};
        }
        ++i;
      } else if (raw[i] == '"') {
        return {KeyCheck::Status::invalid, {}, "Idempotency-Key has an unescaped quote"};
      }
      key.push_back(raw[i]);
    }
  } else {
    key.assign(raw);
  }
  if (key.empty()) return {KeyCheck::Status::invalid, {}, "Idempotency-Key is empty"};
  if (key.size() > 255) {
    return {KeyCheck::Status::invalid, {}, "Idempotency-Key is longer than 255 characters"};
  }
  for (char c : key) {
    if (c < 0x20 || c > 0x7e) {
      return {KeyCheck::Status::invalid,
              {},
              "Idempotency-Key must contain only printable ASCII characters"};
    }
  }
  return {KeyCheck::Status::ok, std::move(key), {}};
}

Guard::Guard(Store& store, LeaseKeeper& keeper, const Clock& clock, GuardOptions options)
    : store_(store),
      keeper_(keeper),
      clock_(clock),
      options_(options),
      group_(store.database(), options.group),
      replays_(options.replay_cache_entries) {}

Response Guard::run(std::string_view scope, std::optional<std::string_view> key_header,
                    std::string_view method, std::string_view path, std::string_view body,
                    const Operation& operation) {
  if (!key_header && !options_.key_required) {
    BeginResult unguarded;
    GuardedAttempt attempt(store_, clock_, unguarded);
    return operation(attempt);
  }
  KeyedRequest request;
  if (std::optional<Response> refused = key_request(key_header, method, path, body, request)) {
    return std::move(*refused);
  }
  const std::string& key = request.key;

  if (has_unreleased_.load()) release_unreleased();
  const BeginResult begun =
      store_.begin(scope, key, request.fingerprint, clock_.now_ms(), route_of(method, path));
  const UnixMillis now = clock_.now_ms();
  if (begun.outcome != BeginOutcome::acquired) {
    note(scope, key, path, begun.outcome, now - begun.created_at);
  }
  if (std::optional<Response> answer = answer_for(begun, now)) return std::move(*answer);

  const LeaseKeeper::Hold hold = keeper_.hold(begun.lease);
  GuardedAttempt attempt(store_, clock_, begun);
  Response response;
  try {
    response = operation(attempt);
  } catch (const std::exception& e) {
    Response answer = failed_operation(e, scope, key, path);
    try {
      store_.fail(begun.lease, clock_.now_ms(), answer.status);
    } catch (const std::exception& fail_error) {
      log_event(spdlog::level::err, {{"event", "idempotency_fail_failed"},
                                     {"scope", scope},
                                     {"key", key},
                                     {"error", fail_error.what()}});
      std::lock_guard lock(unreleased_mutex_);
      if (unreleased_.size() >= kMaxUnreleased) unreleased_.erase(unreleased_.begin());
      unreleased_.push_back(begun.lease);
      has_unreleased_ = true;
    }
    return answer;
  }
  if (!attempt.settled()) {
    if (is_final_status(response.status)) {
      if (!store_.complete(begun.lease, response, clock_.now_ms())) return in_use();
    } else {
      store_.fail(begun.lease, clock_.now_ms(), response.status);
    }
  }
  return response;
}

Response Guard::run_in_transaction(std::string_view scope,
                                   std::optional<std::string_view> key_header,
                                   std::string_view method, std::string_view path,
                                   std::string_view body, const TransactionalOperation& operation) {
  if (!key_header && !options_.key_required) {
    return run_in_transaction(scope, nullptr, method, path, operation);
  }
  KeyedRequest request;
  if (std::optional<Response> refused = key_request(key_header, method, path, body, request)) {
    return std::move(*refused);
  }
  return run_in_transaction(scope, &request, method, path, operation);
}

Response Guard::run_in_transaction(std::string_view scope, const KeyedRequest* keyed,
                                   std::string_view method, std::string_view path,
                                   const TransactionalOperation& operation) {
  if (keyed == nullptr && options_.key_required) {
    std::string none;
    return std::move(*check_key(std::nullopt, none));  // 400 idempotency_key_missing
  }
  static const KeyedRequest kUnkeyed;
  const bool guarded = keyed != nullptr;
  const KeyedRequest& request = guarded ? *keyed : kUnkeyed;
  std::optional<InProcessClaims::Claim> claim;
  if (guarded) {
    const UnixMillis now = clock_.now_ms();
    if (const auto cached = replays_.find(scope, request.key, request.fingerprint, now)) {
      note(scope, request.key, path, cached->outcome, now - cached->created_at);
      return *answer_for(*cached, now);
    }
    claim = claims_.try_claim(scope, request.key);
    if (!claim) {
      note(scope, request.key, path, BeginOutcome::in_progress, 0);
      return in_use(kRequestVocabulary, kRequestVocabulary.in_use_message);
    }
  }
  // No read before the write: the grouped begin below settles replays and mismatches too.
  Response response;
  BeginResult begun;
  UnixMillis age_ms = 0;
  try {
    group_.run([&](db::Transaction& tx) {
      if (guarded) {
        const UnixMillis now = clock_.now_ms();
        begun = store_.begin_deferred(tx, scope, request.key, request.fingerprint, now,
                                      route_of(method, path));
        age_ms = now - begun.created_at;
        if (std::optional<Response> answer = answer_for(begun, now)) {
          response = std::move(*answer);
          return;
        }
      }
      response = operation(tx, begun);
      if (!is_final_status(response.status)) throw NotFinal{std::move(response)};
      if (guarded &&
          !store_.complete_begun(tx, begun, request.fingerprint, response, clock_.now_ms())) {
        throw Error(ErrorCode::conflict,
                    "the idempotency record was taken over in the transaction");
      }
    });
  } catch (NotFinal& not_final) {
    return std::move(not_final.response);
  } catch (const std::exception& e) {
    return failed_operation(e, scope, request.key, path);
  }
  if (!guarded) return response;
  // Committed: a completed record (ours, or one read as completed) is kept for later replays.
  const bool ran =
      begun.outcome == BeginOutcome::acquired || begun.outcome == BeginOutcome::reacquired;
  if (ran || begun.outcome == BeginOutcome::replay) {
    replays_.remember(scope, request.key, request.fingerprint, ran ? response : *begun.response,
                      begun.created_at, begun.expires_at);
  }
  if (begun.outcome != BeginOutcome::acquired) {
    note(scope, request.key, path, begun.outcome, age_ms);
  }
  return response;
}

void Guard::note(std::string_view scope, std::string_view key, std::string_view path,
                 BeginOutcome outcome, UnixMillis age_ms) {
  log_outcome(scope, key, path, outcome, age_ms);
  store_.counts().add(scope, key, outcome);
}

void Guard::release_unreleased() {
  std::vector<Lease> pending;
  {
    std::lock_guard lock(unreleased_mutex_);
    pending.swap(unreleased_);
    has_unreleased_ = false;
  }
  std::vector<Lease> still;
  for (std::size_t i = 0; i < pending.size(); ++i) {
    try {
      store_.fail(pending[i], clock_.now_ms());
      log_event(spdlog::level::info, {{"event", "idempotency_failed_late"},
                                      {"scope", pending[i].scope},
                                      {"key", pending[i].key}});
    } catch (const std::exception&) {
      still.assign(pending.begin() + static_cast<std::ptrdiff_t>(i), pending.end());
      break;  // the database still refuses writes: keep the rest for the next request
    }
  }
  if (still.empty()) return;
  std::lock_guard lock(unreleased_mutex_);
  still.insert(still.end(), unreleased_.begin(), unreleased_.end());
  if (still.size() > kMaxUnreleased) {
    still.erase(still.begin(), still.end() - static_cast<std::ptrdiff_t>(kMaxUnreleased));
  }
  unreleased_.swap(still);
  has_unreleased_ = true;
}

}  // namespace webhooks::idempotency
