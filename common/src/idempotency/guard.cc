#include "webhooks/idempotency/guard.h"

#include <httplib.h>

#include "webhooks/error.h"
#include "webhooks/fingerprint.h"
#include "webhooks/log.h"

namespace webhooks::idempotency {
namespace {

Response error_response(int status, std::string_view code, std::string_view message) {
  return Response{status, {}, error_body(code, message)};
}

// 503 storage_unavailable with Retry-After: 1: the database failed, so retrying soon is right.
Response storage_unavailable(std::string_view message) {
  return Response{503, {{"Retry-After", "1"}}, error_body("storage_unavailable", message)};
}

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

void log_outcome(std::string_view scope, std::string_view key, std::string_view path,
                 BeginOutcome outcome, UnixMillis age_ms) {
  log_event(spdlog::level::info, {{"event", "idempotency"},
                                  {"scope", scope},
                                  {"key", key},
                                  {"path", path},
                                  {"outcome", to_string(outcome)},
                                  {"age_ms", age_ms}});
}

}  // namespace

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
      return {KeyCheck::Status::invalid, {},
              "Idempotency-Key must contain only printable ASCII characters"};
    }
  }
  return {KeyCheck::Status::ok, std::move(key), {}};
}

std::string error_body(std::string_view code, std::string_view message) {
  // A message may quote a client's bytes; invalid UTF-8 becomes U+FFFD instead of a type_error 316
  // that would turn a client error into a 503 storage_unavailable.
  return nlohmann::json{{"error", {{"code", code}, {"message", message}}}}.dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Guard::Guard(Store& store, LeaseKeeper& keeper, const Clock& clock, GuardOptions options)
    : store_(store), keeper_(keeper), clock_(clock), options_(options) {}

Response Guard::run(std::string_view scope, std::optional<std::string_view> key_header,
                    std::string_view method, std::string_view path, std::string_view body,
                    const Operation& operation) {
  const KeyCheck check = parse_idempotency_key(key_header);
  if (check.status == KeyCheck::Status::missing) {
    if (!options_.key_required) {
      BeginResult unguarded;
      GuardedAttempt attempt(store_, clock_, unguarded);
      return operation(attempt);
    }
    return error_response(400, "idempotency_key_missing", check.message);
  }
  if (check.status == KeyCheck::Status::invalid) {
    return error_response(400, "idempotency_key_invalid", check.message);
  }
  std::string fingerprint;
  try {
    fingerprint = request_fingerprint(method, path, body);
  } catch (const Error& e) {
    return error_response(400, "invalid_json", e.what());
  }

  if (has_unreleased_.load()) release_unreleased();
  const BeginResult begun = store_.begin(scope, check.key, fingerprint, clock_.now_ms());
  const UnixMillis now = clock_.now_ms();
  if (begun.outcome != BeginOutcome::acquired) {
    log_outcome(scope, check.key, path, begun.outcome, now - begun.created_at);
  }
  switch (begun.outcome) {
    case BeginOutcome::replay: {
      Response replayed = *begun.response;
      replayed.headers.emplace_back("Idempotent-Replayed", "true");
      return replayed;
    }
    case BeginOutcome::in_progress: {
      const UnixMillis left_ms = begun.lease_expires_at - now;
      const std::int64_t seconds = std::max<std::int64_t>(1, (left_ms + 999) / 1000);
      Response busy = error_response(409, "idempotency_key_in_use",
                                     "a request with this Idempotency-Key is still in progress");
      busy.headers.emplace_back("Retry-After", std::to_string(seconds));
      return busy;
    }
    case BeginOutcome::mismatch:
      return error_response(422, "idempotency_key_reused",
                            "this Idempotency-Key was used with a different request");
    case BeginOutcome::acquired:
    case BeginOutcome::reacquired:
      break;
  }

  const LeaseKeeper::Hold hold = keeper_.hold(begun.lease);
  GuardedAttempt attempt(store_, clock_, begun);
  Response response;
  try {
    response = operation(attempt);
  } catch (const std::exception& e) {
    log_event(spdlog::level::err, {{"event", "operation_failed"},
                                   {"scope", scope},
                                   {"key", check.key},
                                   {"path", path},
                                   {"error", e.what()}});
    try {
      store_.fail(begun.lease, clock_.now_ms());
    } catch (const std::exception& fail_error) {
      log_event(spdlog::level::err, {{"event", "idempotency_fail_failed"},
                                     {"scope", scope},
                                     {"key", check.key},
                                     {"error", fail_error.what()}});
      std::lock_guard lock(unreleased_mutex_);
      if (unreleased_.size() >= kMaxUnreleased) unreleased_.erase(unreleased_.begin());
      unreleased_.push_back(begun.lease);
      has_unreleased_ = true;
    }
    const auto* error = dynamic_cast<const Error*>(&e);
    if (error && error->code() == ErrorCode::storage) {
      return storage_unavailable("the database failed; retry with the same key");
    }
    return error_response(500, "internal_error", "the operation failed; retry with the same key");
  }
  if (!attempt.settled()) {
    if (is_final_status(response.status)) {
      if (!store_.complete(begun.lease, response, clock_.now_ms())) {
        return error_response(409, "idempotency_key_in_use",
                              "the idempotency lease was lost while the operation ran");
      }
    } else {
      store_.fail(begun.lease, clock_.now_ms());
    }
  }
  return response;
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

void Guard::handle(const httplib::Request& req, httplib::Response& res, std::string_view scope,
                   const Operation& operation) {
  std::optional<std::string_view> key;
  if (req.has_header("Idempotency-Key")) {
    const auto range = req.headers.equal_range("Idempotency-Key");
    key = range.first->second;
  }
  Response answer;
  try {
    answer = run(scope, key, req.method, req.path, req.body, operation);
  } catch (const std::exception& e) {
    log_event(spdlog::level::err, {{"event", "idempotency_store_failed"}, {"error", e.what()}});
    answer = storage_unavailable("the idempotency store is unavailable");
  }
  res.status = answer.status;
  for (const auto& [name, value] : answer.headers) res.set_header(name, value);
  res.set_content(answer.body, "application/json");
}

}  // namespace webhooks::idempotency
