// POST /orders (record, order and outbox row in one transaction) while another request with the
// same key runs, after a crash inside the transaction, under 50 concurrent identical requests,
// and with the database connection broken inside the transaction.
#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>
#include <vector>

#include "harness.h"
#include "orders_checks.h"

using namespace std::chrono;
using webhooks::test::Answer;
using webhooks::test::Stack;

namespace {

const std::string kConcurrentOrder = R"({"amount":2500,"currency":"USD","reference":"inv-9"})";

}  // namespace

TEST_CASE("an operation three leases long: every retry meanwhile gets 409, it runs once") {
  Stack s;
  std::vector<std::string> flags;
  // On SQLite the hook sleeps inside the transaction, holding its thread (a fiber there does not
  // suspend); with fiber workers that thread is also the event loop of every other connection
  // dealt to it, so a retry on one of those would wait for the operation (and be answered its
  // replay). Thread workers answer every retry meanwhile. On PostgreSQL the transaction runs off
  // the fiber threads: the default fiber workers.
  if (s.db().engine() == webhooks::db::Engine::sqlite) flags = {"--fiber-threads", "0"};
  flags.insert(flags.end(), {"--lease", "1s", "--operation-delay", "3500ms"});
  s.start_api(flags);
  std::optional<Answer> first;
  const auto started = steady_clock::now();
  std::thread slow([&] { first = s.try_post("/orders", "slow-1", kConcurrentOrder); });
  int busy = 0;
  for (int i = 1; i <= 3; ++i) {
    std::this_thread::sleep_until(started + seconds(i));  // a retry every second
    const Answer retry = s.post("/orders", "slow-1", kConcurrentOrder);
    check_error(retry, 409, "idempotency_key_in_use");
    CHECK(retry.header("Retry-After") == "1");
    if (retry.status == 409) ++busy;
  }
  slow.join();
  REQUIRE(first);
  CHECK(first->status == 201);
  CHECK(busy == 3);
  const Answer after = s.post("/orders", "slow-1", kConcurrentOrder);
  check_replayed(after, 201, first->body);
  CHECK(s.count("SELECT COUNT(*) FROM orders") == 1);
  completed_record(s, "slow-1");
}

TEST_CASE(
    "SIGKILL inside the order's transaction leaves nothing: the retry after the restart creates "
    "the order at once, once") {
  Stack s;
  s.start_api({"--lease", "2s", "--operation-delay", "60s"});
  std::optional<Answer> lost;
  std::thread doomed([&] { lost = s.try_post("/orders", "crash-1", kConcurrentOrder); });
  // The operation logs `operation_delay` inside its transaction, after the record's INSERT.
  const auto deadline = steady_clock::now() + seconds(10);
  while (s.api->err().find("\"operation_delay\"") == std::string::npos &&
         steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  REQUIRE(s.api->err().find("\"operation_delay\"") != std::string::npos);
  // The record is begun in the same transaction as the order: nothing is visible meanwhile.
  CHECK_FALSE(s.record("crash-1"));
  const int status = s.api->kill_and_wait(SIGKILL);
  CHECK(WIFSIGNALED(status));
  doomed.join();
  CHECK_FALSE(lost);  // the client saw the connection drop, no answer
  CHECK_FALSE(s.record("crash-1"));
  CHECK(s.count("SELECT COUNT(*) FROM orders") == 0);
  CHECK(s.count("SELECT COUNT(*) FROM outbox") == 0);

  // No record and no lease survived the process: the first retry runs the operation.
  s.start_api({"--lease", "2s"});
  const Answer retry = s.post("/orders", "crash-1", kConcurrentOrder);
  check_fresh(retry, 201);
  CHECK(s.count("SELECT COUNT(*) FROM orders") == 1);
  CHECK(s.count("SELECT COUNT(*) FROM outbox WHERE event_type = 'order.created'") == 1);
  completed_record(s, "crash-1");
  const Answer replay = s.post("/orders", "crash-1", kConcurrentOrder);
  CHECK(replay.header("Idempotent-Replayed") == "true");
  CHECK(replay.body == retry.body);
}

TEST_CASE("50 concurrent identical requests: one order; every answer 201 with one body, or 409") {
  Stack s;
  s.start_api({"--operation-delay", "100ms"});
  constexpr int kClients = 50;
  std::vector<std::optional<Answer>> answers(kClients);
  s.post_at_once("/orders", "burst-1", kConcurrentOrder, answers);

  int created = 0, fresh = 0, busy = 0;
  std::string body;
  for (const auto& a : answers) {
    REQUIRE(a);
    if (a->status == 201) {
      ++created;
      if (a->header("Idempotent-Replayed") != "true") ++fresh;
      if (body.empty()) body = a->body;
      CHECK(a->body == body);
    } else {
      check_error(*a, 409, "idempotency_key_in_use");
      CHECK(a->header("Retry-After") == "1");  // the in-process claim of the running request
      ++busy;
    }
  }
  CHECK(created + busy == kClients);
  CHECK(fresh == 1);
  CHECK(s.count("SELECT COUNT(*) FROM orders") == 1);
  CHECK(s.count("SELECT COUNT(*) FROM outbox WHERE event_type = 'order.created'") == 1);
}

TEST_CASE("the connection breaks inside the transaction: all or nothing, and the retry succeeds") {
  Stack s;
  // PostgreSQL: the transaction terminates its own backend after writing the order and outbox
  // rows; SQLite: it fails at the same point.
  check_first_transaction_breaks(s, "broken-1", kConcurrentOrder);
  // The record was begun in the broken transaction: it rolled back with the order.
  CHECK_FALSE(s.record("broken-1"));

  const Answer retry = s.post("/orders", "broken-1", kConcurrentOrder);
  check_fresh(retry, 201);
  CHECK(s.count("SELECT COUNT(*) FROM orders") == 1);
  CHECK(s.count("SELECT COUNT(*) FROM outbox WHERE event_type = 'order.created'") == 1);
  const std::string id = retry.json()["id"].get<std::string>();
  CHECK(s.count("SELECT COUNT(*) FROM orders WHERE id = '" + id + "'") == 1);
  const webhooks::idempotency::Record r = completed_record(s, "broken-1");
  REQUIRE(r.response);
  CHECK(r.response->body == retry.body);
  // The pool replaced the broken connection: the next request works too.
  CHECK(s.post("/orders", "broken-2", kConcurrentOrder).status == 201);
}
