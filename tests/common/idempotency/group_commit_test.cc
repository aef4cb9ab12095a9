// GroupCommit on the engine named by WEBHOOKS_TEST_ENGINE: callers share one transaction, each in
// its own savepoint; a failing caller's writes alone are rolled back; every caller returns after
// the commit holding its work.
#include "webhooks/idempotency/group_commit.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "detail/fiber.h"
#include "support/test_env.h"
#include "webhooks/error.h"
#include "webhooks/idempotency/schema.h"

using namespace webhooks;
using webhooks::idempotency::GroupCommit;

namespace {

struct Fixture {
  Fixture() { db->exec("CREATE TABLE rows_written (id TEXT PRIMARY KEY)"); }
  std::shared_ptr<db::Database> db = test::open_database("group_commit", {idempotency::schema()});
  GroupCommit group{*db, {128, 1, std::chrono::milliseconds(0)}};
  std::int64_t count(const std::string& where = "1 = 1") {
    return db->exec("SELECT COUNT(*) FROM rows_written WHERE " + where).integer(0, 0);
  }
  void insert(db::Transaction& tx, const std::string& id) {
    tx.exec("INSERT INTO rows_written (id) VALUES ($1)", {id});
  }
};

// Waits (bounded, 10 s) until `n` callers are queued behind the running transaction.
bool wait_for_queue(const GroupCommit& group, std::size_t n) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (group.waiting() < n) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

}  // namespace

TEST_CASE(
    "group commit: 20 queued callers share one transaction; the one that throws loses only its "
    "writes") {
  Fixture f;
  constexpr int kQueued = 20;
  std::atomic<bool> holder_saw_queue{false}, leading{false};
  std::thread holder([&] {
    // Holds the only writer's role until every other caller is queued, so they form one group.
    f.group.run([&](db::Transaction& tx) {
      leading = true;
      f.insert(tx, "holder");
      holder_saw_queue = wait_for_queue(f.group, kQueued);
    });
  });
  while (!leading) std::this_thread::yield();
  std::vector<std::thread> callers;
  std::vector<std::thread::id> ran_on(kQueued);
  std::vector<std::string> outcome(kQueued);
  for (int i = 0; i < kQueued; ++i) {
    callers.emplace_back([&, i] {
      try {
        f.group.run([&](db::Transaction& tx) {
          ran_on[i] = std::this_thread::get_id();
          f.insert(tx, "c" + std::to_string(i));
          if (i == 13) throw std::runtime_error("caller 13 fails after its write");
        });
        outcome[i] = "committed:" + std::to_string(f.count("id = 'c" + std::to_string(i) + "'"));
      } catch (const std::runtime_error& e) {
        outcome[i] = e.what();
      }
    });
  }
  holder.join();
  for (auto& t : callers) t.join();
  CHECK(holder_saw_queue);
  for (int i = 0; i < kQueued; ++i) {
    INFO("caller " << i);
    // Each caller sees its own row committed when run() returns.
    CHECK(outcome[i] == (i == 13 ? "caller 13 fails after its write" : "committed:1"));
  }
  CHECK(f.count() == kQueued);  // the holder's row and 19 of the 20
  CHECK(f.count("id = 'c13'") == 0);
  // All 20 ran on one thread: the leader of their group ran every caller's work.
  CHECK(std::set<std::thread::id>(ran_on.begin(), ran_on.end()).size() == 1);
}

TEST_CASE("group commit: a caller alone runs without a savepoint; its failure rolls it back") {
  Fixture f;
  f.group.run([&](db::Transaction& tx) { f.insert(tx, "a"); });
  CHECK(f.count() == 1);
  CHECK_THROWS_WITH(f.group.run([&](db::Transaction& tx) {
    f.insert(tx, "b");
    throw Error(ErrorCode::invalid_argument, "no");
  }),
                    "no");
  CHECK(f.count() == 1);
  // A statement that fails (a duplicate primary key) is thrown to its caller as Error(storage).
  try {
    f.group.run([&](db::Transaction& tx) { f.insert(tx, "a"); });
    FAIL("a duplicate key was accepted");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::storage);
  }
  f.group.run([&](db::Transaction& tx) { f.insert(tx, "c"); });
  CHECK(f.count() == 2);
  CHECK(f.group.waiting() == 0);
}

TEST_CASE("group commit: inside a group, a failed statement is undone by its savepoint only") {
  Fixture f;
  std::atomic<bool> queued{false}, leading{false};
  std::thread holder([&] {
    f.group.run([&](db::Transaction&) {
      leading = true;
      queued = wait_for_queue(f.group, 3);
    });
  });
  while (!leading) std::this_thread::yield();
  std::vector<std::thread> callers;
  std::atomic<int> storage_errors{0};
  for (const std::string id : {"x", "y", "x"}) {  // the second "x" violates the primary key
    callers.emplace_back([&, id] {
      try {
        f.group.run([&](db::Transaction& tx) { f.insert(tx, id); });
      } catch (const Error& e) {
        if (e.code() == ErrorCode::storage) ++storage_errors;
      }
    });
  }
  holder.join();
  for (auto& t : callers) t.join();
  CHECK(queued);
  CHECK(storage_errors == 1);
  CHECK(f.count() == 2);  // x once, y
}

TEST_CASE("group commit: 8 callers on fibers of one thread form one group, led by the first") {
  Fixture f;
  std::mutex mutex;
  std::condition_variable cv;
  fibers::Scheduler worker(256 * 1024, mutex, cv);
  constexpr int kCallers = 8;
  std::vector<fibers::Fiber*> caller_fiber(kCallers), ran_on(kCallers);
  std::vector<int> returned;
  for (int i = 0; i < kCallers; ++i) {
    worker.spawn([&, i] {
      caller_fiber[i] = fibers::current();
      f.group.run([&, i](db::Transaction& tx) {
        ran_on[i] = fibers::current();
        f.insert(tx, "fiber" + std::to_string(i));
      });
      returned.push_back(i);
    });
  }
  // The first leads and yields its turn; the 7 others queue behind it, each suspended, and the
  // thread is free: nothing has committed yet.
  CHECK(returned.empty());
  CHECK(f.group.waiting() == 7);
  CHECK(f.count() == 0);
  if (f.db->engine() == db::Engine::postgres) {
    // PostgreSQL's transaction runs on a blocking thread (fibers::run_on_thread, so that a
    // server that stops answering holds no fiber thread), the leader's fiber suspended meanwhile:
    // the fibers are run as they are woken, until all 8 returned (bounded: 30 s).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (returned.size() < kCallers && std::chrono::steady_clock::now() < deadline) {
      if (worker.run() == 0) {
        std::unique_lock lock(mutex);
        cv.wait_for(lock, std::chrono::milliseconds(10));
      }
    }
    CHECK(returned.size() == kCallers);
    CHECK(f.count() == 8);
    for (int i = 0; i < kCallers; ++i) CHECK(ran_on[i] == nullptr);  // not on a fiber
    CHECK(worker.live() == 0);
    return;
  }
  CHECK(worker.run() == 1);  // the leader: one transaction for all 8, then it returns
  CHECK(returned == std::vector<int>{0});
  CHECK(f.count() == 8);
  CHECK(worker.run() == 7);  // the others, woken after the commit
  CHECK(returned == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
  for (int i = 0; i < kCallers; ++i) CHECK(ran_on[i] == caller_fiber[0]);
  CHECK(worker.live() == 0);
}
