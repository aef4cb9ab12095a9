// webhooks::publisher::Publisher as an embedder uses it: built from default Options, mounted on a
// webhooks::http::Server on loopback, started and stopped; real HTTP both ways, the engine under
// test (SQLite or PostgreSQL).
#include "webhooks/publisher/publisher.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>

#include "receiver.h"
#include "support/test_env.h"
#include "webhooks/error.h"
#include "webhooks/http_server.h"
#include "webhooks/publisher/store.h"
#include "webhooks/secret.h"
#include "webhooks/verifier.h"

namespace webhooks::test {
namespace {

using nlohmann::json;
constexpr const char* kToken = "embed-token";

// A Publisher mounted on a bound server that listens on its own thread until destroyed.
struct Served {
  explicit Served(const publisher::Options& options) : publisher(options) {
    publisher.mount(server);
    port = http::bind_server(server, "127.0.0.1", 0, options.server);
    thread = std::thread([this] { server.listen_after_bind(); });
  }
  ~Served() {
    http::stop_server(server, port);  // the server first, then the Publisher (publisher.h)
    thread.join();
  }
  httplib::Result post(const std::string& path, const json& body, const std::string& key = "") {
    httplib::Client client("127.0.0.1", port);
    httplib::Headers headers{{"Authorization", std::string("Bearer ") + kToken}};
    if (!key.empty()) headers.emplace("Idempotency-Key", key);
    return client.Post(path.c_str(), headers, body.dump(), "application/json");
  }

  publisher::Publisher publisher;
  http::Server server;
  int port = 0;
  std::thread thread;
};

// The defaults, but for the three an embedder on loopback must set: where the database is, the
// admin token (without one every route but /healthz and /metrics answers 401), and loopback
// endpoints (refused by default: ssrf_guard.h).
publisher::Options embedded_options(const std::string& label) {
  publisher::Options options;
  options.database = database_target(label);
  options.admin_token = kToken;
  options.allow_private_networks = true;
  return options;
}

TEST_CASE("a Publisher from default Options ingests over HTTP and delivers to a receiver",
          "[publisher]") {
  std::promise<void> arrived;
  Receiver receiver([&arrived](std::size_t n, const Received&) {
    if (n == 0) arrived.set_value();
    return Receiver::Reply{200, {}};
  });
  Served served(embedded_options("embedded"));
  publisher::Publisher& publisher = served.publisher;

  const auto created =
      served.post("/v1/endpoints", {{"merchant_id", "m1"}, {"url", receiver.url()}});
  REQUIRE(created);
  REQUIRE(created->status == 201);
  const std::string secret = json::parse(created->body)["secret"];
  const auto accepted = served.post(
      "/v1/events", {{"merchant_id", "m1"}, {"type", "order.created"}, {"data", {{"a", 1}}}},
      "key-1");
  REQUIRE(accepted);
  REQUIRE(accepted->status == 202);
  const std::string event_id = json::parse(accepted->body)["event_id"];

  publisher.start();
  // Bounded, not timed: the test fails (rather than hangs) if nothing arrives in 30 s.
  REQUIRE(arrived.get_future().wait_for(std::chrono::seconds(30)) == std::future_status::ready);
  publisher.stop();  // the batch in flight finishes and is recorded before stop() returns

  const std::vector<Received> got = receiver.received();
  REQUIRE(got.size() == 1);
  CHECK(got[0].header("webhook-id") == event_id);
  CHECK(got[0].header("webhook-event-type") == "order.created");
  CHECK(json::parse(got[0].body)["data"] == json{{"a", 1}});
  const Verifier verifier({Secret::parse(secret)});
  const std::string id = got[0].header("webhook-id"), ts = got[0].header("webhook-timestamp"),
                    sig = got[0].header("webhook-signature");
  CHECK(verifier.verify({id, ts, sig}, got[0].body, std::stoll(ts)).status == VerifyStatus::ok);

  const auto tasks = publisher.store().tasks_of_event(event_id);
  REQUIRE(tasks.size() == 1);
  CHECK(tasks[0].state == publisher::TaskState::succeeded);
  const auto attempts = publisher.store().attempts_of_event(event_id);
  REQUIRE(attempts.size() == 1);
  CHECK(attempts[0].status == 200);
  CHECK(attempts[0].error == publisher::TransportError::none);
  CHECK(attempts[0].error_message.empty());
}

TEST_CASE("events ingested from many connections at once are all delivered by wakes alone",
          "[publisher]") {
  // With an hour between polls only wake() makes a worker claim. Wakes that come while a claim
  // is already promised are not signalled (dispatcher.h): the promised claim must see them all.
  constexpr int kThreads = 8, kEach = 25;
  std::promise<void> all_arrived;
  Receiver receiver([&all_arrived](std::size_t n, const Received&) {
    if (n + 1 == kThreads * kEach) all_arrived.set_value();
    return Receiver::Reply{200, {}};
  });
  publisher::Options options = embedded_options("wakes");
  options.poll_interval = std::chrono::hours(1);
  Served served(options);
  const auto created =
      served.post("/v1/endpoints", {{"merchant_id", "m1"}, {"url", receiver.url()}});
  REQUIRE(created);
  REQUIRE(created->status == 201);
  served.publisher.start();

  std::vector<std::thread> senders;
  std::atomic<int> accepted{0};
  for (int t = 0; t < kThreads; ++t) {
    senders.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        const auto r = served.post(
            "/v1/events", {{"merchant_id", "m1"}, {"type", "order.created"}, {"data", {{"i", i}}}},
            "wake-" + std::to_string(t) + "-" + std::to_string(i));
        if (r && r->status == 202) ++accepted;
      }
    });
  }
  for (std::thread& s : senders) s.join();
  REQUIRE(accepted.load() == kThreads * kEach);
  // Bounded, not timed: the test fails (rather than hangs) if a wake was lost.
  REQUIRE(all_arrived.get_future().wait_for(std::chrono::seconds(30)) == std::future_status::ready);
  served.publisher.stop();
  CHECK(receiver.count() == static_cast<std::size_t>(kThreads * kEach));
}

