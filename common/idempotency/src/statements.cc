#include "statements.h"

namespace webhooks::idempotency::detail {
namespace {

// States as in StateCode: 0 in_progress, 1 completed, 2 failed.
#define WEBHOOKS_RECORD_COLUMNS                                                    \
  "fingerprint, state, lease_owner, lease_expires_at, attempts, response_status, " \
  "response_headers, response_body, created_at, expires_at, route, response_ref"

constexpr std::string_view kInsert =
    "INSERT INTO idempotency_records (scope, idempotency_key, fingerprint, state, lease_owner, "
    "lease_expires_at, attempts, created_at, expires_at, route, updated_at) "
    "VALUES ($1, $2, $3, 0, $4, $5, 1, $6, $7, $8, $6) "
    "ON CONFLICT (scope, idempotency_key) DO NOTHING";

// A record past expires_at counts as absent: it is reset as if new.
constexpr std::string_view kRestart =
    "UPDATE idempotency_records SET fingerprint = $3, state = 0, lease_owner = $4, "
    "lease_expires_at = $5, attempts = 1, response_status = NULL, response_headers = NULL, "
    "response_body = NULL, response_ref = NULL, created_at = $6, expires_at = $7, route = $8, "
    "updated_at = $6, replays = NULL, conflicts = NULL, mismatches = NULL "
    "WHERE scope = $1 AND idempotency_key = $2";

constexpr std::string_view kReacquire =
    "UPDATE idempotency_records SET state = 0, lease_owner = $3, lease_expires_at = $4, "
    "attempts = attempts + 1, updated_at = $5 WHERE scope = $1 AND idempotency_key = $2";

constexpr std::string_view kComplete =
    "UPDATE idempotency_records SET state = 1, lease_owner = NULL, lease_expires_at = NULL, "
    "response_status = $4, response_headers = $5, response_body = $6, updated_at = $7, "
    "response_ref = $8 "
    "WHERE scope = $1 AND idempotency_key = $2 AND lease_owner = $3 AND state = 0";

constexpr std::string_view kFail =
    "UPDATE idempotency_records SET state = 2, lease_owner = NULL, lease_expires_at = NULL, "
    "updated_at = $4, response_status = $5 "
    "WHERE scope = $1 AND idempotency_key = $2 AND lease_owner = $3 AND state = 0";

constexpr std::string_view kRenew =
    "UPDATE idempotency_records SET lease_expires_at = $4 "
    "WHERE scope = $1 AND idempotency_key = $2 AND lease_owner = $3 AND state = 0";

constexpr std::string_view kSweep =
    "UPDATE idempotency_records SET state = 2, lease_owner = NULL, lease_expires_at = NULL, "
    "updated_at = $1 "
    "WHERE state = 0 AND lease_expires_at <= $1";

constexpr std::string_view kSelect =
    "SELECT " WEBHOOKS_RECORD_COLUMNS
    " FROM idempotency_records WHERE scope = $1 AND idempotency_key = $2";

constexpr std::string_view kInsertCompleted =
    "INSERT INTO idempotency_records (scope, idempotency_key, fingerprint, state, lease_owner, "
    "lease_expires_at, attempts, response_status, response_headers, response_body, created_at, "
    "expires_at, route, updated_at, response_ref) "
    "VALUES ($1, $2, $3, 1, NULL, NULL, 1, $4, $5, $6, $7, $8, $9, $10, $11) "
    "ON CONFLICT (scope, idempotency_key) DO UPDATE SET fingerprint = excluded.fingerprint, "
    "state = 1, lease_owner = NULL, lease_expires_at = NULL, attempts = 1, "
    "response_status = excluded.response_status, response_headers = excluded.response_headers, "
    "response_body = excluded.response_body, response_ref = excluded.response_ref, "
    "created_at = excluded.created_at, "
    "expires_at = excluded.expires_at, route = excluded.route, updated_at = excluded.updated_at, "
    "replays = NULL, conflicts = NULL, mismatches = NULL";

// The purge names rows by rowid (a rowid table again since 0004_rendered_answers).
constexpr std::string_view kSqlitePurge =
    "DELETE FROM idempotency_records WHERE rowid IN (SELECT rowid FROM idempotency_records "
    "WHERE expires_at <= $1 LIMIT $2)";

constexpr Statements kSqlite{kInsert, kSelect, kRestart,     kReacquire, kComplete,       kFail,
                             kRenew,  kSweep,  kSqlitePurge, kSelect,    kInsertCompleted};

constexpr Statements kPostgres{
    kInsert,
    "SELECT " WEBHOOKS_RECORD_COLUMNS
    " FROM idempotency_records WHERE scope = $1 AND idempotency_key = $2 FOR UPDATE",
    kRestart,
    kReacquire,
    kComplete,
    kFail,
    kRenew,
    kSweep,
    "DELETE FROM idempotency_records WHERE ctid IN (SELECT ctid FROM idempotency_records "
    "WHERE expires_at <= $1 LIMIT $2)",
    kSelect,
    kInsertCompleted};

}  // namespace

const Statements& statements(db::Engine engine) {
  return engine == db::Engine::sqlite ? kSqlite : kPostgres;
}

State parse_state(std::int64_t code) {
  if (code == kCompleted) return State::completed;
  if (code == kFailed) return State::failed;
  return State::in_progress;
}

std::string to_hex(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 0xF]);
  }
  return out;
}

}  // namespace webhooks::idempotency::detail
