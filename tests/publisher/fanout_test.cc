// Fan-out, filters, idempotent ingest, replay and recovery. Runs on SQLite and PostgreSQL.
#include <array>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "fixture.h"
#include "receiver.h"

namespace webhooks::test {
namespace {

using publisher::TaskState;
using publisher::Trigger;
using namespace std::chrono_literals;

TEST_CASE("fan-out never crosses merchants; filters select types", "[fanout]") {
  PublisherFixture f("fanout");
  Receiver m1_all, m1_orders, m1_exact, m2_all;
  f.add_endpoint("m1", m1_all.url());
  f.add_endpoint("m1", m1_orders.url(), {"order.*"});
  f.add_endpoint("m1", m1_exact.url(), {"payout.created"});
  f.add_endpoint("m2", m2_all.url());

  CHECK(f.publish("m1", "order.created").tasks == 2);
  CHECK(f.publish("m1", "payout.created").tasks == 2);
  CHECK(f.publish("m1", "refund.created").tasks == 1);
  CHECK(f.publish("m3", "order.created").tasks == 0);
  CHECK(f.dispatcher.run_until_idle() == 5);
  CHECK(m1_all.count() == 3);  // empty filter: every type
  CHECK(m1_orders.count() == 1);
  CHECK(m1_exact.count() == 1);
  CHECK(m2_all.count() == 0);
  for (const auto& r : m1_orders.received())
    CHECK(r.header("webhook-event-type") == "order.created");
}

TEST_CASE("filter patterns", "[fanout]") {
  using publisher::filter_matches;
  CHECK(filter_matches({}, "anything"));
  CHECK(filter_matches({"order.*"}, "order.captured"));
  CHECK(filter_matches({"order.*"}, "order.refund.created"));
  CHECK_FALSE(filter_matches({"order.*"}, "order"));
  CHECK_FALSE(filter_matches({"order.*"}, "orders.created"));
  CHECK(filter_matches({"a.b", "c.*"}, "a.b"));
  CHECK_FALSE(filter_matches({"a.b"}, "a.bc"));
  CHECK(filter_matches({"*"}, "x"));
}

TEST_CASE("a retried ingest is a replay with the same event_id", "[ingest]") {
  PublisherFixture f("ingest");
  Receiver receiver;
  f.add_endpoint("m1", receiver.url());
  const std::string body = R"({"merchant_id":"m1","type":"order.created","data":{"id":"o_1"}})";
  const auto first = f.ingest.handle(f.guard, "key-1", body);
  REQUIRE(first.status == 202);
  const auto second = f.ingest.handle(f.guard, "key-1", body);
  REQUIRE(second.status == 202);
  CHECK(first.body == second.body);
  bool replayed = false;
  for (const auto& [name, value] : second.headers) replayed |= name == "Idempotent-Replayed";
  CHECK(replayed);
  const auto event_id = nlohmann::json::parse(first.body)["event_id"].get<std::string>();
  CHECK(nlohmann::json::parse(first.body)["tasks"] == 1);
  CHECK(f.store.list_events({}).size() == 1);
  CHECK(f.metrics.events_accepted() == 1);

  // The same key for another merchant is another scope: a new event.
  const auto other =
      f.ingest.handle(f.guard, "key-1", R"({"merchant_id":"m2","type":"order.created","data":{}})");
  CHECK(other.status == 202);
  CHECK(nlohmann::json::parse(other.body)["event_id"] != event_id);
  // The same key with another body: 422.
  const auto reused = f.ingest.handle(
      f.guard, "key-1", R"({"merchant_id":"m1","type":"order.created","data":{"id":"o_2"}})");
  CHECK(reused.status == 422);
  // Bad bodies.
  CHECK(f.ingest.handle(f.guard, "k", "not json").status == 400);
  CHECK(f.ingest.handle(f.guard, "k", R"({"merchant_id":"m1","type":"x"})").status == 400);
  CHECK(f.ingest.handle(f.guard, std::nullopt, body).status == 400);
  CHECK(f.dispatcher.run_until_idle() == 1);
  CHECK(receiver.count() == 1);
}

TEST_CASE("ingest reads its body once: each refusal's exact answer, in order", "[ingest]") {
  PublisherFixture f("ingest_refusals");
  f.add_endpoint("m1", "http://127.0.0.1:9/a");
  const auto error = [](const idempotency::Response& r) {
    const auto body = nlohmann::json::parse(r.body);
    return std::to_string(r.status) + " " + body["error"]["code"].get<std::string>() + ": " +
           body["error"]["message"].get<std::string>();
  };
  // The body is checked before the key, the key before the fingerprint's duplicate names.
  const std::vector<std::array<std::string, 3>> refusals = {
      {"k", "[1]", "400 invalid_json: the body must be a JSON object"},
      {"k", R"({"merchant_id":"","type":"t","data":{}})",
       "400 invalid_request: merchant_id must be a non-empty string without NUL characters"},
      {"k", R"({"merchant_id":"m1","type":1,"data":{}})",
       "400 invalid_request: type must be 1 to 255 printable ASCII characters without spaces"},
      {"k", R"({"merchant_id":"m1","type":"t","data":[]})",
       "400 invalid_request: data must be a JSON object"},
      {"k", R"({"merchant_id":"m1","type":"t","data":{},"ordering_key":7})",
       "400 invalid_request: ordering_key must be a string"},
      {"", R"({"merchant_id":"m1","type":"t"})", "400 invalid_request: data must be a JSON object"},
      {"", R"({"merchant_id":"m1","type":"t","data":{}})",
       "400 idempotency_key_invalid: Idempotency-Key is empty"},
      {"k", R"({"merchant_id":"m1","type":"t","data":{"a":1,"a":2}})",
       "400 invalid_json: invalid JSON: duplicate object member name"},
  };
  for (const auto& [key, body, expected] : refusals) {
    CHECK(error(f.ingest.handle(f.guard, key, body)) == expected);
  }
  CHECK(f.store.list_events({}).empty());
  // A null ordering key is none; the strings are read unescaped, the data compact as written.
  const auto accepted = f.ingest.handle(
      f.guard, "k",
      R"({ "merchant_id" : "m\u0031", "type":"order.created", "ordering_key": null,)"
      R"( "data" : { "amount" : 1.50 } })");
  REQUIRE(accepted.status == 202);
  const auto events = f.store.list_events({});
  REQUIRE(events.size() == 1);
  CHECK(events[0].merchant_id == "m1");
  CHECK(events[0].ordering_key == "");
  CHECK(events[0].idempotency_key == "k");
  CHECK(events[0].payload == R"({"amount":1.50})");
}

TEST_CASE("replay keeps event_id, makes a new delivery_id and keeps the history", "[replay]") {
  PublisherFixture f("replay");
  Receiver receiver;
  f.add_endpoint("m1", receiver.url());
  const auto accepted = f.publish("m1", "order.created");
  REQUIRE(f.dispatcher.run_once() == 1);
  f.advance(1min);
  CHECK(f.store.replay(accepted.event_id, "", f.clock.now_ms()) == 1);
  REQUIRE(f.dispatcher.run_once() == 1);
  const auto got = receiver.received();
  REQUIRE(got.size() == 2);
  CHECK(got[1].header("webhook-id") == accepted.event_id);
  CHECK(got[1].header("webhook-delivery-id") != got[0].header("webhook-delivery-id"));
  CHECK(got[1].header("webhook-timestamp") == std::to_string(f.clock.now_seconds()));
  const auto attempts = f.store.attempts_of_event(accepted.event_id);
  REQUIRE(attempts.size() == 2);
  CHECK(attempts[0].trigger == Trigger::scheduled);
  CHECK(attempts[1].trigger == Trigger::manual);
  CHECK(f.tasks(accepted.event_id)[0].state == TaskState::succeeded);
}

TEST_CASE("recovery re-queues only the endpoint's dead tasks since the given time", "[replay]") {
  PublisherFixture f("recover", publisher::RetryPolicy({1s}, std::chrono::hours(1), 0.0));
  Receiver failing([](std::size_t, const Received&) { return Receiver::Reply{500, {}}; });
  Receiver other;
  const auto endpoint = f.add_endpoint("m1", failing.url());
  const auto old_event = f.publish("m1", "order.created");
  f.advance(10min);
  const UnixMillis since = f.clock.now_ms();
  const auto new_event = f.publish("m1", "order.created");
  for (int i = 0; i < 3; ++i) {
    f.dispatcher.run_until_idle();
    f.advance(2s);
  }
  REQUIRE(f.tasks(old_event.event_id)[0].state == TaskState::dead);
  REQUIRE(f.tasks(new_event.event_id)[0].state == TaskState::dead);
  const auto survivor = f.publish("m1", "order.created");  // pending, not dead: untouched

  failing.set_script({});  // the endpoint is fixed
  CHECK(f.store.recover(endpoint.id, since, f.clock.now_ms()) == 1);
  CHECK(f.tasks(old_event.event_id)[0].state == TaskState::dead);
  CHECK(f.tasks(new_event.event_id)[0].state == TaskState::pending);
  CHECK(f.tasks(new_event.event_id)[0].next_trigger == Trigger::manual);
  CHECK(f.dispatcher.run_until_idle() == 2);
  CHECK(f.tasks(new_event.event_id)[0].state == TaskState::succeeded);
  CHECK(f.tasks(survivor.event_id)[0].state == TaskState::succeeded);
  CHECK(f.tasks(old_event.event_id)[0].state == TaskState::dead);
}

TEST_CASE("a lapsed claim is taken over; a live one is not", "[claim]") {
  PublisherFixture f("claims");
  Receiver receiver;
  f.add_endpoint("m1", receiver.url());
  const auto accepted = f.publish("m1", "order.created");
  const auto now = f.clock.now_ms();
  REQUIRE(f.store.claim("dead-daemon/1", 10, now, now + 60'000).size() == 1);
  CHECK(f.store.claim("other/1", 10, now, now + 60'000).empty());
  f.advance(59s);
  CHECK(f.dispatcher.run_once() == 0);
  f.advance(1s);
  CHECK(f.dispatcher.run_once() == 1);
  CHECK(receiver.count() == 1);
  CHECK(f.tasks(accepted.event_id)[0].state == TaskState::succeeded);
}

}  // namespace
}  // namespace webhooks::test
