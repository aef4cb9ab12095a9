#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "ops/ops_notice.h"
#include "store/delivery_control_columns.h"
#include "store/store_sql.h"
#include "webhooks/enum_names.h"
#include "webhooks/publisher/store.h"

namespace webhooks::publisher {
namespace sql = detail::sql;
namespace {

constexpr EnumNames<Settlement::Next, 3> kNextStates{{"succeeded", "pending", "dead"}, "pending"};
std::string_view next_state(Settlement::Next next) { return kNextStates.name(next); }

}  // namespace

namespace {

// How many tasks of the due endpoint in row `r` of kSelectDueEndpoints this claim may take, with
// `room` left: its share under `limits` and its rate limit (which takes the endpoint's lock and
// forgets the window's old claims first).
std::int64_t endpoint_quota(db::Transaction& tx, const db::Rows& due, std::size_t r,
                            std::int64_t room, const ClaimLimits& limits, UnixMillis& now) {
  const std::string& endpoint_id = due.text(r, 0);
  std::int64_t quota = room;
  if (limits.per_endpoint > 0) quota = std::min(quota, limits.per_endpoint - due.integer(r, 2));
  if (limits.per_endpoint_here > 0 && limits.held != nullptr) {
    const auto held = limits.held->find(endpoint_id);
    const int mine = held == limits.held->end() ? 0 : held->second;
    quota = std::min<std::int64_t>(quota, limits.per_endpoint_here - mine);
  }
  if (quota <= 0 || due.is_null(r, 3)) return quota;
  // Full as the listing saw it: nothing to take (the window only empties with time), and no lock
  // or statement spent on it.
  if (due.integer(r, 4) >= due.integer(r, 3)) return 0;
  if (tx.engine() == db::Engine::postgres) tx.exec(sql::kLockRateLimited, {endpoint_id});
  // The window ends now, read once the lock is held (a claim of another daemon may have held it
  // a while): the time logged is then close to when the requests go out.
  if (limits.clock) now = limits.clock();
  tx.exec(sql::kForgetRateLog, {endpoint_id, std::int64_t{now}});
  const std::int64_t used = tx.exec(sql::kCountRateLog, {endpoint_id}).integer(0, 0);
  return std::min(quota, due.integer(r, 3) - used);
}

ClaimedTask claimed_from(const db::Rows& rows, std::size_t r, const std::string& lease_owner) {
  ClaimedTask c;
  c.task.id = rows.integer(r, 0);
  c.task.event_id = rows.text(r, 1);
  c.task.endpoint_id = rows.text(r, 2);
  c.task.state = TaskState::delivering;
  c.task.attempts = static_cast<int>(rows.integer(r, 3));
  c.task.next_attempt_at = rows.integer(r, 4);
  c.task.next_trigger = parse_trigger(rows.text(r, 5)).value_or(Trigger::scheduled);
  c.task.age_from = rows.integer(r, 6);
  c.task.created_at = rows.integer(r, 7);
  c.url = rows.text(r, 8);
  c.event.event_id = c.task.event_id;
  c.event.merchant_id = rows.text(r, 9);
  c.event.type = rows.text(r, 10);
  c.event.payload = rows.text(r, 11);
  c.event.created_at = rows.integer(r, 12);
  c.event.ordering_key = rows.text(r, 13);
  c.event.traceparent = rows.text(r, 14);
  c.event.tracestate = rows.text(r, 15);
  if (!rows.is_null(r, 16)) c.sequence_key = rows.text(r, 16);
  c.control = detail::control_from(rows, r, 17);
  c.lease_owner = lease_owner;
  return c;
}

}  // namespace

void Store::claim_in(db::Transaction& tx, const std::string& lease_owner, int limit, UnixMillis now,
                     UnixMillis lease_until, const ClaimLimits& limits,
                     std::vector<ClaimedTask>& claimed) {
  claimed.clear();
  const std::string_view claim_sql =
      tx.engine() == db::Engine::sqlite ? sql::kClaimSqlite : sql::kClaimPostgres;
  tx.exec(sql::kReap, {std::int64_t{now}});
  const db::Rows due = tx.exec(sql::kSelectDueEndpoints, {std::int64_t{now}});
  std::int64_t room = limit;
  for (std::size_t r = 0; r < due.size() && room > 0; ++r) {
    UnixMillis rate_now = now;  // the rate window's end (endpoint_quota may read it later)
    const std::int64_t quota = endpoint_quota(tx, due, r, room, limits, rate_now);
    if (quota <= 0) continue;
    const std::string& endpoint_id = due.text(r, 0);
    const std::int64_t taken = tx.exec(claim_sql, {lease_owner, std::int64_t{now}, quota,
                                                   std::int64_t{lease_until}, endpoint_id})
                                   .affected();
    if (taken > 0 && !due.is_null(r, 3)) {
      tx.exec(sql::kLogRate, {endpoint_id, std::int64_t{rate_now}, lease_owner});
    }
    room -= taken;
  }
  if (room == limit) return;
  const db::Rows rows = tx.exec(sql::kSelectClaimed, {lease_owner});
  const db::Rows secrets = tx.exec(sql::kSelectClaimedSecrets, {lease_owner, std::int64_t{now}});
  std::unordered_map<std::string, std::vector<std::string>> by_endpoint;
  for (std::size_t r = 0; r < secrets.size(); ++r) {
    by_endpoint[secrets.text(r, 0)].push_back(secrets.text(r, 1));
  }
  for (std::size_t r = 0; r < rows.size(); ++r) {
    ClaimedTask c = claimed_from(rows, r, lease_owner);
    c.secrets = by_endpoint[c.task.endpoint_id];
    claimed.push_back(std::move(c));
  }
}

std::vector<ClaimedTask> Store::claim(const std::string& lease_owner, int limit, UnixMillis now,
                                      UnixMillis lease_until, const ClaimLimits& limits) {
  std::vector<ClaimedTask> claimed;
  db_->transact([&](db::Transaction& tx) {
    claim_in(tx, lease_owner, limit, now, lease_until, limits, claimed);
  });
  return claimed;
}

std::vector<DisabledEndpoint> Store::record(const std::vector<Settlement>& records, UnixMillis now,
                                            UnixMillis disable_failing_before) {
  FailingRules rules;
  rules.disable_before = disable_failing_before;
  return record(records, now, rules).disabled;
}

namespace {

// The failed settlement `r` goes on its endpoint's streak: starts it, warns about it, disables
// the endpoint (adding to `out`), with the ops events FailingRules asks for.
void endpoint_failed(Store& store, db::Transaction& tx, const Settlement& r,
                     const FailingRules& rules, UnixMillis now, RecordedHealth& out) {
  const DeliveryAttempt& a = r.attempt;
  tx.exec(sql::kEndpointFailing, {a.endpoint_id, std::int64_t{a.started_at}});
  if (rules.warn_before > 0 && tx.exec(sql::kWarnIfFailing, {a.endpoint_id, std::int64_t{now},
                                                             std::int64_t{rules.warn_before}})
                                       .affected() > 0) {
    const detail::OpsNotice notice = detail::ops_notice(tx, a.endpoint_id);
    out.warned.push_back({a.endpoint_id, notice.failing_since});
    std::string reason = error_text(a.error, a.error_message);
    if (reason.empty()) reason = "HTTP " + std::to_string(a.status);
    detail::insert_ops_event(store, tx, rules.ops_merchant_id, kOpsEndpointFailing, notice, reason,
                             now);
  }
  std::int64_t disabled = 0;
  std::string_view reason;
  if (!r.disable_reason.empty()) {
    reason = r.disable_reason;
    disabled =
        tx.exec(sql::kDisableIfEnabled, {a.endpoint_id, reason, std::int64_t{now}}).affected();
  } else if (rules.disable_before > 0) {
    reason = kFailingContinuously;
    disabled = tx.exec(sql::kDisableIfFailing, {a.endpoint_id, reason, std::int64_t{now},
                                                std::int64_t{rules.disable_before}})
                   .affected();
  }
  if (disabled == 0) return;
  // Parks this task if it was just scheduled again, and the endpoint's others, those still being
  // delivered included (they stay parked when their attempts are recorded).
  tx.exec(sql::kParkEndpointTasks, {a.endpoint_id});
  out.disabled.push_back({a.endpoint_id, std::string(reason)});
  detail::insert_ops_event(store, tx, rules.ops_merchant_id, kOpsEndpointDisabled,
                           detail::ops_notice(tx, a.endpoint_id), reason, now);
}

// PostgreSQL: the locks of the FIFO sequences whose task `records` finish, in (endpoint, key)
// order as ingest takes them, before anything else, so the two never wait on each other in turn.
void lock_finished_sequences(db::Transaction& tx, const std::vector<Settlement>& records) {
  std::vector<std::pair<std::string_view, std::string_view>> sequences;
  for (const Settlement& r : records) {
    if (r.sequence_key && r.next != Settlement::Next::retry) {
      sequences.emplace_back(r.attempt.endpoint_id, *r.sequence_key);
    }
  }
  std::sort(sequences.begin(), sequences.end());
  sequences.erase(std::unique(sequences.begin(), sequences.end()), sequences.end());
  for (const auto& [endpoint_id, key] : sequences) tx.exec(sql::kLockSequence, {endpoint_id, key});
}

}  // namespace

void Store::record_in(db::Transaction& tx, const std::vector<Settlement>& records, UnixMillis now,
                      const FailingRules& rules, RecordedHealth& health) {
  health = {};
  // Endpoints whose failing streak this transaction already cleared: another success of the
  // same endpoint needs no second UPDATE (a failure in between forgets the endpoint).
  std::unordered_set<std::string_view> healthy;
  if (tx.engine() == db::Engine::postgres) lock_finished_sequences(tx, records);
  for (const Settlement& r : records) {
    const DeliveryAttempt& a = r.attempt;
    const std::string text = error_text(a.error, a.error_message);
    const db::Param error = text.empty() ? db::Param(nullptr) : db::Param(text);
    if (!a.delivery_id.empty()) {  // empty: settled without an attempt (age limit reached)
      tx.exec(sql::kInsertAttempt,
              {a.delivery_id, std::int64_t{a.task_id}, a.event_id, a.endpoint_id,
               std::int64_t{a.attempt_number}, to_string(a.trigger), std::int64_t{a.started_at},
               std::int64_t{a.status}, std::int64_t{a.latency_ms}, error, a.response_snippet,
               db::text_or_null(a.traceparent)});
    }
    const UnixMillis next_at =
        r.next == Settlement::Next::retry ? r.next_attempt_at : std::int64_t{now};
    const bool settled =
        tx.exec(sql::kSettleTask,
                {std::int64_t{a.task_id}, r.lease_owner, next_state(r.next), std::int64_t{next_at},
                 std::int64_t{a.status}, error, std::int64_t{now}})
            .affected() > 0;
    if (settled && r.sequence_key && r.next != Settlement::Next::retry) {
      tx.exec(sql::kAdvanceSequence, {a.endpoint_id, *r.sequence_key, std::int64_t{now}});
    }
    if (!r.endpoint_failed) {
      if (healthy.insert(a.endpoint_id).second) tx.exec(sql::kEndpointHealthy, {a.endpoint_id});
      continue;
    }
    healthy.erase(a.endpoint_id);
    endpoint_failed(*this, tx, r, rules, now, health);
  }
}

RecordedHealth Store::record(const std::vector<Settlement>& records, UnixMillis now,
                             const FailingRules& rules) {
  RecordedHealth health;
  if (records.empty()) return health;
  db_->transact([&](db::Transaction& tx) { record_in(tx, records, now, rules, health); });
  return health;
}

RecordedHealth Store::record_and_claim(const std::vector<Settlement>& records, UnixMillis now,
                                       const FailingRules& rules, const std::string& lease_owner,
                                       int limit, UnixMillis lease_until, const ClaimLimits& limits,
                                       std::vector<ClaimedTask>& claimed) {
  RecordedHealth health;
  db_->transact([&](db::Transaction& tx) {
    record_in(tx, records, now, rules, health);
    claim_in(tx, lease_owner, limit, now, lease_until, limits, claimed);
  });
  return health;
}

std::vector<FailingEndpoint> Store::failing_endpoints() {
  std::vector<FailingEndpoint> failing;
  const db::Rows rows = db_->read(sql::kSelectFailing);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    failing.push_back({rows.text(r, 0), rows.integer(r, 1)});
  }
  return failing;
}

int Store::release(const std::string& lease_owner, UnixMillis now) {
  return static_cast<int>(db_->exec(sql::kRelease, {lease_owner, std::int64_t{now}}).affected());
}

}  // namespace webhooks::publisher
