#include "dedup_writer.h"

#include <nlohmann/json.hpp>
#include <vector>

#include "webhooks/base64.h"
#include "webhooks/error.h"
#include "webhooks/random.h"

namespace webhooks::receiver::detail {
namespace {

using idempotency::BeginOutcome;
using idempotency::BeginResult;
using idempotency::Lease;
using idempotency::Response;

// The idempotency core's statements (common/src/idempotency/statements.cc), which are private to
// common: the same table, columns and conditions.
constexpr std::string_view kInsert =
    "INSERT INTO idempotency_records (scope, idempotency_key, fingerprint, state, lease_owner, "
    "lease_expires_at, attempts, created_at, updated_at, expires_at) "
    "VALUES ($1, $2, $3, 'in_progress', $4, $5, 1, $6, $6, $7) "
    "ON CONFLICT (scope, idempotency_key) DO NOTHING";
constexpr std::string_view kSelectSqlite =
    "SELECT fingerprint, state, lease_expires_at, attempts, response_status, response_headers, "
    "response_body, created_at, expires_at FROM idempotency_records "
    "WHERE scope = $1 AND idempotency_key = $2";
constexpr std::string_view kSelectPostgres =
    "SELECT fingerprint, state, lease_expires_at, attempts, response_status, response_headers, "
    "response_body, created_at, expires_at FROM idempotency_records "
    "WHERE scope = $1 AND idempotency_key = $2 FOR UPDATE";
enum Column { kFingerprint, kState, kLeaseExpires, kAttempts, kStatus, kHeaders, kBody, kCreated,
              kExpires };
constexpr std::string_view kRestart =
    "UPDATE idempotency_records SET fingerprint = $3, state = 'in_progress', lease_owner = $4, "
    "lease_expires_at = $5, attempts = 1, response_status = NULL, response_headers = NULL, "
    "response_body = NULL, created_at = $6, updated_at = $6, expires_at = $7 "
    "WHERE scope = $1 AND idempotency_key = $2";
constexpr std::string_view kReacquire =
    "UPDATE idempotency_records SET state = 'in_progress', lease_owner = $3, lease_expires_at = $4, "
    "attempts = attempts + 1, updated_at = $5 WHERE scope = $1 AND idempotency_key = $2";
constexpr std::string_view kComplete =
    "UPDATE idempotency_records SET state = 'completed', lease_owner = NULL, "
    "lease_expires_at = NULL, response_status = $4, response_headers = $5, response_body = $6, "
    "updated_at = $7 WHERE scope = $1 AND idempotency_key = $2 AND lease_owner = $3 "
    "AND state = 'in_progress'";
constexpr std::string_view kFail =
    "UPDATE idempotency_records SET state = 'failed', lease_owner = NULL, lease_expires_at = NULL, "
    "updated_at = $4 WHERE scope = $1 AND idempotency_key = $2 AND lease_owner = $3 "
    "AND state = 'in_progress'";

constexpr std::size_t kMaxBatch = 512;

std::string new_token() {
  std::uint8_t bytes[16];
  secure_random_bytes(bytes);
  return base64_encode(bytes);
}

Response decode_response(const db::Rows& row) {
  Response response;
  response.status = static_cast<int>(row.integer(0, kStatus));
  response.body = row.text(0, kBody);
  if (!row.is_null(0, kHeaders)) {
    for (const auto& pair : nlohmann::json::parse(row.text(0, kHeaders))) {
      response.headers.emplace_back(pair.at(0).get<std::string>(), pair.at(1).get<std::string>());
    }
  }
  return response;
}

BeginResult begin_in(db::Transaction& tx, std::string_view scope, std::string_view key,
                     std::string_view fingerprint, UnixMillis now,
                     const idempotency::Settings& settings) {
  const std::string token = new_token();
  const std::int64_t lease_until = now + settings.lease.count();
  const std::int64_t expires = now + settings.ttl.count();
  const Lease lease{std::string(scope), std::string(key), token};
  if (tx.exec(kInsert, {scope, key, fingerprint, token, lease_until, now, expires}).affected() ==
      1) {
    return {BeginOutcome::acquired, lease, {}, 0, 1, now};
  }
  const db::Rows row =
      tx.exec(tx.engine() == db::Engine::sqlite ? kSelectSqlite : kSelectPostgres, {scope, key});
  if (row.empty()) throw Error(ErrorCode::conflict, "dedup record vanished during begin; retry");
  if (row.integer(0, kExpires) <= now) {
    tx.exec(kRestart, {scope, key, fingerprint, token, lease_until, now, expires});
    return {BeginOutcome::acquired, lease, {}, 0, 1, now};
  }
  BeginResult result;
  result.created_at = row.integer(0, kCreated);
  result.attempts = static_cast<int>(row.integer(0, kAttempts));
  if (row.text(0, kFingerprint) != fingerprint) {
    result.outcome = BeginOutcome::mismatch;
  } else if (row.text(0, kState) == "completed") {
    result.outcome = BeginOutcome::replay;
    result.response = decode_response(row);
  } else if (row.text(0, kState) == "in_progress" && row.integer(0, kLeaseExpires) > now) {
    result.outcome = BeginOutcome::in_progress;
    result.lease_expires_at = row.integer(0, kLeaseExpires);
  } else {
    tx.exec(kReacquire, {scope, key, token, lease_until, now});
    result.outcome = BeginOutcome::reacquired;
    result.lease = lease;
    result.attempts += 1;
  }
  return result;
}

}  // namespace

DedupWriter::DedupWriter(db::Database& db, idempotency::Settings settings, bool grouped)
    : db_(db), settings_(settings), grouped_(grouped) {
  if (grouped_) thread_ = std::thread([this] { run(); });
}

DedupWriter::~DedupWriter() {
  if (!grouped_) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

BeginResult DedupWriter::begin(std::string_view scope, std::string_view key,
                               std::string_view fingerprint, UnixMillis now) {
  if (grouped_) {
    // Read first: a duplicate, a reused id or a live lease is answered without a write (those
    // states only change under a lease holder or after expiry); anything else goes to the writer.
    const db::Rows row = db_.exec(kSelectSqlite, {scope, key});
    if (!row.empty() && row.integer(0, kExpires) > now) {
      BeginResult seen;
      seen.created_at = row.integer(0, kCreated);
      seen.attempts = static_cast<int>(row.integer(0, kAttempts));
      if (row.text(0, kFingerprint) != fingerprint) {
        seen.outcome = BeginOutcome::mismatch;
        return seen;
      }
      if (row.text(0, kState) == "completed") {
        seen.outcome = BeginOutcome::replay;
        seen.response = decode_response(row);
        return seen;
      }
      if (row.text(0, kState) == "in_progress" && row.integer(0, kLeaseExpires) > now) {
        seen.outcome = BeginOutcome::in_progress;
        seen.lease_expires_at = row.integer(0, kLeaseExpires);
        return seen;
      }
    }
  }
  Op op(Op::Kind::begin);
  op.scope = scope;
  op.key = key;
  op.fingerprint = fingerprint;
  op.now = now;
  submit(op);
  return std::move(op.begun);
}

bool DedupWriter::complete(const Lease& lease, const Response& response, UnixMillis now) {
  Op op(Op::Kind::complete);
  op.lease = &lease;
  op.response = &response;
  op.now = now;
  submit(op);
  return op.ok;
}

bool DedupWriter::fail(const Lease& lease, UnixMillis now) {
  Op op(Op::Kind::fail);
  op.lease = &lease;
  op.now = now;
  submit(op);
  return op.ok;
}

bool DedupWriter::complete(db::Transaction& tx, const Lease& lease, const Response& response,
                           UnixMillis now) {
  nlohmann::json headers = nlohmann::json::array();
  for (const auto& [name, value] : response.headers) headers.push_back({name, value});
  return tx.exec(kComplete, {lease.scope, lease.key, lease.token, std::int64_t{response.status},
                             headers.dump(), response.body, now})
             .affected() == 1;
}

void DedupWriter::submit(Op& op) {
  if (!grouped_) {
    db_.transact([&](db::Transaction& tx) { apply(tx, op); });
    return;
  }
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(&op);
  }
  wake_.notify_one();
  op.done.acquire();
  if (op.error) std::rethrow_exception(op.error);
}

void DedupWriter::apply(db::Transaction& tx, Op& op) {
  switch (op.kind) {
    case Op::Kind::begin:
      op.begun = begin_in(tx, op.scope, op.key, op.fingerprint, op.now, settings_);
      break;
    case Op::Kind::complete:
      op.ok = complete(tx, *op.lease, *op.response, op.now);
      break;
    case Op::Kind::fail:
      op.ok = tx.exec(kFail, {op.lease->scope, op.lease->key, op.lease->token, op.now})
                  .affected() == 1;
      break;
  }
}

void DedupWriter::run() {
  std::vector<Op*> batch;
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) break;  // stopping, nothing left
    batch.clear();
    while (!queue_.empty() && batch.size() < kMaxBatch) {
      batch.push_back(queue_.front());
      queue_.pop_front();
    }
    lock.unlock();
    try {
      db_.transact([&](db::Transaction& tx) {
        for (Op* op : batch) apply(tx, *op);
      });
    } catch (...) {
      for (Op* op : batch) {  // one write per transaction, so only the bad one fails
        try {
          db_.transact([&](db::Transaction& tx) { apply(tx, *op); });
        } catch (...) {
          op->error = std::current_exception();
        }
      }
    }
    for (Op* op : batch) op->done.release();
    lock.lock();
  }
}

}  // namespace webhooks::receiver::detail
