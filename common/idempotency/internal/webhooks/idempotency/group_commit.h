// Group commit: concurrent callers' writes share one transaction, each in its own SAVEPOINT, and
// every caller returns only after the commit holding its work. The one write path of the three
// servers here (the publisher's ingest, the webhook receiver, orders-api's guarded requests):
// their idempotency record and their own rows are one caller's `work`, so a new event or request
// costs a share of one commit instead of a commit of its own. docs/idempotency.md, "Group commit".
//
//   GroupCommit group(database);
//   group.run([&](db::Transaction& tx) {        // on some caller's thread, in a savepoint
//     auto begun = store.begin(tx, scope, key, fingerprint, now);
//     ...; store.complete(tx, begun.lease, answer, now);
//   });                                         // returns once committed (or throws)
//
// Leader and followers: a caller that finds fewer than `writers` transactions under way leads one;
// the others queue. A leader takes itself and up to max_group - 1 queued callers, runs each one's
// work in turn (in `SAVEPOINT webhooks_group` / `RELEASE`, or `ROLLBACK TO` when that work throws,
// so its writes alone are undone), commits, hands its role to the oldest caller still queued, and
// wakes each of them. A group of one runs without a savepoint. Every caller is woken once.
// Thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>

#include "webhooks/db.h"

namespace webhooks::idempotency {

struct GroupCommitOptions {
  // Most callers' work in one transaction.
  std::size_t max_group = 128;
  // Transactions under way at once; 0: automatic, 1 on SQLite (one writer at a time anyway) and
  // 4 on PostgreSQL (one group's round trips overlap another's; keep it below the pool size).
  int writers = 0;
  // PostgreSQL: `SET LOCAL lock_timeout` for each group's transaction (milliseconds; 0: none),
  // so an INSERT that waits for another process's uncommitted row of the same key gives up after
  // this long (SQLSTATE 55P03, thrown as Error(conflict) from that caller's work). Ignored by
  // SQLite, whose BEGIN IMMEDIATE already serialises writers across processes.
  std::chrono::milliseconds lock_timeout{0};
};

class GroupCommit {
 public:
  using Work = std::function<void(db::Transaction&)>;

  // `db` must outlive the GroupCommit. Throws nothing.
  explicit GroupCommit(db::Database& db, GroupCommitOptions options = {});
  GroupCommit(const GroupCommit&) = delete;
  GroupCommit& operator=(const GroupCommit&) = delete;

  // Runs `work(tx)` inside a transaction shared with concurrent callers, possibly on another
  // caller's thread, and returns after that transaction has committed. When `work` throws, its
  // own writes are rolled back, the others' commit, and its exception is rethrown here (after
  // the commit). When BEGIN, a savepoint statement or COMMIT fails, nothing of the group is
  // committed and every caller whose work did not throw gets that Error(storage).
  // `work` must not open a transaction of its own on the same database (it would wait for itself).
  void run(const Work& work);

  db::Database& database() const { return db_; }
  // Callers queued for the next transaction right now (for tests and metrics).
  std::size_t waiting() const;

 private:
  struct Caller;
  void lead(Caller& me);
  void commit(Caller* const* group, std::size_t size);

  db::Database& db_;
  GroupCommitOptions options_;
  mutable std::mutex mutex_;
  std::deque<Caller*> queue_;  // waiting for a transaction, oldest first
  int leading_ = 0;            // transactions being written (leaders)
};

}  // namespace webhooks::idempotency
