#include "webhooks/idempotency/store.h"

#include <array>
#include <nlohmann/json.hpp>

#include "scoped_key.h"
#include "statements.h"
#include "webhooks/base64.h"
#include "webhooks/enum_names.h"
#include "webhooks/error.h"
#include "webhooks/json_parse.h"
#include "webhooks/random.h"

namespace webhooks::idempotency {
namespace {

using detail::parse_state;
using detail::statements;
using detail::to_hex;

// Column order of the record SELECTs.
enum Column {
  kFingerprint,
  kState,
  kLeaseOwner,
  kLeaseExpires,
  kAttempts,
  kStatus,
  kHeaders,
  kBody,
  kCreated,
  kExpires,
  kRoute,
  kRenderedFrom
};

constexpr std::size_t kFingerprintBytes = 32;  // SHA-256

// A request fingerprint as stored: its 32 bytes.
class StoredFingerprint {
 public:
  // From request_fingerprint's 64 hex digits (either case). Throws Error(invalid_argument) for
  // anything else.
  explicit StoredFingerprint(std::string_view hex) {
    if (hex.size() != 2 * kFingerprintBytes) {
      throw Error(ErrorCode::invalid_argument,
                  "a request fingerprint is 64 hex digits (SHA-256), not " +
                      std::to_string(hex.size()) + " characters");
    }
    for (std::size_t i = 0; i < kFingerprintBytes; ++i) {
      const int high = digit(hex[2 * i]), low = digit(hex[2 * i + 1]);
      if (high < 0 || low < 0) {
        throw Error(ErrorCode::invalid_argument,
                    "a request fingerprint is 64 hex digits (SHA-256); it has a non-hex character "
                    "at offset " +
                        std::to_string(high < 0 ? 2 * i : 2 * i + 1));
      }
      bytes_[i] = static_cast<char>(high << 4 | low);
    }
  }
  std::string_view view() const { return {bytes_.data(), bytes_.size()}; }
  db::Bytes param() const { return db::Bytes{view()}; }

