// The PostgreSQL engine's bounds (db::Options: postgres_statement_timeout_ms,
// postgres_pool_wait_ms) and Database::ping, against a real server of the test's own
// (support/own_postgres.h), frozen with SIGSTOP where a server that stops answering is needed.
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "support/own_postgres.h"
#include "webhooks/db.h"
#include "webhooks/error.h"

namespace webhooks::test {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

// The message of the Error(storage) `call` throws (fails the test when it throws nothing or
// something else), and how long it took in `ms`.
template <typename F>
std::string storage_error(F call, long long& ms) {
  const auto start = steady_clock::now();
  try {
    call();
  } catch (const Error& e) {
    ms = ms_since(start);
    CHECK(e.code() == ErrorCode::storage);
    return e.what();
  }
  ms = ms_since(start);
  FAIL("no Error(storage) thrown");
  return {};
}

db::Options bounds(int statement_ms, int pool_wait_ms, int pool_size = 2) {
  db::Options options;
  options.pool_size = pool_size;
  options.postgres_statement_timeout_ms = statement_ms;
  options.postgres_pool_wait_ms = pool_wait_ms;
  return options;
}

TEST_CASE(
    "a statement past postgres_statement_timeout_ms is cancelled by the server; the "
    "connection is kept") {
  OwnPostgres pg;
  auto db = db::Database::open(pg.create_database("bounds_statement"), bounds(200, 1000));
  long long ms = 0;
  const std::string message = storage_error([&] { db->exec("SELECT pg_sleep(2)"); }, ms);
  INFO(message);
  CHECK(message.find("SQLSTATE 57014") != std::string::npos);  // query_canceled
  CHECK(ms >= 200);
  CHECK(ms < 450);  // the server's cancellation, before the client's own deadline (+250 ms)
  const std::string backend = db->exec("SELECT pg_backend_pid()").text(0, 0);
  CHECK(db->exec("SELECT pg_backend_pid()").text(0, 0) == backend);  // kept, reused
  CHECK(db->exec("SHOW statement_timeout").text(0, 0) == "200ms");

  // Migrations are not bounded: one that runs 600 ms (three bounds) is applied, and the bound
  // holds again after it, on the server and the client.
  static constexpr db::Migration kSlow[] = {
      {1, "0001_slow", "SELECT pg_sleep(0.6); CREATE TABLE slow (id BIGINT);"}};
  const db::Component slow{"slow", {}, kSlow};
  CHECK(db->migrate({slow}, 1) == 1);
  CHECK(db->exec("SELECT COUNT(*) FROM slow").integer(0, 0) == 0);
  CHECK(db->exec("SHOW statement_timeout").text(0, 0) == "200ms");
  const std::string again = storage_error([&] { db->exec("SELECT pg_sleep(2)"); }, ms);
  CHECK(again.find("SQLSTATE 57014") != std::string::npos);
  CHECK(ms < 450);
}

TEST_CASE("postgres_pool_wait_ms bounds the wait for a pooled connection") {
  OwnPostgres pg;
  auto db = db::Database::open(pg.create_database("bounds_pool"), bounds(0, 200, 1));
  // The pool's one connection held in a transaction until the test lets it go.
  std::mutex mutex;
  std::condition_variable changed;
  bool holding = false, done = false;
  std::thread holder([&] {
    db->transact([&](db::Transaction& tx) {
      tx.exec("SELECT 1");
      std::unique_lock lock(mutex);
      holding = true;
      changed.notify_all();
      changed.wait(lock, [&] { return done; });
    });
  });
  {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return holding; });
  }
  long long ms = 0;
  const std::string message = storage_error([&] { db->exec("SELECT 1"); }, ms);
  CHECK(message ==
        "postgres: none of the pool's 1 connections came free within 200 ms (the "
        "server may have stopped answering)");
  CHECK(ms >= 200);
  CHECK(ms < 1000);
  {
    std::lock_guard lock(mutex);
    done = true;
  }
  changed.notify_all();
  holder.join();
  CHECK(db->exec("SELECT 7").integer(0, 0) == 7);
}

TEST_CASE(
    "a frozen server: calls and ping give up within their bounds, and succeed once it "
    "answers again") {
  OwnPostgres pg;
  auto db = db::Database::open(pg.create_database("bounds_frozen"), bounds(300, 300));
  db->ping(milliseconds(500));
  db->exec("CREATE TABLE t (n bigint)");
  {
    OwnPostgres::Frozen frozen(pg);
    long long ms = 0;
    // The idle connection is taken; its statement gets no answer: 300 ms + 250 ms.
    std::string message = storage_error([&] { db->exec("INSERT INTO t VALUES (1)"); }, ms);
    CHECK(message ==
          "postgres: no answer within 550 ms (the server stopped answering; connection dropped) "
          "in: INSERT INTO t VALUES (1)");
    CHECK(ms >= 550);
    CHECK(ms < 1500);
    // No idle connection left: a new one is opened and gets no answer within the pool wait.
    message = storage_error([&] { db->read("SELECT n FROM t"); }, ms);
    CHECK(message.find("cannot connect to PostgreSQL at") == 0);
    CHECK(message.ends_with(": no answer within 300 ms"));
    CHECK(ms >= 300);
    CHECK(ms < 1000);
    // A transaction: the same bound, and its function never runs.
    bool ran = false;
    storage_error([&] { db->transact([&](db::Transaction&) { ran = true; }); }, ms);
    CHECK_FALSE(ran);
    CHECK(ms < 1000);
    // ping: its own bound, tighter than the pool's.
    message = storage_error([&] { db->ping(milliseconds(100)); }, ms);
    CHECK(message.ends_with(": no answer within 100 ms"));
    CHECK(ms >= 100);
    CHECK(ms < 600);
  }
  // Thawed: the next call succeeds, on a fresh connection.
  const auto thawed = steady_clock::now();
  db->ping(milliseconds(2000));
  // Whether the INSERT ran is unknown, as the error said: it was in the frozen backend's socket,
  // which may run it once resumed, before it finds the client gone.
  CHECK(db->exec("SELECT COUNT(*) FROM t").integer(0, 0) <= 1);
  WARN("after SIGCONT the first ping and SELECT took " << ms_since(thawed) << " ms");
}

}  // namespace
}  // namespace webhooks::test
