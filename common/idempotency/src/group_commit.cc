#include "webhooks/idempotency/group_commit.h"

#include <exception>
#include <string>
#include <vector>

#include "detail/fiber.h"
#include "webhooks/error.h"

namespace webhooks::idempotency {

// One caller's work, on its stack (a thread's or a fiber's) while it waits: woken once, done or
// made a leader. It sleeps on a Wakeup of its own (detail/fiber.h): a thread on a mutex and
// condition variable, not a std::binary_semaphore (libstdc++'s acquire() spins calling
// sched_yield before it sleeps, and with 64 waiters on 2 cores that spinning took 10-12 % of the
// receiver's CPU, away from the leader writing the group); a fiber of a fiber worker by handing
// its thread to other requests. Its own, not the GroupCommit's: a leader wakes up to max_group
// callers, which would otherwise queue for one mutex on their way out.
struct GroupCommit::Caller {
  const Work* work = nullptr;
  std::exception_ptr error;  // what its work threw, or the group's commit failure
  bool done = false;         // committed (or failed); set before wake()
  fibers::Wakeup woken;

  void wait() { woken.wait(); }
  // After this, the caller may return from run() and be gone.
  void wake() { woken.notify(); }
};

GroupCommit::GroupCommit(db::Database& db, GroupCommitOptions options)
    : db_(db), options_(options) {
  if (options_.max_group == 0) options_.max_group = 1;
  if (options_.writers < 1) options_.writers = db.engine() == db::Engine::sqlite ? 1 : 4;
}

void GroupCommit::run(const Work& work) {
  Caller me;
  me.work = &work;
  {
    std::unique_lock lock(mutex_);
    if (leading_ < options_.writers) {
      ++leading_;
    } else {
      queue_.push_back(&me);
      lock.unlock();
      me.wait();  // done by another leader, or handed the leader's role
    }
  }
  if (!me.done) lead(me);
  if (me.error) std::rethrow_exception(me.error);
}

std::size_t GroupCommit::waiting() const {
  std::lock_guard lock(mutex_);
  return queue_.size();
}

void GroupCommit::lead(Caller& me) {
  // One turn for the others first (on a fiber worker: the requests queued behind this one), so
  // that callers already on their way join this group rather than wait for the next: measured
  // groups of 36 instead of 6 on merchant-receiver under 64 connections, and 20 % more events/s.
  fibers::yield();
  std::vector<Caller*> group{&me};
  {
    std::lock_guard lock(mutex_);
    while (!queue_.empty() && group.size() < options_.max_group) {
      group.push_back(queue_.front());
      queue_.pop_front();
    }
  }
  commit(group.data(), group.size());
  // The next leader first, so the next group's transaction overlaps this group's wake-ups.
  Caller* next = nullptr;
  {
    std::lock_guard lock(mutex_);
    if (queue_.empty()) {
      --leading_;
    } else {
      next = queue_.front();  // the oldest waiter leads the next group; leading_ stays
      queue_.pop_front();
    }
  }
  if (next) next->wake();
  me.done = true;
  for (std::size_t i = 1; i < group.size(); ++i) {
    group[i]->done = true;
    group[i]->wake();  // after this, *group[i] may be gone
  }
}

namespace {

// A lock_timeout past which PostgreSQL gives up waiting (SQLSTATE 55P03), as Error(conflict).
void run_work(const GroupCommit::Work& work, db::Transaction& tx) {
  try {
    work(tx);
  } catch (const Error& e) {
    const std::string_view what = e.what();
    if (e.code() == ErrorCode::storage && what.find("SQLSTATE 55P03") != std::string_view::npos) {
      throw Error(ErrorCode::conflict, "gave up waiting for another transaction on the same key");
    }
    throw;
  }
}

}  // namespace

void GroupCommit::commit(Caller* const* group, std::size_t size) {
  try {
    db_.transact([&](db::Transaction& tx) {
      if (options_.lock_timeout.count() > 0 && tx.engine() == db::Engine::postgres) {
        tx.exec("SET LOCAL lock_timeout = " + std::to_string(options_.lock_timeout.count()));
      }
      if (size == 1) {  // alone: the transaction is its savepoint
        try {
          run_work(*group[0]->work, tx);
        } catch (...) {
          group[0]->error = std::current_exception();
          throw;
        }
        return;
      }
      for (std::size_t i = 0; i < size; ++i) {
        tx.exec("SAVEPOINT webhooks_group");
        try {
          run_work(*group[i]->work, tx);
        } catch (...) {
          group[i]->error = std::current_exception();
          tx.exec("ROLLBACK TO SAVEPOINT webhooks_group");
        }
        tx.exec("RELEASE SAVEPOINT webhooks_group");
      }
    });
  } catch (...) {
    // BEGIN, a savepoint statement or COMMIT failed (or a group of one's work threw, already
    // recorded): nothing of this group was committed.
    const std::exception_ptr failure = std::current_exception();
    for (std::size_t i = 0; i < size; ++i) {
      if (!group[i]->error) group[i]->error = failure;
    }
  }
}

}  // namespace webhooks::idempotency
