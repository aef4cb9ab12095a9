// orders-api when PostgreSQL goes away inside an order's transaction (its idempotency record
// begun, the order not yet written, nothing committed): the database refuses every connection
// (ALTER DATABASE … ALLOW_CONNECTIONS false, its sessions terminated), as during a failover, so the
// transaction holding the record and the order is lost and nothing can be written. PostgreSQL only.
#include <catch2/catch.hpp>
#include <chrono>
#include <optional>
#include <thread>

#include "harness.h"
#include "support/test_env.h"
#include "webhooks/idempotency/store.h"

using namespace std::chrono;
using webhooks::test::Answer;
using webhooks::test::Stack;

namespace {

const std::string kOrder = R"({"amount":2500,"currency":"USD","reference":"inv-9"})";

template <typename F>
bool eventually(F done, seconds limit = seconds(30)) {
  const auto deadline = steady_clock::now() + limit;
  while (steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return done();
}

// Terminates every session of database `name` but the caller's and waits (up to 10 s) until
// they are gone.
void terminate_sessions(webhooks::db::Database& ops, const std::string& name) {
  const auto rows = ops.exec(
      "SELECT pid FROM (SELECT pid, pg_terminate_backend(pid) AS done FROM pg_stat_activity "
      "WHERE datname = $1 AND pid <> pg_backend_pid()) t WHERE done",
      {name});
  std::string pids = "{";
  for (std::size_t r = 0; r < rows.size(); ++r) pids += (r ? "," : "") + rows.text(r, 0);
  pids += "}";
  REQUIRE(eventually(
      [&] {
        return ops.exec("SELECT COUNT(*) FROM pg_stat_activity WHERE pid = ANY($1::int[])", {pids})
                   .integer(0, 0) == 0;
      },
      seconds(10)));
}

}  // namespace

TEST_CASE(
    "the database gone before an order commits: 503 with Retry-After, no record is left, and the "
    "retry with the same key runs at once") {
  Stack s;
  // The operation waits 2 s inside its transaction: the database goes away meanwhile.
  s.start_api({"--operation-delay", "2s"});
  const std::string name = s.orders_db.substr(s.orders_db.rfind('/') + 1);
  const auto ops = webhooks::db::Database::open(webhooks::test::postgres_url());

  std::optional<Answer> first;
  std::thread request([&] { first = s.try_post("/orders", "gone-1", kOrder); });
  // The operation logs `operation_delay` inside its transaction, after the record's INSERT.
  const bool claimed =
      eventually([&] { return s.api->err().find("\"operation_delay\"") != std::string::npos; });
  if (claimed) {
    ops->exec("ALTER DATABASE " + name + " ALLOW_CONNECTIONS false");
    terminate_sessions(*ops, name);
  }
  request.join();
  REQUIRE(claimed);
  REQUIRE(first);
  CHECK(first->status == 503);
  CHECK(first->error_code() == "storage_unavailable");
  CHECK(first->header("Retry-After") == "1");

  ops->exec("ALTER DATABASE " + name + " ALLOW_CONNECTIONS true");
  // The record was begun in the lost transaction: no record, no lease, no order.
  CHECK(s.count("SELECT COUNT(*) FROM idempotency_records") == 0);
  CHECK(s.count("SELECT COUNT(*) FROM orders") == 0);
  const Answer retry = s.post("/orders", "gone-1", kOrder);
  CHECK(retry.status == 201);
  CHECK(retry.header("Idempotent-Replayed") == "");
  CHECK(s.count("SELECT COUNT(*) FROM orders") == 1);
  CHECK(s.count("SELECT COUNT(*) FROM outbox WHERE event_type = 'order.created'") == 1);
  const auto record = s.record("gone-1");  // its answer rendered from the order, as orders-api's
  REQUIRE(record);
  CHECK(record->state == webhooks::idempotency::State::completed);
  CHECK(record->attempts == 1);
  REQUIRE(record->response);
  CHECK(record->response->body == retry.body);
  const Answer replay = s.post("/orders", "gone-1", kOrder);
  CHECK(replay.status == 201);
  CHECK(replay.header("Idempotent-Replayed") == "true");
  CHECK(replay.body == retry.body);
}
