// The outbox relay against a real HTTP server on 127.0.0.1 standing in for the publisher's ingest,
// on the engine named by WEBHOOKS_TEST_ENGINE, with a fake clock.
#include "webhooks/outbox/relay.h"

#include <httplib.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "support/test_env.h"
#include "webhooks/error.h"
#include "webhooks/outbox/enqueue.h"
#include "webhooks/outbox/schema.h"

using namespace webhooks;
using namespace webhooks::outbox;
using namespace std::chrono_literals;

namespace {

struct FakeIngest {
  httplib::Server server;
  std::thread thread;
  int port = 0;
  std::mutex mutex;
  std::vector<std::pair<std::string, nlohmann::json>> received;  // Idempotency-Key, body
  std::vector<std::string> auth;
  std::vector<std::string> traces;  // the traceparent header of each
  std::atomic<int> status{202};

  FakeIngest() {
    server.Post("/v1/events", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(mutex);
      received.emplace_back(req.get_header_value("Idempotency-Key"),
                            nlohmann::json::parse(req.body));
      auth.push_back(req.get_header_value("Authorization"));
      traces.push_back(req.get_header_value("traceparent"));
      res.status = status.load();
      res.set_content("{\"event_id\":\"e\",\"tasks\":1}", "application/json");
    });
    server.set_tcp_nodelay(true);
    port = server.bind_to_any_port("127.0.0.1");
    thread = std::thread([this] { server.listen_after_bind(); });
  }
  ~FakeIngest() {
    server.stop();
    thread.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }
};

struct Fixture {
  FakeClock clock{1'700'000'000'000};
  SeededRandom random{7};
  UuidV7Generator ids{clock};
  std::shared_ptr<db::Database> db = test::open_database("outbox", {schema()});

  std::string enqueue(const std::string& type, const std::string& data) {
    std::string id;
    db->transact([&](db::Transaction& tx) {
      id = outbox::enqueue(tx, ids, "m1", type, data, clock.now_ms());
    });
    return id;
  }
  RelayOptions options(const std::string& url) {
    RelayOptions o;
    o.publisher_url = url;
    o.publisher_token = "admin-token";
    o.initial_backoff = 1000ms;
    return o;
  }
};

}  // namespace

TEST_CASE("each row is posted with its id as Idempotency-Key and marked sent after 202") {
  FakeIngest ingest;
  Fixture f;
  const std::string a = f.enqueue("order.created", "{\"id\":\"o1\",\"amount\":1000}");
  const std::string b = f.enqueue("payout.created", "{\"id\":\"p1\"}");
  Relay relay(f.db, f.clock, f.random, f.options(ingest.url()));
  const auto pass = relay.relay_once();
  CHECK(pass.sent == 2);
  CHECK(pass.failed == 0);
  REQUIRE(ingest.received.size() == 2);
  CHECK(ingest.received[0].first == a);
  CHECK(ingest.received[0].second ==
        nlohmann::json::parse(
            R"({"merchant_id":"m1","type":"order.created","data":{"id":"o1","amount":1000}})"));
  CHECK(ingest.received[1].first == b);
  CHECK(ingest.auth[0] == "Bearer admin-token");
  CHECK(f.db->exec("SELECT COUNT(*) FROM outbox WHERE sent_at = $1", {f.clock.now_ms()})
            .integer(0, 0) == 2);
  CHECK(relay.relay_once().sent == 0);
  CHECK(ingest.received.size() == 2);
}

TEST_CASE("a failed post is retried with backoff, with the same key, until accepted") {
  FakeIngest ingest;
  Fixture f;
  const std::string id = f.enqueue("order.created", "{\"id\":\"o1\"}");
  Relay relay(f.db, f.clock, f.random, f.options(ingest.url()));
  ingest.status = 503;
  CHECK(relay.relay_once().failed == 1);
  const db::Rows row =
      f.db->exec("SELECT attempts, next_attempt_at, last_error, sent_at FROM outbox");
  CHECK(row.integer(0, 0) == 1);
  const std::int64_t wait = row.integer(0, 1) - f.clock.now_ms();
  CHECK(wait >= 800);   // 1 s after the first failure, -20 %
  CHECK(wait <= 1200);  // +20 %
  CHECK(row.text(0, 2).rfind("publisher answered 503", 0) == 0);
  CHECK(row.is_null(0, 3));
  // Not due yet: nothing is posted.
  CHECK(relay.relay_once().sent + relay.relay_once().failed == 0);
  ingest.status = 202;
  f.clock.advance(std::chrono::milliseconds(wait));
  CHECK(relay.relay_once().sent == 1);
  REQUIRE(ingest.received.size() == 2);
  CHECK(ingest.received[0].first == id);
  CHECK(ingest.received[1].first == id);
}

