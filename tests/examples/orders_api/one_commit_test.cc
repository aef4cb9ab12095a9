// orders-api's one-commit path: the idempotency record, the order and its outbox row are written
// in one transaction (grouped with concurrent requests'), so no record is ever `in_progress` on
// disk; POST /orders under 30 concurrent identical requests, and PUT /orders/{id} with and
// without an Idempotency-Key.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <set>
#include <thread>

#include "harness.h"
#include "orders_checks.h"

using namespace std::chrono;
using webhooks::test::Answer;
using webhooks::test::Stack;

namespace {

const std::string kOneCommitOrder = R"({"amount":4200,"currency":"EUR","reference":"inv-30"})";

// The answers of concurrent identical POST /orders: 201s (new or replayed) and 409s, each 409
// checked to be idempotency_key_in_use with Retry-After: 1.
struct Tally {
  int created = 0, fresh = 0, busy = 0;
  std::set<std::string> ids, bodies;
};

Tally tally(const std::vector<std::optional<Answer>>& answers) {
  Tally t;
  for (const auto& a : answers) {
    REQUIRE(a);
    if (a->status == 201) {
      ++t.created;
      if (a->header("Idempotent-Replayed") != "true") ++t.fresh;
      t.ids.insert(a->json()["id"].get<std::string>());
      t.bodies.insert(a->body);
    } else {
      check_error(*a, 409, "idempotency_key_in_use");
      CHECK(a->header("Retry-After") == "1");
      ++t.busy;
    }
  }
  return t;
}

}  // namespace

TEST_CASE(
    "30 concurrent identical POST /orders: one order, one outbox row, one completed record never "
    "seen in_progress; every answer the 201 or 409 with Retry-After") {
  Stack s;
  s.start_api();
  constexpr int kClients = 30;
  std::vector<std::optional<Answer>> answers(kClients);
  std::atomic<bool> finished{false}, watching{false};
  // Watches the records table from before the requests start until they are all answered
  // (bounded: at most 60 s).
  long looks = 0, seen_in_progress = 0;
  std::thread watcher([&] {
    webhooks::db::Database& db = s.db();
    const auto deadline = steady_clock::now() + seconds(60);
    do {
      seen_in_progress +=
          db.exec("SELECT COUNT(*) FROM idempotency_records WHERE state = 0")  // 0: in_progress
              .integer(0, 0);
      ++looks;
      watching = true;
    } while (!finished && steady_clock::now() < deadline);
  });
  while (!watching) std::this_thread::yield();
  s.post_at_once("/orders", "same-30", kOneCommitOrder, answers);
  finished = true;
  watcher.join();

  const Tally t = tally(answers);
  const int created = t.created, fresh = t.fresh, busy = t.busy;
  const std::set<std::string>& ids = t.ids;
  const std::set<std::string>& bodies = t.bodies;
  CHECK(created + busy == kClients);
  CHECK(created >= 1);
  CHECK(fresh == 1);
  CHECK(ids.size() == 1);
  CHECK(bodies.size() == 1);
  CHECK(s.count("SELECT COUNT(*) FROM orders") == 1);
  CHECK(s.count("SELECT COUNT(*) FROM orders WHERE idempotency_key = 'same-30'") == 1);
  CHECK(s.count("SELECT COUNT(*) FROM outbox") == 1);
  CHECK(s.count("SELECT COUNT(*) FROM outbox WHERE event_type = 'order.created'") == 1);
  CHECK(s.count("SELECT COUNT(*) FROM idempotency_records") == 1);
  CHECK(looks >= 2);  // at least one look while the requests ran
  CHECK(seen_in_progress == 0);
  check_completed_with(s, "same-30", 201, *bodies.begin());
  // Afterwards the key is replayed, byte for byte.
  const Answer replay = s.post("/orders", "same-30", kOneCommitOrder);
  check_replayed(replay, 201, *bodies.begin());
}

TEST_CASE(
    "a failed order transaction leaves no record, no order and no outbox row; the retry with the "
    "same key creates the order once") {
  Stack s;
  check_first_transaction_breaks(s, "fail-1", kOneCommitOrder);
  CHECK(s.count("SELECT COUNT(*) FROM idempotency_records") == 0);

  const Answer retry = s.post("/orders", "fail-1", kOneCommitOrder);
  check_fresh(retry, 201);
  const Answer again = s.post("/orders", "fail-1", kOneCommitOrder);
  check_replayed(again, 201, retry.body);
  CHECK(s.count("SELECT COUNT(*) FROM orders") == 1);
  CHECK(s.count("SELECT COUNT(*) FROM outbox WHERE event_type = 'order.created'") == 1);
  completed_record(s, "fail-1");
}

TEST_CASE(
    "PUT /orders/{id} with an Idempotency-Key: recorded with the change, replayed, 422 reused") {
  Stack s;
  s.start_api();
  const Answer created = create_order(s, "order-p1", kOneCommitOrder);
  const std::string path = "/orders/" + created.json()["id"].get<std::string>();

  const Answer captured = s.put(path, R"({"status":"captured"})", "key-m1", "capture-p1");
  CHECK(captured.status == 200);
  CHECK(captured.json()["status"] == "captured");
  CHECK(captured.header("Idempotent-Replayed") == "");
  check_completed_with(s, "capture-p1", 200, captured.body);

  // The same request again: the stored answer, no second change.
  const Answer replay = s.put(path, R"({"status":"captured"})", "key-m1", "capture-p1");
  check_replayed(replay, 200, captured.body);
  // The key with another body, or the POST's key on the PUT: 422.
  const Answer other = s.put(path, R"({"status":"cancelled"})", "key-m1", "capture-p1");
  check_error(other, 422, "idempotency_key_reused");
  const Answer crossed = s.put(path, R"({"status":"captured"})", "key-m1", "order-p1");
  check_error(crossed, 422, "idempotency_key_reused");
  // A key that is not one: 400, nothing changed.
  const Answer invalid = s.put(path, R"({"status":"cancelled"})", "key-m1", "\"\"");
  check_error(invalid, 400, "idempotency_key_invalid");
  // A refused move with a key is not final (409): no record, the order stays captured.
  const Answer refused = s.put(path, R"({"status":"cancelled"})", "key-m1", "cancel-p1");
  check_error(refused, 409, "invalid_transition");
  CHECK_FALSE(s.record("cancel-p1"));
  // Without a key, as before: the same status again is 200 without change.
  const Answer unkeyed = s.put(path, R"({"status":"captured"})");
  CHECK(unkeyed.status == 200);
  CHECK(unkeyed.body == captured.body);
  CHECK(s.count("SELECT COUNT(*) FROM outbox WHERE event_type = 'order.captured'") == 1);
  CHECK(s.count("SELECT COUNT(*) FROM idempotency_records") == 2);  // order-p1, capture-p1
  CHECK(s.get(path).json()["status"] == "captured");
}