 private:
  static int digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
  std::array<char, kFingerprintBytes> bytes_{};
};

std::string new_token() {
  std::uint8_t bytes[16];
  secure_random_bytes(bytes);
  return base64_encode(bytes);
}

// The stored headers: a JSON array of [name, value] pairs, or "" (stored as NULL) for none.
std::string encode_headers(const Response& response) {
  if (response.headers.empty()) return {};
  nlohmann::json headers = nlohmann::json::array();
  for (const auto& [name, value] : response.headers) headers.push_back({name, value});
  return headers.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// A completed answer's columns: response_headers, response_body and response_ref. By reference
// (headers and body NULL) when the answer has rendered_from and the store a renderer to rebuild it.
class StoredAnswer {
 public:
  StoredAnswer(const Response& response, const ReplayRenderer* renderer)
      : by_reference_(renderer != nullptr && !response.rendered_from.empty()), response_(response) {
    if (response.rendered_from.size() > kMaxRenderedFrom) {
      throw Error(ErrorCode::invalid_argument,
                  "Response::rendered_from is longer than kMaxRenderedFrom bytes");
    }
    if (!by_reference_) headers_ = encode_headers(response);
  }
  db::Param headers() const {
    if (headers_.empty()) return nullptr;
    return std::string_view(headers_);
  }
  db::Param body() const {
    if (by_reference_) return nullptr;
    return std::string_view(response_.body);
  }
  db::Param rendered_from() const {
    if (!by_reference_) return nullptr;
    return db::Bytes{response_.rendered_from};
  }

 private:
  bool by_reference_;
  const Response& response_;
  std::string headers_;
};

// A failed record's status column: NULL for none (0).
db::Param status_param(int status) {
  if (status <= 0) return nullptr;
  return std::int64_t{status};
}

// The route column: NULL when the caller gave none.
db::Param route_param(std::string_view route) {
  if (route.empty()) return nullptr;
  return route;
}

// The answer of a completed record (`rows`, in the record SELECTs' column order): as stored, or
// rebuilt by `renderer` through `db` when it was stored by reference. Throws
// Error(invalid_argument) when a reference cannot be rebuilt (no renderer, or the rows it names
// are gone), Error(storage) when the database fails.
Response decode_response(db::Statements& db, const ReplayRenderer* renderer, const db::Rows& rows) {
  const int status = static_cast<int>(rows.integer(0, kStatus));
  if (!rows.is_null(0, kRenderedFrom)) {
    std::optional<Response> rendered;
    if (renderer != nullptr) {
      rendered = renderer->render(db, rows.text(0, kRoute), status, rows.text(0, kRenderedFrom));
    }
    if (!rendered) {
      throw Error(ErrorCode::invalid_argument,
                  renderer == nullptr
                      ? "the idempotency record's answer is stored by reference and this store "
                        "has no ReplayRenderer"
                      : "the idempotency record's answer cannot be rebuilt: the rows it names "
                        "are gone");
    }
    rendered->status = status;
    rendered->rendered_from = rows.text(0, kRenderedFrom);
    return std::move(*rendered);
  }
  Response response;
  response.status = status;
  response.body = rows.text(0, kBody);
  if (!rows.is_null(0, kHeaders)) {
    for (const auto& pair : parse_json(rows.text(0, kHeaders))) {
      response.headers.emplace_back(pair.at(0).get<std::string>(), pair.at(1).get<std::string>());
    }
  }
  return response;
}

BeginResult acquired(std::string_view scope, std::string_view key, std::string token,
                     UnixMillis now, UnixMillis expires_at) {
  BeginResult result;
  result.lease = Lease{std::string(scope), std::string(key), std::move(token)};
  result.attempts = 1;
  result.created_at = now;
  result.expires_at = expires_at;
  return result;
}

// The outcomes of begin that need no write, from an unexpired record (`row`, in the record
// SELECTs' column order, read through `db`): mismatch, replay (its answer rebuilt by `renderer`
// when stored by reference), or in_progress under a live lease. std::nullopt for a failed record
// or a lapsed lease, which begin reacquires. Throws as decode_response.
std::optional<BeginResult> without_write(db::Statements& db, const ReplayRenderer* renderer,
                                         const db::Rows& row, const StoredFingerprint& fingerprint,
                                         UnixMillis now) {
  BeginResult result;
  result.created_at = row.integer(0, kCreated);
  result.expires_at = row.integer(0, kExpires);
  result.attempts = static_cast<int>(row.integer(0, kAttempts));
  if (row.text(0, kFingerprint) != fingerprint.view()) {
    result.outcome = BeginOutcome::mismatch;
    return result;
  }
  const State state = parse_state(row.integer(0, kState));
  if (state == State::completed) {
    result.outcome = BeginOutcome::replay;
    result.response = decode_response(db, renderer, row);
    return result;
  }
  if (state == State::in_progress && row.integer(0, kLeaseExpires) > now) {
    result.outcome = BeginOutcome::in_progress;
    result.lease_expires_at = row.integer(0, kLeaseExpires);
    return result;
  }
  return std::nullopt;
}

}  // namespace

std::string component_scope(std::string_view component, std::string_view id) {
  return detail::joined(component, ':', id);
}

constexpr EnumNames<State, 3> kStateNames{{"in_progress", "completed", "failed"}, "unknown"};
std::string_view to_string(State state) noexcept { return kStateNames.name(state); }

constexpr EnumNames<BeginOutcome, 5> kBeginOutcomeNames{
    {"acquired", "replay", "in_progress", "mismatch", "reacquired"}, "unknown"};
std::string_view to_string(BeginOutcome outcome) noexcept {
  return kBeginOutcomeNames.name(outcome);
}

bool is_final_status(int status) noexcept {
  if (status >= 200 && status < 300) return true;
  if (status >= 400 && status < 500) {
    return status != 408 && status != 409 && status != 425 && status != 429;
  }
  return false;
}

Store::Store(std::shared_ptr<db::Database> db, Settings settings)
    : db_(std::move(db)), settings_(settings), counts_(std::make_shared<OutcomeCounts>()) {}

BeginResult Store::begin(std::string_view scope, std::string_view key, std::string_view fingerprint,
                         UnixMillis now, std::string_view route) {
  const auto& sql = statements(db_->engine());
  const StoredFingerprint stored(fingerprint);
  const std::string token = new_token();
  // The common case, a new key, is one autocommit INSERT: one round trip, one commit.
  if (db_->exec(sql.insert, {scope, key, stored.param(), token, now + settings_.lease.count(), now,
                             now + settings_.ttl.count(), route_param(route)})
          .affected() == 1) {
    return acquired(scope, key, token, now, now + settings_.ttl.count());
  }
  BeginResult result;
  db_->transact(
      [&](db::Transaction& tx) { result = begin(tx, scope, key, fingerprint, now, route); });
  return result;
}

BeginResult Store::begin(db::Transaction& tx, std::string_view scope, std::string_view key,
                         std::string_view fingerprint, UnixMillis now, std::string_view route) {
  const auto& sql = statements(tx.engine());
  const StoredFingerprint stored(fingerprint);
  std::string token = new_token();
  const std::int64_t lease_until = now + settings_.lease.count();
  const std::int64_t expires = now + settings_.ttl.count();
  if (tx.exec(sql.insert,
              {scope, key, stored.param(), token, lease_until, now, expires, route_param(route)})
          .affected() == 1) {
    return acquired(scope, key, std::move(token), now, expires);
  }
  const db::Rows row = tx.exec(sql.select_lock, {scope, key});
  if (row.empty()) {
    throw Error(ErrorCode::conflict, "idempotency record vanished during begin; retry");
  }
  if (row.integer(0, kExpires) <= now) {
    tx.exec(sql.restart,
            {scope, key, stored.param(), token, lease_until, now, expires, route_param(route)});
    return acquired(scope, key, std::move(token), now, expires);
  }
  if (std::optional<BeginResult> settled =
          without_write(tx, settings_.renderer.get(), row, stored, now)) {
    return std::move(*settled);
  }
  tx.exec(sql.reacquire, {scope, key, token, lease_until, now});
  BeginResult result;
  result.outcome = BeginOutcome::reacquired;
  result.lease = Lease{std::string(scope), std::string(key), std::move(token)};
  result.attempts = static_cast<int>(row.integer(0, kAttempts)) + 1;
  result.created_at = row.integer(0, kCreated);
  result.expires_at = row.integer(0, kExpires);
  return result;
}

BeginResult Store::begin_deferred(db::Transaction& tx, std::string_view scope, std::string_view key,
                                  std::string_view fingerprint, UnixMillis now,
                                  std::string_view route) {
  if (tx.engine() != db::Engine::sqlite) return begin(tx, scope, key, fingerprint, now, route);
  const StoredFingerprint stored(fingerprint);
  const db::Rows row = tx.exec(statements(tx.engine()).select, {scope, key});
  if (row.empty() || row.integer(0, kExpires) <= now) {
    BeginResult result = acquired(scope, key, std::string(), now, now + settings_.ttl.count());
    result.deferred = true;
    result.route = route;
    return result;
  }
  if (std::optional<BeginResult> settled =
          without_write(tx, settings_.renderer.get(), row, stored, now)) {
    return std::move(*settled);
  }
  return begin(tx, scope, key, fingerprint, now, route);  // failed, or a lapsed lease: reacquired
}

bool Store::complete_begun(db::Transaction& tx, const BeginResult& begun,
                           std::string_view fingerprint, const Response& response, UnixMillis now) {
  if (!begun.deferred) return complete(tx, begun.lease, response, now);
  const StoredFingerprint stored(fingerprint);
  const StoredAnswer answer(response, settings_.renderer.get());
  tx.exec(statements(tx.engine()).insert_completed,
          {begun.lease.scope, begun.lease.key, stored.param(), std::int64_t{response.status},
           answer.headers(), answer.body(), std::int64_t{begun.created_at},
           std::int64_t{begun.expires_at}, route_param(begun.route), now, answer.rendered_from()});
  return true;
}

BeginResult Store::peek(std::string_view scope, std::string_view key, std::string_view fingerprint,
                        UnixMillis now) {
  const StoredFingerprint stored(fingerprint);
  const db::Rows row = db_->read(statements(db_->engine()).select, {scope, key});
  BeginResult result;
  result.attempts = 1;
  result.created_at = now;
  result.expires_at = now + settings_.ttl.count();
  if (row.empty() || row.integer(0, kExpires) <= now) return result;  // acquired
  if (std::optional<BeginResult> settled =
          without_write(*db_, settings_.renderer.get(), row, stored, now)) {
    return std::move(*settled);
  }
  result.outcome = BeginOutcome::reacquired;
  result.attempts = static_cast<int>(row.integer(0, kAttempts)) + 1;
  result.created_at = row.integer(0, kCreated);
  result.expires_at = row.integer(0, kExpires);
  return result;
}

bool Store::complete(const Lease& lease, const Response& response, UnixMillis now) {
  const StoredAnswer answer(response, settings_.renderer.get());
  // One autocommit UPDATE: one round trip, one commit.
  return db_->exec(statements(db_->engine()).complete,
                   {lease.scope, lease.key, lease.token, std::int64_t{response.status},
                    answer.headers(), answer.body(), now, answer.rendered_from()})
             .affected() == 1;
}

bool Store::complete(db::Transaction& tx, const Lease& lease, const Response& response,
                     UnixMillis now) {
  const StoredAnswer answer(response, settings_.renderer.get());
  const auto& sql = statements(tx.engine());
  return tx.exec(sql.complete, {lease.scope, lease.key, lease.token, std::int64_t{response.status},
                                answer.headers(), answer.body(), now, answer.rendered_from()})
             .affected() == 1;
}

bool Store::fail(const Lease& lease, UnixMillis now, int status) {
  return db_->exec(statements(db_->engine()).fail,
                   {lease.scope, lease.key, lease.token, now, status_param(status)})
             .affected() == 1;
}

bool Store::fail(db::Transaction& tx, const Lease& lease, UnixMillis now, int status) {
  return tx.exec(statements(tx.engine()).fail,
                 {lease.scope, lease.key, lease.token, now, status_param(status)})
             .affected() == 1;
}

bool Store::renew(const Lease& lease, UnixMillis now) {
  return db_->exec(statements(db_->engine()).renew,
                   {lease.scope, lease.key, lease.token, now + settings_.lease.count()})
             .affected() == 1;
}

int Store::sweep(UnixMillis now) {
  return static_cast<int>(db_->exec(statements(db_->engine()).sweep, {now}).affected());
}

int Store::purge(UnixMillis now, int limit) {
  return static_cast<int>(
      db_->exec(statements(db_->engine()).purge, {now, std::int64_t{limit}}).affected());
}

std::optional<Record> Store::find(std::string_view scope, std::string_view key) {
  const db::Rows row = db_->exec(statements(db_->engine()).select, {scope, key});
  if (row.empty()) return std::nullopt;
  Record r;
  r.scope = scope;
  r.key = key;
  r.fingerprint = to_hex(row.text(0, kFingerprint));
  r.state = parse_state(row.integer(0, kState));
  if (!row.is_null(0, kLeaseOwner)) r.lease_owner = row.text(0, kLeaseOwner);
  r.lease_expires_at = row.integer(0, kLeaseExpires);
  r.attempts = static_cast<int>(row.integer(0, kAttempts));
  if (r.state == State::completed) {
    try {
      r.response = decode_response(*db_, settings_.renderer.get(), row);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::invalid_argument) throw;  // a reference that cannot be rebuilt
    }
  }
  r.rendered_from = row.text(0, kRenderedFrom);
  r.created_at = row.integer(0, kCreated);
  r.expires_at = row.integer(0, kExpires);
  return r;
}

}  // namespace webhooks::idempotency
