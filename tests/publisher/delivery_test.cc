// Delivery over real HTTP on loopback, with a fake clock: wire format, signatures, retries,
// dead-lettering, 410, rotation. Runs on SQLite and PostgreSQL.
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sstream>

#include "fixture.h"
#include "receiver.h"
#include "support/log_capture.h"
#include "webhooks/log.h"
#include "webhooks/rfc3339.h"
#include "webhooks/uuid.h"
#include "webhooks/verifier.h"

namespace webhooks::test {
namespace {

using publisher::TaskState;
using namespace std::chrono_literals;

VerifyResult verify(const Received& r, const std::string& secret, std::int64_t now_seconds) {
  const Verifier verifier({Secret::parse(secret)});
  const std::string id = r.header("webhook-id"), ts = r.header("webhook-timestamp"),
                    sig = r.header("webhook-signature");
  return verifier.verify({id, ts, sig}, r.body, now_seconds);
}

TEST_CASE("a delivery carries the wire format and a valid signature", "[delivery]") {
  PublisherFixture f("wire");
  Receiver receiver;
  const auto endpoint = f.add_endpoint("m1", receiver.url());
  const auto accepted = f.publish("m1", "order.captured", R"({"order_id":"o_1","amount":1250})");
  REQUIRE(accepted.tasks == 1);
  REQUIRE(f.dispatcher.run_once() == 1);

  const auto got = receiver.received();
  REQUIRE(got.size() == 1);
  const Received& r = got[0];
  CHECK(r.header("webhook-id") == accepted.event_id);
  CHECK(r.header("webhook-timestamp") == std::to_string(f.clock.now_seconds()));
  CHECK(is_uuid_v7(r.header("webhook-delivery-id")));
  CHECK(r.header("webhook-event-type") == "order.captured");
  CHECK(r.header("user-agent") == "webhooks-publisher/0.1.0");
  CHECK(r.header("content-type") == "application/json");
  CHECK(verify(r, endpoint.secrets[0].secret, f.clock.now_seconds()));
  const auto body = nlohmann::json::parse(r.body);
  CHECK(body["id"] == accepted.event_id);
  CHECK(body["type"] == "order.captured");
  CHECK(body["timestamp"] == format_rfc3339(f.clock.now_ms()));
  CHECK(body["data"]["amount"] == 1250);

  const auto tasks = f.tasks(accepted.event_id);
  REQUIRE(tasks.size() == 1);
  CHECK(tasks[0].state == TaskState::succeeded);
  const auto attempts = f.store.attempts_of_event(accepted.event_id);
  REQUIRE(attempts.size() == 1);
  CHECK(attempts[0].status == 200);
  CHECK(attempts[0].delivery_id == r.header("webhook-delivery-id"));
  CHECK(f.dispatcher.run_once() == 0);
}

TEST_CASE("500 then 200: retried after the scheduled delay, re-signed at its own time",
          "[delivery]") {
  PublisherFixture f("retry");
  Receiver receiver(statuses({500, 200}));
  const auto endpoint = f.add_endpoint("m1", receiver.url());
  const auto accepted = f.publish("m1", "order.created");
  REQUIRE(f.dispatcher.run_once() == 1);
  auto tasks = f.tasks(accepted.event_id);
  CHECK(tasks[0].state == TaskState::pending);
  CHECK(tasks[0].next_attempt_at == f.clock.now_ms() + 5000);

  f.advance(4999ms);
  CHECK(f.dispatcher.run_once() == 0);  // not due yet
  f.advance(1ms);
  REQUIRE(f.dispatcher.run_once() == 1);
  tasks = f.tasks(accepted.event_id);
  CHECK(tasks[0].state == TaskState::succeeded);

  const auto got = receiver.received();
  REQUIRE(got.size() == 2);
  CHECK(got[0].header("webhook-id") == got[1].header("webhook-id"));
  CHECK(got[0].header("webhook-delivery-id") != got[1].header("webhook-delivery-id"));
  CHECK(std::stoll(got[1].header("webhook-timestamp")) ==
        std::stoll(got[0].header("webhook-timestamp")) + 5);
  CHECK(got[1].header("webhook-timestamp") == std::to_string(f.clock.now_seconds()));
  CHECK(verify(got[1], endpoint.secrets[0].secret, f.clock.now_seconds()));
  CHECK(f.store.attempts_of_event(accepted.event_id).size() == 2);
}

TEST_CASE("an endpoint that always answers 403 gets exactly the maximum attempts, then dead",
          "[delivery]") {
  PublisherFixture f("forbidden");
  Receiver receiver(statuses({403}));
  f.add_endpoint("m1", receiver.url());
  const auto accepted = f.publish("m1", "order.created");
  for (int i = 0; i < 10; ++i) {
    f.dispatcher.run_once();
    f.advance(30s);
  }
  CHECK(receiver.count() == static_cast<std::size_t>(f.policy.max_attempts()));
  CHECK(receiver.count() == 4);
  const auto tasks = f.tasks(accepted.event_id);
  CHECK(tasks[0].state == TaskState::dead);
  CHECK(tasks[0].last_status == 403);
  CHECK(f.store.attempts_of_event(accepted.event_id).size() == 4);
  CHECK(f.metrics.attempts("retryable") == 4);
}

TEST_CASE("the age limit makes a task dead even with attempts left", "[delivery]") {
  PublisherFixture f("age", publisher::RetryPolicy({10min, 10min, 10min}, 15min, 0.0));
  Receiver receiver(statuses({503}));
  f.add_endpoint("m1", receiver.url());
  const auto accepted = f.publish("m1", "order.created");
  REQUIRE(f.dispatcher.run_once() == 1);  // due again at +10 min
  f.advance(10min);
  REQUIRE(f.dispatcher.run_once() == 1);  // next would be at +20 min > 15 min: dead
  CHECK(f.tasks(accepted.event_id)[0].state == TaskState::dead);
  CHECK(receiver.count() == 2);
}

TEST_CASE("Retry-After pushes the next attempt later", "[delivery]") {
  PublisherFixture f("retry-after");
  Receiver receiver([](std::size_t n, const Received&) {
    return n == 0 ? Receiver::Reply{429, {{"Retry-After", "30"}}} : Receiver::Reply{200, {}};
  });
  f.add_endpoint("m1", receiver.url());
  const auto accepted = f.publish("m1", "order.created");
  const auto start = f.clock.now_ms();
  REQUIRE(f.dispatcher.run_once() == 1);
  CHECK(f.tasks(accepted.event_id)[0].next_attempt_at == start + 30'000);
}

TEST_CASE("410 disables the endpoint; its tasks wait and resume when it is enabled", "[delivery]") {
  PublisherFixture f("gone");
  Receiver receiver(statuses({410, 200}));
  const auto endpoint = f.add_endpoint("m1", receiver.url());
  const auto accepted = f.publish("m1", "order.created");
  const LogCapture logs;
  REQUIRE(f.dispatcher.run_once() == 1);
  auto stored = f.store.find_endpoint(endpoint.id);
  CHECK_FALSE(stored->enabled);
  CHECK(stored->disabled_reason == "410 Gone");
  CHECK(f.store.count_disabled_endpoints() == 1);
  CHECK(logs.lines("endpoint_disabled") ==
        std::vector<nlohmann::json>{{{"level", "warning"},
                                     {"event", "endpoint_disabled"},
                                     {"endpoint_id", endpoint.id},
                                     {"reason", "410 Gone"}}});

  f.advance(1min);
  CHECK(f.dispatcher.run_once() == 0);  // waits while disabled
  CHECK(f.tasks(accepted.event_id)[0].state == TaskState::pending);
  REQUIRE(f.store.set_enabled(endpoint.id, true, "", f.clock.now_ms()));
  REQUIRE(f.dispatcher.run_once() == 1);
  CHECK(f.tasks(accepted.event_id)[0].state == TaskState::succeeded);
  CHECK(receiver.count() == 2);
}

TEST_CASE("an endpoint failing continuously for the configured period is disabled", "[delivery]") {
  PublisherFixture f("auto-disable", [](publisher::Options& o) { o.disable_after = 1min; });
  Receiver receiver(statuses({500}));
  const auto endpoint = f.add_endpoint("m1", receiver.url());
  publisher::Dispatcher& dispatcher = f.dispatcher;
  f.publish("m1", "order.created");
  REQUIRE(dispatcher.run_once() == 1);  // failing since now
  CHECK(f.store.find_endpoint(endpoint.id)->failing_since == f.clock.now_ms());
  f.advance(30s);
  f.publish("m1", "order.created");
  dispatcher.run_until_idle();
  CHECK(f.store.find_endpoint(endpoint.id)->enabled);
  f.advance(31s);
  f.publish("m1", "order.created");
  const LogCapture logs;
  dispatcher.run_until_idle();
  const auto stored = f.store.find_endpoint(endpoint.id);
  CHECK_FALSE(stored->enabled);
  CHECK(stored->disabled_reason == "failing continuously");
  // The line docs/operations.md lists, as for a 410 and a manual disable; once.
  CHECK(logs.lines("endpoint_disabled") ==
        std::vector<nlohmann::json>{{{"level", "warning"},
                                     {"event", "endpoint_disabled"},
                                     {"endpoint_id", endpoint.id},
                                     {"reason", "failing continuously"}}});
}

TEST_CASE("an operator-disabled endpoint's tasks wait and resume on enable", "[delivery]") {
  PublisherFixture f("disabled");
  Receiver receiver;
  const auto endpoint = f.add_endpoint("m1", receiver.url());
  const auto accepted = f.publish("m1", "order.created");
  REQUIRE(f.store.set_enabled(endpoint.id, false, "maintenance", f.clock.now_ms()));
  CHECK(f.dispatcher.run_once() == 0);
  CHECK(receiver.count() == 0);
  REQUIRE(f.store.set_enabled(endpoint.id, true, "", f.clock.now_ms()));
  CHECK(f.dispatcher.run_once() == 1);
  CHECK(receiver.count() == 1);
  CHECK(f.tasks(accepted.event_id)[0].state == TaskState::succeeded);
}

TEST_CASE("a rotated endpoint gets two valid signatures until the grace period ends",
          "[delivery]") {
  PublisherFixture f("rotation");
  Receiver receiver;
  const auto endpoint = f.add_endpoint("m1", receiver.url());
  const std::string old_secret = endpoint.secrets[0].secret;
  const std::string new_secret = Secret::generate().to_string();
  REQUIRE(f.store.rotate_secret(endpoint.id, new_secret, f.clock.now_ms() + 3'600'000,
                                f.clock.now_ms()));
  f.publish("m1", "order.created");
  REQUIRE(f.dispatcher.run_once() == 1);
  auto got = receiver.received();
  const std::string sig = got[0].header("webhook-signature");
  CHECK(std::count(sig.begin(), sig.end(), ' ') == 1);
  CHECK(verify(got[0], old_secret, f.clock.now_seconds()));
  CHECK(verify(got[0], new_secret, f.clock.now_seconds()));

  f.advance(std::chrono::hours(1));  // grace over: only the new secret signs
  f.publish("m1", "order.created");
  REQUIRE(f.dispatcher.run_once() == 1);
  got = receiver.received();
  CHECK(got[1].header("webhook-signature").find(' ') == std::string::npos);
  CHECK(verify(got[1], new_secret, f.clock.now_seconds()));
  CHECK_FALSE(verify(got[1], old_secret, f.clock.now_seconds()));
}

}  // namespace
}  // namespace webhooks::test