TEST_CASE("a publisher that is down leaves rows unsent, never lost") {
  Fixture f;
  f.enqueue("order.created", "{}");
  Relay relay(f.db, f.clock, f.random, f.options("http://127.0.0.1:1"));
  CHECK(relay.relay_once().failed == 1);
  const db::Rows row = f.db->exec("SELECT attempts, last_error FROM outbox WHERE sent_at IS NULL");
  REQUIRE(row.size() == 1);
  CHECK(row.text(0, 1).rfind("no answer from the publisher", 0) == 0);
}

TEST_CASE("the background relay drains the outbox") {
  FakeIngest ingest;
  Fixture f;
  for (int i = 0; i < 250; ++i) f.enqueue("order.created", "{\"n\":" + std::to_string(i) + "}");
  Relay relay(f.db, f.clock, f.random, f.options(ingest.url()));
  relay.start();
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (f.db->exec("SELECT COUNT(*) FROM outbox WHERE sent_at IS NULL").integer(0, 0) > 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  relay.stop();
  CHECK(f.db->exec("SELECT COUNT(*) FROM outbox WHERE sent_at IS NULL").integer(0, 0) == 0);
  std::lock_guard lock(ingest.mutex);
  CHECK(ingest.received.size() == 250);
  CHECK(ingest.received[249].second["data"]["n"] == 249);
}

TEST_CASE("an unusable URL is refused") {
  Fixture f;
  CHECK_THROWS_AS(Relay(f.db, f.clock, f.random, f.options("not a url")), Error);
}

TEST_CASE("sent rows are purged after sent_retention, in batches; unsent rows never") {
  FakeIngest ingest;
  Fixture f;
  for (int i = 0; i < 7; ++i) f.enqueue("order.created", "{}");
  RelayOptions options = f.options(ingest.url());
  options.sent_retention = 24h;
  options.purge_batch = 3;
  Relay relay(f.db, f.clock, f.random, options);
  REQUIRE(relay.relay_once().sent == 7);
  f.clock.advance(1h);
  f.enqueue("order.created", "{}");  // sent an hour later
  REQUIRE(relay.relay_once().sent == 1);
  ingest.status = 503;
  f.enqueue("order.created", "{}");  // never sent
  REQUIRE(relay.relay_once().failed == 1);
  const auto count = [&] { return f.db->exec("SELECT COUNT(*) FROM outbox").integer(0, 0); };
  f.clock.advance(23h);  // the first 7 were sent exactly 24 h ago: kept
  CHECK(relay.purge_sent() == 0);
  f.clock.advance(1ms);
  CHECK(relay.purge_sent() == 7);  // batches of 3, 3, 1
  CHECK(count() == 2);
  f.clock.advance(10 * 24h);
  CHECK(relay.purge_sent() == 1);
  CHECK(f.db->exec("SELECT COUNT(*) FROM outbox WHERE sent_at IS NULL").integer(0, 0) == 1);
  options.sent_retention = 0ms;  // 0: kept forever
  Relay keeper(f.db, f.clock, f.random, options);
  CHECK(keeper.purge_sent() == 0);
}

TEST_CASE("an ordering key's rows are posted in order: a failed one holds the later ones") {
  FakeIngest ingest;
  Fixture f;
  const auto enqueue_keyed = [&f](const std::string& key, const std::string& data) {
    std::string id;
    outbox::EventContext context;
    context.ordering_key = key;
    context.traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    f.db->transact([&](db::Transaction& tx) {
      id = outbox::enqueue(tx, f.ids, "m1", "order.updated", data, f.clock.now_ms(), context);
    });
    return id;
  };
  const std::string a1 = enqueue_keyed("order_A", R"({"n":"a1"})");
  const std::string a2 = enqueue_keyed("order_A", R"({"n":"a2"})");
  const std::string b1 = enqueue_keyed("order_B", R"({"n":"b1"})");
  Relay relay(f.db, f.clock, f.random, f.options(ingest.url()));
  ingest.status = 503;  // a1's post fails: a2 must wait for it, b1 need not
  {
    const auto pass = relay.relay_once();
    CHECK(pass.failed == 2);  // a1 and b1; a2 held in the pass
  }
  ingest.status = 202;
  // a1 is not due yet (its backoff): a2 still waits; b1 is not due either.
  CHECK(relay.relay_once().sent == 0);
  f.clock.advance(2s);
  CHECK(relay.relay_once().sent == 3);
  std::vector<std::string> order;
  for (const auto& [key, body] : ingest.received) order.push_back(key);
  CHECK(order == std::vector<std::string>{a1, b1, a1, a2, b1});
  // The key goes in the body, the trace context as headers.
  CHECK(
      ingest.received[3].second ==
      nlohmann::json::parse(
          R"({"merchant_id":"m1","type":"order.updated","ordering_key":"order_A","data":{"n":"a2"}})"));
  CHECK(ingest.traces[3] == "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
}
