// The audit log (docs/security.md, "The audit log"): who changed what, when, from where, and how
// it ended. One row per state-changing request of the admin API or the console (endpoint create,
// update, enable, disable, delete, rotate-secret, recover, replay-missing; event replay) and per
// console sign-in and sign-out, in publisher_audit_log
// (schema/publisher/<engine>/0009_audit_log.sql) on the daemon's database, so every daemon on one
// database writes one log. Read through GET /v1/audit and the console's /console/audit; purged with
// delivered history (Store::purge).
//
//   AuditLog log(store.database());
//   log.record({.at = now, .actor = "alice", .role = "admin", .action = "endpoint.create", ...});
//   AuditPage page = log.list({.actor = "alice", .limit = 50});
//
// Thread-safe (the Database is). Database failures throw Error(storage).
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "webhooks/clock.h"
#include "webhooks/db.h"

namespace webhooks::publisher {

// One action as recorded.
struct AuditEntry {
  std::int64_t id = 0;  // assigned by the database, increasing; 0 before it is recorded
  UnixMillis at = 0;    // when it was answered, Unix ms
  std::string actor;    // the token's name (principals.h); "" for a sign-in with a wrong token
  std::string role;     // "admin", "viewer", or "" with no actor
  std::string action;   // e.g. "endpoint.create" (kAuditActions)
  std::string target;   // the endpoint's or event's id; "" for none (a sign-in)
  std::string outcome;  // audit_outcome(status): "succeeded", "refused" or "failed"
  int status = 0;       // the HTTP status answered
  std::string detail;   // the answer's error code ("not_found", "wrong_token"), "" on success
  std::string client;   // the client's address: the TCP peer (a proxy's, behind one)
  bool operator==(const AuditEntry&) const = default;
};

// Every action the log records, in the order docs/security.md lists them.
inline constexpr std::string_view kAuditActions[] = {
    "endpoint.create", "endpoint.update",        "endpoint.enable",  "endpoint.disable",
    "endpoint.delete", "endpoint.rotate_secret", "endpoint.recover", "endpoint.replay_missing",
    "event.replay",    "console.sign_in",        "console.sign_out", "api.authenticate"};

// "succeeded" below 400, "refused" from 400 to 499, "failed" from 500 (or 0: no answer).
std::string_view audit_outcome(int status);

// Which entries a listing returns; every filter set applies (AND).
struct AuditQuery {
  std::string actor;                // exact; empty: everyone
  std::string action;               // exact (kAuditActions); empty: every action
  std::string target;               // exact; empty: every target
  std::optional<UnixMillis> since;  // at or after
  std::optional<UnixMillis> until;  // before (exclusive)
  // AuditPage::next_cursor of the previous page (decimal digits); empty: the newest.
  std::string cursor;
  int limit = 100;  // entries per page, 1..1000
};

struct AuditPage {
  std::vector<AuditEntry> entries;  // newest first (by id, descending)
  std::string next_cursor;          // pass as AuditQuery::cursor for the next page; "" on the last
};

// At most `per_minute` entries a minute of a kind anyone can cause (a sign-in with a wrong token,
// from any number of addresses), so the log cannot be made to fill the disk; the rest are counted
// and the next entry admitted says how many were left out. Thread-safe.
class AuditBudget {
 public:
  explicit AuditBudget(int per_minute) : per_minute_(per_minute) {}
  // Whether one more entry at `now` (Unix ms) is recorded; if so, how many were left out since
  // the last one admitted goes to `left_out`.
  bool admit(UnixMillis now, std::int64_t& left_out);

 private:
  std::mutex mutex_;
  const int per_minute_;
  UnixMillis minute_ = -1;  // now / 60,000 of the current minute
  int used_ = 0;
  std::int64_t left_out_ = 0;
};

// Entries without an actor (a wrong or missing token, a form from another origin) recorded a
// minute per daemon at most (AuditBudget).
inline constexpr int kUnauthenticatedEntriesPerMinute = 60;

// The action a state-changing request of the admin API is (kAuditActions), from its method and
// path; "" for one that is not recorded (ingest) or no route.
std::string audit_action_of(std::string_view method, const std::string& path);
// The endpoint's or event's id in such a path ("" for none).
std::string audit_target_of(const std::string& path);

class AuditLog {
 public:
  // `db` must be migrated (the publisher component's 0009_audit_log) and outlive the log.
  explicit AuditLog(db::Database& db) : db_(db) {}

  // Appends `entry` (its id is ignored). Throws Error(storage).
  void record(const AuditEntry& entry);
  // A page of entries, newest first. Throws Error(invalid_argument) for a limit outside 1..1000
  // or a cursor that is not decimal digits; Error(storage).
  AuditPage list(const AuditQuery& query);

 private:
  db::Database& db_;
};

}  // namespace webhooks::publisher