TEST_CASE("the admin token's scheme is case-insensitive (RFC 9110, section 11.1)", "[publisher]") {
  Served served(embedded_options("bearer-case"));
  httplib::Client client("127.0.0.1", served.port);
  const auto status = [&](const std::string& authorization) {
    const auto res = client.Get("/v1/endpoints?merchant_id=m1", {{"Authorization", authorization}});
    return res ? res->status : 0;
  };
  CHECK(status(std::string("Bearer ") + kToken) == 200);
  CHECK(status(std::string("bearer ") + kToken) == 200);  // before: 401
  CHECK(status(std::string("BEARER  ") + kToken + " ") == 200);
  CHECK(status(std::string("Basic ") + kToken) == 401);
  CHECK(status(std::string("Bearer") + kToken) == 401);
  CHECK(status(std::string("Bearer ") + kToken + "x") == 401);
}

TEST_CASE("an endpoint answering NUL and non-UTF-8 bytes: the attempt is recorded, as U+FFFD",
          "[publisher]") {
  httplib::Server endpoint;
  endpoint.Post("/hook", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(std::string("ok\0\xff\xc3 done", 10), "text/plain");
  });
  const int port = http::bind_server(endpoint, "127.0.0.1", 0);
  std::thread serving([&] { endpoint.listen_after_bind(); });
  {
    Served served(embedded_options("storable-snippet"));
    const auto created = served.post(
        "/v1/endpoints",
        {{"merchant_id", "m1"}, {"url", "http://127.0.0.1:" + std::to_string(port) + "/hook"}});
    REQUIRE(created);
    REQUIRE(created->status == 201);
    const auto accepted = served.post(
        "/v1/events", {{"merchant_id", "m1"}, {"type", "order.created"}, {"data", {{"a", 1}}}},
        "key-snippet");
    REQUIRE(accepted);
    const std::string event_id = json::parse(accepted->body)["event_id"];
    served.publisher.start();
    // Bounded, not timed: at most 30 s for the attempt to be recorded.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (served.publisher.store().attempts_of_event(event_id).empty() &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    served.publisher.stop();
    const auto attempts = served.publisher.store().attempts_of_event(event_id);
    REQUIRE(attempts.size() == 1);
    CHECK(attempts[0].status == 200);
    CHECK(attempts[0].response_snippet == "ok\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD done");
    CHECK(served.publisher.store().tasks_of_event(event_id)[0].state ==
          publisher::TaskState::succeeded);
  }
  endpoint.stop();
  serving.join();
}

TEST_CASE("stop() is idempotent and a stopped Publisher does not start again", "[publisher]") {
  publisher::Publisher publisher(embedded_options("lifecycle"));
  publisher.start();
  publisher.start();  // running: nothing happens
  publisher.stop();
  publisher.stop();  // stopped: nothing happens
  try {
    publisher.start();
    FAIL("start() after stop() did not throw");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::invalid_argument);
    CHECK(std::string(e.what()) ==
          "Publisher::start: this publisher was stopped; build a new one to start again");
  }
  publisher.stop();
}

TEST_CASE("a Publisher refuses options outside their domain, naming the field", "[publisher]") {
  publisher::Options options = embedded_options("refused");
  options.workers = 0;
  try {
    publisher::Publisher publisher(options);
    FAIL("workers = 0 was accepted");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::invalid_argument);
    CHECK(std::string(e.what()) == "publisher options: workers must be from 1 to 256, not 0");
  }
  options.workers = 4;
  options.delivery_lease = std::chrono::seconds(15);  // the default batch needs 4 rounds of 15 s
  CHECK_THROWS_WITH(publisher::Publisher(options),
                    "publisher options: delivery_lease (15000 ms) must be longer than timeout "
                    "(15000 ms) times the 4 round(s) a batch may need");
}

}  // namespace
}  // namespace webhooks::test
