// Store::endpoint_stats and Store::overview with exact values, on SQLite and PostgreSQL.
#include <algorithm>
#include <catch2/catch.hpp>

#include "console_support.h"

namespace webhooks::test {
namespace {

using publisher::EndpointAttention;
using publisher::MinuteBucket;
using publisher::TaskState;
using namespace std::chrono_literals;

TEST_CASE("endpoint stats cover the last 100 attempts: rate, nearest-rank p50 and p99, last",
          "[console]") {
  PublisherFixture f("console_stats");
  const auto e = f.add_endpoint("m1", "http://127.0.0.1:9/s");
  CHECK(f.store.endpoint_stats(e.id).attempts == 0);
  f.publish("m1", "order.created");
  const UnixMillis t0 = f.clock.now_ms();
  // Attempts 1..105 take 1..105 ms; the first five fail (outside the window), then 200s but the
  // last, a 503.
  for (int i = 1; i <= 105; ++i) {
    attempt_once(f, i <= 5 ? 500 : (i == 105 ? 503 : 200), i, t0 + i);
  }
  const auto stats = f.store.endpoint_stats(e.id);
  CHECK(stats.endpoint_id == e.id);
  CHECK(stats.attempts == 100);
  CHECK(stats.succeeded == 99);
  CHECK(stats.success_rate == Approx(0.99));
  CHECK(stats.p50_ms == 55);   // latencies 6..105: the 50th
  CHECK(stats.p99_ms == 104);  // the 99th
  CHECK(stats.last_status == 503);
  CHECK(stats.last_attempt_at == t0 + 105);

  REQUIRE(f.store.set_enabled(e.id, false, "done", t0));  // its task out of the next claims
  const auto few = f.add_endpoint("m2", "http://127.0.0.1:9/f");
  f.publish("m2", "order.created");
  attempt_once(f, 200, 30, t0 + 200);
  attempt_once(f, 0, 10, t0 + 201);  // no response
  attempt_once(f, 200, 20, t0 + 202);
  const auto three = f.store.endpoint_stats(few.id);
  CHECK(three.attempts == 3);
  CHECK(three.succeeded == 2);
  CHECK(three.p50_ms == 20);
  CHECK(three.p99_ms == 30);
  CHECK(three.last_status == 200);
  CHECK(f.store.endpoint_stats("unknown").last_attempt_at == std::nullopt);
}

TEST_CASE("the overview: attempts per minute over the hour, queue, oldest waiting, attention",
          "[console]") {
  PublisherFixture f("console_overview");
  const auto ok = f.add_endpoint("m1", "http://127.0.0.1:9/ok");
  const auto failing = f.add_endpoint("m2", "http://127.0.0.1:9/failing");
  const auto off = f.add_endpoint("m3", "http://127.0.0.1:9/off");
  const UnixMillis t0 = f.clock.now_ms();  // 1'700'000'000'000: 20 s into a minute
  const UnixMillis minute = t0 / 60'000 * 60'000;
  CHECK(f.store.overview(t0).oldest_pending_since == std::nullopt);
  const std::string a = f.publish("m1", "order.created").event_id;
  f.advance(5s);
  const std::string b = f.publish("m2", "order.created").event_id;
  f.publish("m3", "order.created");
  REQUIRE(f.store.set_enabled(off.id, false, "410 Gone", f.clock.now_ms()));
  settle_all(f, {{a, Outcome::succeeded}, {b, Outcome::retry}});  // b's endpoint is failing now
  const auto o = f.store.overview(f.clock.now_ms());
  REQUIRE(o.minutes.size() == 60);
  CHECK(o.minutes.front().start == minute - 59 * 60'000);
  CHECK(o.minutes.back() == MinuteBucket{minute, 2, 1});
  CHECK(o.minutes[58] == MinuteBucket{minute - 60'000, 0, 0});
  CHECK(o.tasks == std::map<TaskState, std::int64_t>{{TaskState::pending, 2},
                                                     {TaskState::delivering, 0},
                                                     {TaskState::succeeded, 1},
                                                     {TaskState::dead, 0}});
  // b waits (due in an hour) since t0 + 5 s; m3's task is parked, so not counted as waiting.
  CHECK(o.oldest_pending_since == t0 + 5'000);
  std::vector<EndpointAttention> expected{{failing.id, "m2", true, "", t0 + 5'000},
                                          {off.id, "m3", false, "410 Gone", std::nullopt}};
  std::sort(expected.begin(), expected.end(),
            [](const auto& x, const auto& y) { return x.endpoint_id < y.endpoint_id; });
  CHECK(o.attention == expected);
  (void)ok;
}

}  // namespace
}  // namespace webhooks::test
