#include "webhooks/idempotency/store.h"

#include <nlohmann/json.hpp>

#include "idempotency/statements.h"
#include "webhooks/base64.h"
#include "webhooks/error.h"
#include "webhooks/json_parse.h"
#include "webhooks/random.h"

namespace webhooks::idempotency {
namespace {

using detail::statements;

// Column order of the record SELECTs.
enum Column { kFingerprint, kState, kLeaseOwner, kLeaseExpires, kAttempts, kStatus, kHeaders,
              kBody, kCreated, kUpdated, kExpires };

std::string new_token() {
  std::uint8_t bytes[16];
  secure_random_bytes(bytes);
  return base64_encode(bytes);
}

State parse_state(const std::string& text) {
  if (text == "completed") return State::completed;
  if (text == "failed") return State::failed;
  return State::in_progress;
}

std::string encode_headers(const Response& response) {
  nlohmann::json headers = nlohmann::json::array();
  for (const auto& [name, value] : response.headers) headers.push_back({name, value});
  return headers.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Response decode_response(const db::Rows& rows) {
  Response response;
  response.status = static_cast<int>(rows.integer(0, kStatus));
  response.body = rows.text(0, kBody);
  if (!rows.is_null(0, kHeaders)) {
    for (const auto& pair : parse_json(rows.text(0, kHeaders))) {
      response.headers.emplace_back(pair.at(0).get<std::string>(), pair.at(1).get<std::string>());
    }
  }
  return response;
}

BeginResult acquired(std::string_view scope, std::string_view key, std::string token,
                     UnixMillis now) {
  return {BeginOutcome::acquired,
          Lease{std::string(scope), std::string(key), std::move(token)},
          {},
          0,
          1,
          now};
}

// The outcomes of begin that need no write, from an unexpired record (`row`, in the record
// SELECTs' column order): mismatch, replay, or in_progress under a live lease. std::nullopt for
// a failed record or a lapsed lease, which begin reacquires.
std::optional<BeginResult> without_write(const db::Rows& row, std::string_view fingerprint,
                                         UnixMillis now) {
  BeginResult result;
  result.created_at = row.integer(0, kCreated);
  result.attempts = static_cast<int>(row.integer(0, kAttempts));
  if (row.text(0, kFingerprint) != fingerprint) {
    result.outcome = BeginOutcome::mismatch;
    return result;
  }
  const State state = parse_state(row.text(0, kState));
  if (state == State::completed) {
    result.outcome = BeginOutcome::replay;
    result.response = decode_response(row);
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

std::string_view to_string(State state) noexcept {
  switch (state) {
    case State::in_progress: return "in_progress";
    case State::completed: return "completed";
    case State::failed: return "failed";
  }
  return "unknown";
}

std::string_view to_string(BeginOutcome outcome) noexcept {
  switch (outcome) {
    case BeginOutcome::acquired: return "acquired";
    case BeginOutcome::replay: return "replay";
    case BeginOutcome::in_progress: return "in_progress";
    case BeginOutcome::mismatch: return "mismatch";
    case BeginOutcome::reacquired: return "reacquired";
  }
  return "unknown";
}

bool is_final_status(int status) noexcept {
  if (status >= 200 && status < 300) return true;
  if (status >= 400 && status < 500) {
    return status != 408 && status != 409 && status != 425 && status != 429;
  }
  return false;
}

Store::Store(std::shared_ptr<db::Database> db, Settings settings)
    : db_(std::move(db)), settings_(settings) {}

BeginResult Store::begin(std::string_view scope, std::string_view key,
                         std::string_view fingerprint, UnixMillis now) {
  const auto& sql = statements(db_->engine());
  const std::string token = new_token();
  // The common case, a new key, is one autocommit INSERT: one round trip, one commit.
  if (db_->exec(sql.insert, {scope, key, fingerprint, token, now + settings_.lease.count(), now,
                             now + settings_.ttl.count()})
          .affected() == 1) {
    return acquired(scope, key, token, now);
  }
  BeginResult result;
  db_->transact([&](db::Transaction& tx) { result = begin(tx, scope, key, fingerprint, now); });
  return result;
}

BeginResult Store::begin(db::Transaction& tx, std::string_view scope, std::string_view key,
                         std::string_view fingerprint, UnixMillis now) {
  const auto& sql = statements(tx.engine());
  std::string token = new_token();
  const std::int64_t lease_until = now + settings_.lease.count();
  const std::int64_t expires = now + settings_.ttl.count();
  if (tx.exec(sql.insert, {scope, key, fingerprint, token, lease_until, now, expires}).affected() ==
      1) {
    return acquired(scope, key, std::move(token), now);
  }
  const db::Rows row = tx.exec(sql.select_lock, {scope, key});
  if (row.empty()) {
    throw Error(ErrorCode::conflict, "idempotency record vanished during begin; retry");
  }
  if (row.integer(0, kExpires) <= now) {
    tx.exec(sql.restart, {scope, key, fingerprint, token, lease_until, now, expires});
    return acquired(scope, key, std::move(token), now);
  }
  if (std::optional<BeginResult> settled = without_write(row, fingerprint, now)) {
    return std::move(*settled);
  }
  tx.exec(sql.reacquire, {scope, key, token, lease_until, now});
  BeginResult result;
  result.outcome = BeginOutcome::reacquired;
  result.lease = Lease{std::string(scope), std::string(key), std::move(token)};
  result.attempts = static_cast<int>(row.integer(0, kAttempts)) + 1;
  result.created_at = row.integer(0, kCreated);
  return result;
}

BeginResult Store::peek(std::string_view scope, std::string_view key, std::string_view fingerprint,
                        UnixMillis now) {
  const db::Rows row = db_->read(statements(db_->engine()).select, {scope, key});
  BeginResult result;
  result.attempts = 1;
  result.created_at = now;
  if (row.empty() || row.integer(0, kExpires) <= now) return result;  // acquired
  if (std::optional<BeginResult> settled = without_write(row, fingerprint, now)) {
    return std::move(*settled);
  }
  result.outcome = BeginOutcome::reacquired;
  result.attempts = static_cast<int>(row.integer(0, kAttempts)) + 1;
  result.created_at = row.integer(0, kCreated);
  return result;
}

bool Store::complete(const Lease& lease, const Response& response, UnixMillis now) {
  // One autocommit UPDATE: one round trip, one commit.
  return db_->exec(statements(db_->engine()).complete,
                   {lease.scope, lease.key, lease.token, std::int64_t{response.status},
                    encode_headers(response), response.body, now})
             .affected() == 1;
}

bool Store::complete(db::Transaction& tx, const Lease& lease, const Response& response,
                     UnixMillis now) {
  const std::string headers = encode_headers(response);
  const auto& sql = statements(tx.engine());
  return tx.exec(sql.complete, {lease.scope, lease.key, lease.token,
                                std::int64_t{response.status}, headers, response.body, now})
             .affected() == 1;
}

bool Store::fail(const Lease& lease, UnixMillis now) {
  return db_->exec(statements(db_->engine()).fail, {lease.scope, lease.key, lease.token, now})
             .affected() == 1;
}

bool Store::fail(db::Transaction& tx, const Lease& lease, UnixMillis now) {
  return tx.exec(statements(tx.engine()).fail, {lease.scope, lease.key, lease.token, now})
             .affected() == 1;
}

bool Store::renew(const Lease& lease, UnixMillis now) {
  return db_->exec(statements(db_->engine()).renew,
                   {lease.scope, lease.key, lease.token, now + settings_.lease.count(), now})
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
  r.fingerprint = row.text(0, kFingerprint);
  r.state = parse_state(row.text(0, kState));
  if (!row.is_null(0, kLeaseOwner)) r.lease_owner = row.text(0, kLeaseOwner);
  r.lease_expires_at = row.integer(0, kLeaseExpires);
  r.attempts = static_cast<int>(row.integer(0, kAttempts));
  if (!row.is_null(0, kStatus)) r.response = decode_response(row);
  r.created_at = row.integer(0, kCreated);
  r.updated_at = row.integer(0, kUpdated);
  r.expires_at = row.integer(0, kExpires);
  return r;
}

}  // namespace webhooks::idempotency
