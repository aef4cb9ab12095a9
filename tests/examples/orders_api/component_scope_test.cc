// One key space per component (issue 27, item 6): orders-api and webhooks-publisherd on one
// database, both scoping Idempotency-Key by merchant, each keep their own keys; records made
// before the upgrade move to their component's scope, so a retry across the upgrade replays.
// Real processes on SQLite and PostgreSQL (WEBHOOKS_TEST_ENGINE).
#include <signal.h>

#include <catch2/catch.hpp>

#include "harness.h"
#include "support/test_env.h"
#include "webhooks/clock.h"
#include "webhooks/fingerprint.h"
#include "webhooks/idempotency/schema.h"
#include "webhooks/idempotency/store.h"

using nlohmann::json;
using webhooks::test::Answer;
using webhooks::test::Stack;
using Process = webhooks::launcher::ChildProcess;

namespace {

constexpr const char* kScopeToken = "scope-test-token";
constexpr const char* kEvent =
    R"({"merchant_id":"m1","type":"order.created","data":{"id":"ord_1","amount":100}})";
constexpr const char* kOrder = R"({"amount":100,"currency":"EUR","reference":"r1"})";

// webhooks-publisherd on `db`, in `dir`.
std::unique_ptr<Process> start_publisher(const std::string& db, const std::string& dir) {
  return std::make_unique<Process>(
      "webhooks-publisherd",
      std::vector<std::string>{"--listen", "127.0.0.1:0", "--db", db, "--admin-token", kScopeToken,
                               "--log-level", "warn"},
      dir);
}

// POST /v1/events with `key`: status, Idempotent-Replayed and body.
std::string publish(int port, const std::string& key) {
  httplib::Client client("127.0.0.1", port);
  client.set_bearer_token_auth(kScopeToken);
  const auto res =
      client.Post("/v1/events", {{"Idempotency-Key", key}}, kEvent, "application/json");
  REQUIRE(res);
  return std::to_string(res->status) + " " + res->get_header_value("Idempotent-Replayed") + " " +
         res->body;
}

std::vector<std::string> scopes(webhooks::db::Database& db) {
  const auto rows =
      db.exec("SELECT scope || ' ' || idempotency_key FROM idempotency_records ORDER BY 1");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < rows.size(); ++i) out.push_back(rows.text(i, 0));
  return out;
}

}  // namespace

TEST_CASE("orders-api and the publisher on one database: one merchant's key is two requests") {
  Stack s;
  s.start_api();
  auto publisher = start_publisher(s.orders_db, s.dir);
  const int port = publisher->wait_listening();

  const Answer order = s.post("/orders", "shared-key", kOrder);
  CHECK(order.status == 201);
  const std::string accepted = publish(port, "shared-key");  // before: 422 idempotency_key_reused
  CHECK(accepted.starts_with("202  {\"event_id\":"));
  // Each retry is replayed by its own component.
  const Answer order_again = s.post("/orders", "shared-key", kOrder);
  CHECK(order_again.status == 201);
  CHECK(order_again.header("Idempotent-Replayed") == "true");
  CHECK(order_again.body == order.body);
  CHECK(publish(port, "shared-key") == "202 true " + accepted.substr(5));
  CHECK(scopes(s.db()) ==
        std::vector<std::string>{"orders-api:m1 shared-key", "publisher:m1 shared-key"});
  CHECK(publisher->kill_and_wait(SIGTERM) == 0);
}

TEST_CASE("records made before the upgrade move to their component's scope and replay") {
  Stack s;
  {
    // The database as the previous version left it: records scoped by the merchant alone.
    std::shared_ptr<webhooks::db::Database> db = webhooks::db::Database::open(s.orders_db);
    db->migrate({webhooks::idempotency::schema()}, 1000);
    webhooks::idempotency::Store store(db);
    const auto record = [&](const char* key, const char* method, const char* path,
                            const std::string& body, int status, const std::string& answer) {
      const auto now = webhooks::system_clock().now_ms();
      const auto begun = store.begin("m1", key, webhooks::request_fingerprint(method, path, body),
                                     now, std::string(method) + " " + path);
      REQUIRE(begun.outcome == webhooks::idempotency::BeginOutcome::acquired);
      REQUIRE(store.complete(begun.lease, {status, {}, answer}, now));
    };
    record("k-event", "POST", "/v1/events", kEvent, 202,
           R"({"event_id":"evt_before_upgrade","tasks":0})");
    record("k-order", "POST", "/orders", kOrder, 201, R"({"id":"ord_before_upgrade"})");
    record("k-cart", "POST", "/carts", "{}", 201, R"({"id":"cart_1"})");  // another application
  }
  s.start_api();
  auto publisher = start_publisher(s.orders_db, s.dir);
  const int port = publisher->wait_listening();

  CHECK(publish(port, "k-event") == R"(202 true {"event_id":"evt_before_upgrade","tasks":0})");
  const Answer order = s.post("/orders", "k-order", kOrder);
  CHECK(order.status == 201);
  CHECK(order.header("Idempotent-Replayed") == "true");
  CHECK(order.body == R"({"id":"ord_before_upgrade"})");
  CHECK(scopes(s.db()) ==
        std::vector<std::string>{"m1 k-cart", "orders-api:m1 k-order", "publisher:m1 k-event"});
  CHECK(s.count("SELECT COUNT(*) FROM orders") == 0);  // replayed, never made again
  CHECK(publisher->kill_and_wait(SIGTERM) == 0);
}
