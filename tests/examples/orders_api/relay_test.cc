// orders-api with its outbox relay (--publisher-url) in front of a real webhooks-publisherd: every
// order.created reaches the publisher exactly once and is delivered, also when orders-api is
// SIGKILLed in the middle of a load. Same suite on SQLite and PostgreSQL (WEBHOOKS_TEST_ENGINE).
#include <signal.h>

#include <catch2/catch.hpp>
#include <mutex>
#include <set>
#include <thread>

#include "harness.h"
#include "publisher/receiver.h"
#include "support/secret_files.h"
#include "support/test_env.h"

using nlohmann::json;
using webhooks::test::Answer;
using Process = webhooks::launcher::ChildProcess;
using webhooks::test::Received;
using webhooks::test::Receiver;
using webhooks::test::Stack;

namespace {

constexpr const char* kRelayToken = "relay-test-token";

// Waits (real time, bounded) until `done` holds.
template <typename F>
bool eventually(F done, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

// An endpoint of merchant m1 at `url` on the publisher at `publisher_port`.
void create_endpoint(int publisher_port, const std::string& url) {
  httplib::Client admin("127.0.0.1", publisher_port);
  admin.set_bearer_token_auth(kRelayToken);
  const auto created = admin.Post("/v1/endpoints", json{{"merchant_id", "m1"}, {"url", url}}.dump(),
                                  "application/json");
  REQUIRE(created);
  REQUIRE(created->status == 201);
}

// Starts orders-api with its relay to the publisher at `publisher_port`, places `count` orders
// (keys relay-<i>) and SIGKILLs and restarts it halfway; the ids of the orders made.
std::set<std::string> orders_through_a_kill(Stack& s, int publisher_port,
                                            const std::string& token_file, int count) {
  const int kOrders = count;
  const std::vector<std::string> relay = {"--publisher-url",
                                          "http://127.0.0.1:" + std::to_string(publisher_port),
                                          "--publisher-token-file",
                                          token_file,
                                          "--relay-poll",
                                          "20ms",
                                          "--log-level",
                                          "warn"};
  s.start_api(relay);
  std::set<std::string> orders;
  for (int i = 0; i < kOrders; ++i) {
    if (i == kOrders / 2) {  // mid-load, with the relay busy: kill, restart on the same database
      s.api->kill_and_wait(SIGKILL);
      s.start_api(relay);
    }
    const std::string body = R"({"amount":)" + std::to_string(100 + i) +
                             R"(,"currency":"EUR","reference":"r)" + std::to_string(i) + R"("})";
    const Answer answer = s.post("/orders", "relay-" + std::to_string(i), body);
    REQUIRE(answer.status == 201);
    orders.insert(answer.json()["id"].get<std::string>());
  }
  return orders;
}

}  // namespace

TEST_CASE(
    "orders-api SIGKILLed during 2,000 orders: every order.created reaches the publisher "
    "once and is delivered") {
  std::mutex mutex;
  std::set<std::string> delivered_orders;  // data.id of each order.created delivered
  std::size_t deliveries = 0;
  Receiver endpoint([&](std::size_t, const Received& r) {
    const json event = json::parse(r.body);
    std::lock_guard lock(mutex);
    ++deliveries;
    if (event["type"] == "order.created") delivered_orders.insert(event["data"]["id"]);
    return Receiver::Reply{200, {}};
  });

  Stack s;
  const std::string publisher_db = webhooks::test::database_target("relay-publisher");
  // The token reaches both from a file (--admin-token-file, --publisher-token-file), not argv.
  const std::string token_file =
      webhooks::test::write_secret_file(s.dir + "/token", std::string(kRelayToken) + "\n");
  Process publisher("webhooks-publisherd",
                    {"--listen", "127.0.0.1:0", "--db", publisher_db, "--admin-token-file",
                     token_file, "--allow-private-networks", "--retry-schedule", "200ms,200ms,1s",
                     "--poll-interval", "20ms", "--log-level", "warn"},
                    s.dir);
  const int publisher_port = publisher.wait_listening();
  create_endpoint(publisher_port, endpoint.url());

  constexpr int kOrders = 2000;
  const std::set<std::string> orders =
      orders_through_a_kill(s, publisher_port, token_file, kOrders);
  // The key of an order sent before the kill is a replay after it: no second order, no event.
  const Answer again =
      s.post("/orders", "relay-0", R"({"amount":100,"currency":"EUR","reference":"r0"})");
  CHECK(again.status == 201);
  CHECK(again.header("Idempotent-Replayed") == "true");
  REQUIRE(orders.size() == kOrders);

  const bool all_delivered = eventually(
      [&] {
        std::lock_guard lock(mutex);
        return delivered_orders.size() == kOrders;
      },
      std::chrono::seconds(120));
  CHECK(all_delivered);
  {
    std::lock_guard lock(mutex);
    CHECK(delivered_orders == orders);
    CHECK(deliveries == kOrders);  // the endpoint answers 200 at once: one attempt per event
  }
  CHECK(s.count("SELECT COUNT(*) FROM outbox WHERE sent_at IS NULL") == 0);
  CHECK(s.count("SELECT COUNT(*) FROM outbox") == kOrders);
  auto events = webhooks::db::Database::open(publisher_db)
                    ->exec("SELECT COUNT(*) FROM publisher_events WHERE merchant_id = 'm1'");
  CHECK(events.integer(0, 0) == kOrders);  // each outbox row became exactly one event
  CHECK(s.api->kill_and_wait(SIGTERM) == 0);
  CHECK(publisher.kill_and_wait(SIGTERM) == 0);
}
