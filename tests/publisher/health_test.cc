// The warning before an endpoint is disabled: at half of disable_after, once per failing streak
// (the log line endpoint_failing, failing_warned_at), the gauge webhooks_endpoint_failing_seconds,
// and the ops events endpoint.failing and endpoint.disabled delivered signed to --ops-url. Fake
// clock, real HTTP on loopback; runs on SQLite and PostgreSQL.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "fixture.h"
#include "ops/ops_events.h"
#include "receiver.h"
#include "support/log_capture.h"
#include "webhooks/rfc3339.h"
#include "webhooks/verifier.h"

namespace webhooks::test {
namespace {

using namespace std::chrono_literals;

std::optional<std::int64_t> warned_at(db::Database& db, const std::string& endpoint_id) {
  const db::Rows rows =
      db.exec("SELECT failing_warned_at FROM publisher_endpoints WHERE id = $1", {endpoint_id});
  if (rows.is_null(0, 0)) return std::nullopt;
  return rows.integer(0, 0);
}

// One failed attempt of `endpoint` per call: a new event, delivered until idle.
void fail_once(PublisherFixture& f, const std::string& merchant) {
  f.publish(merchant, "order.created");
  f.dispatcher.run_until_idle();
}

nlohmann::json warning(const std::string& endpoint_id, UnixMillis since) {
  return {{"level", "warning"},
          {"event", "endpoint_failing"},
          {"endpoint_id", endpoint_id},
          {"failing_since", format_rfc3339(since)},
          {"disable_after", "1m"}};
}

TEST_CASE("a failing endpoint is warned about once per streak, at half of disable_after",
          "[health]") {
  PublisherFixture f("warn", [](publisher::Options& o) { o.disable_after = 1min; });
  std::atomic<int> status{500};
  Receiver receiver([&](std::size_t, const Received&) { return Receiver::Reply{status, {}}; });
  const auto endpoint = f.add_endpoint("m1", receiver.url());
  const LogCapture logs;
  const UnixMillis since = f.clock.now_ms();
  fail_once(f, "m1");  // the streak starts
  f.advance(29s);
  fail_once(f, "m1");
  CHECK(logs.lines("endpoint_failing").empty());
  CHECK_FALSE(warned_at(f.db, endpoint.id));
  f.advance(1s);  // 30 s: half of a minute
  fail_once(f, "m1");
  CHECK(logs.lines("endpoint_failing") == std::vector<nlohmann::json>{warning(endpoint.id, since)});
  CHECK(warned_at(f.db, endpoint.id) == f.clock.now_ms());
  f.advance(10s);
  fail_once(f, "m1");
  CHECK(logs.lines("endpoint_failing").size() == 1);  // once per streak

  // A success ends the streak; the next one is warned about again.
  status = 200;
  f.advance(1min);  // every retry is due
  fail_once(f, "m1");
  CHECK_FALSE(f.store.find_endpoint(endpoint.id)->failing_since);
  CHECK_FALSE(warned_at(f.db, endpoint.id));
  status = 500;
  const UnixMillis second = f.clock.now_ms();
  fail_once(f, "m1");
  f.advance(30s);
  fail_once(f, "m1");
  CHECK(logs.lines("endpoint_failing") ==
        std::vector<nlohmann::json>{warning(endpoint.id, since), warning(endpoint.id, second)});
  CHECK(f.store.find_endpoint(endpoint.id)->enabled);
}

// Two daemons (or workers) recording failures of one endpoint at once: only the first warns.
TEST_CASE("two recorders of one streak warn once", "[health]") {
  PublisherFixture f("warn-once");
  const auto endpoint = f.add_endpoint("m1", "http://127.0.0.1:9/hook");
  publisher::Settlement failed;
  failed.attempt.endpoint_id = endpoint.id;
  failed.attempt.started_at = f.clock.now_ms();
  failed.attempt.status = 503;
  failed.endpoint_failed = true;
  publisher::FailingRules rules;
  rules.warn_before = f.clock.now_ms();
  const auto first = f.store.record({failed}, f.clock.now_ms(), rules);
  const auto second = f.store.record({failed}, f.clock.now_ms(), rules);
  CHECK(first.warned ==
        std::vector<publisher::FailingEndpoint>{{endpoint.id, failed.attempt.started_at}});
  CHECK(first.disabled.empty());
  CHECK(second.warned.empty());
}

TEST_CASE("webhooks_endpoint_failing_seconds: seconds since each enabled endpoint began failing",
          "[health]") {
  PublisherFixture f("failing-gauge", [](publisher::Options& o) { o.disable_after = 0ms; });
  Receiver failing(statuses({500})), fine;
  const auto bad = f.add_endpoint("m1", failing.url());
  f.add_endpoint("m2", fine.url());
  const auto off = f.add_endpoint("m3", failing.url());
  fail_once(f, "m1");
  fail_once(f, "m2");
  fail_once(f, "m3");
  REQUIRE(f.store.set_enabled(off.id, false, "maintenance", f.clock.now_ms()));
  f.advance(1500ms);
  const std::string text =
      f.metrics.render_endpoint_health(f.store.failing_endpoints(), f.clock.now_ms());
  CHECK(text.find("webhooks_endpoint_failing_seconds{endpoint=\"" + bad.id + "\"} 1.500\n") !=
        std::string::npos);
  CHECK(text.find(off.id) == std::string::npos);  // disabled: not failing any more
  const auto lines = std::count(text.begin(), text.end(), '\n');
  CHECK(lines == 2 + 1 + 2 + 4);  // HELP and TYPE, one endpoint, the purge counter's 2 + 4
}

// The body's data of an ops event as delivered, after checking its signature and type.
nlohmann::json ops_data(const Received& r, const std::string& secret, std::string_view type,
                        std::int64_t now_seconds) {
  const Verifier verifier({Secret::parse(secret)});
  CHECK(verifier.verify(
      {r.header("webhook-id"), r.header("webhook-timestamp"), r.header("webhook-signature")},
      r.body, now_seconds));
  CHECK(r.header("webhook-event-type") == type);
  const nlohmann::json body = nlohmann::json::parse(r.body);
  CHECK(body["type"] == type);
  return body["data"];
}

TEST_CASE("ops events endpoint.failing and endpoint.disabled reach --ops-url, signed", "[health]") {
  Receiver ops;
  const std::string secret = Secret::generate().to_string();
  PublisherFixture f("ops-events", [&](publisher::Options& o) {
    o.disable_after = 1min;
    o.ops_url = ops.url();
    o.ops_secret = secret;
  });
  Receiver failing(statuses({503}));
  const auto endpoint = f.add_endpoint("m1", failing.url());
  const UnixMillis since = f.clock.now_ms();
  fail_once(f, "m1");
  f.advance(30s);
  fail_once(f, "m1");  // warned: the ops event is delivered in the same run
  REQUIRE(ops.count() == 1);
  CHECK(ops_data(ops.received()[0], secret, "endpoint.failing", f.clock.now_seconds()) ==
        nlohmann::json{{"endpoint_id", endpoint.id},
                       {"merchant_id", "m1"},
                       {"url", failing.url()},
                       {"failing_since", format_rfc3339(since)},
                       {"reason", "HTTP 503"}});
  f.advance(30s);
  fail_once(f, "m1");  // disabled
  CHECK_FALSE(f.store.find_endpoint(endpoint.id)->enabled);
  REQUIRE(ops.count() == 2);
  CHECK(ops_data(ops.received()[1], secret, "endpoint.disabled", f.clock.now_seconds()) ==
        nlohmann::json{{"endpoint_id", endpoint.id},
                       {"merchant_id", "m1"},
                       {"url", failing.url()},
                       {"failing_since", format_rfc3339(since)},
                       {"reason", "failing continuously"}});
  const auto ops_endpoint = f.store.find_endpoint(std::string(publisher::kOpsEndpointId));
  REQUIRE(ops_endpoint);
  CHECK(ops_endpoint->merchant_id == publisher::kOpsMerchantId);
}

}  // namespace
}  // namespace webhooks::test
