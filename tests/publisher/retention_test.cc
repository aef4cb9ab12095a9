// Retention (retention.h, Store::purge): finished events older than the retention are deleted
// with their tasks and attempts, in batches; unfinished ones and newer ones stay. Fake clock, real
// HTTP on loopback; runs on SQLite and PostgreSQL.
#include "ops/retention.h"

#include <catch2/catch.hpp>

#include "fixture.h"
#include "receiver.h"
#include "support/log_capture.h"
#include "support/test_env.h"
#include "webhooks/rfc3339.h"

namespace webhooks::test {
namespace {

using namespace std::chrono_literals;
using publisher::PurgeCounts;

std::int64_t rows(db::Database& db, const std::string& table) {
  return db.exec("SELECT COUNT(*) FROM " + table).integer(0, 0);
}

struct Counts {
  std::int64_t events, tasks, attempts;
  bool operator==(const Counts&) const = default;
};
Counts counts(db::Database& db) {
  return {rows(db, "publisher_events"), rows(db, "publisher_tasks"),
          rows(db, "publisher_attempts")};
}

publisher::RetentionOptions retention(std::chrono::milliseconds max_age, int batch) {
  publisher::RetentionOptions o;
  o.max_age = max_age;
  o.batch = batch;
  o.pause = 0ms;
  return o;
}

// Old history: 5 events delivered (succeeded), 2 dead at once (400), 1 still pending (its
// endpoint answers 500, then is disabled), 1 with one succeeded and one pending task; then, 31
// days later, a newer delivered one.
struct History {
  explicit History(const std::string& label)
      : f(label, [](publisher::Options& o) { o.permanent_statuses = {400}; }) {
    f.add_endpoint("ok", fine.url());
    f.add_endpoint("gone", bad_request.url());
    const auto down_1 = f.add_endpoint("down", down.url());
    f.add_endpoint("both", fine.url());
    const auto down_2 = f.add_endpoint("both", down.url());
    for (int i = 0; i < 5; ++i) f.publish("ok", "order.created");
    for (int i = 0; i < 2; ++i) f.publish("gone", "order.created");
    pending = f.publish("down", "order.created").event_id;
    half = f.publish("both", "order.created").event_id;
    f.dispatcher.run_until_idle();
    // Parked: still pending a month later (a claim would find them past their age limit).
    for (const auto& e : {down_1, down_2})
      f.store.set_enabled(e.id, false, "down", f.clock.now_ms());
    f.advance(31 * 24h);
    newer = f.publish("ok", "order.created").event_id;
    f.dispatcher.run_until_idle();
  }
  Receiver fine, bad_request{statuses({400})}, down{statuses({500})};
  PublisherFixture f;
  std::string pending, half, newer;
};

TEST_CASE("retention deletes finished old events with their tasks and attempts, in batches",
          "[retention]") {
  History h("retention");
  PublisherFixture& f = h.f;
  // 10 events; 11 tasks; attempts: 5 + 2 + 1 + 2 old, and the newer one's.
  REQUIRE(counts(f.db) == Counts{10, 11, 11});
  const LogCapture logs;
  publisher::Retention r(f.store, f.clock, f.metrics, retention(30 * 24h, 3));
  const auto pass = r.run_once();
  CHECK(pass.purged == PurgeCounts{7, 7, 7});
  CHECK(pass.batches == 3);  // 3 + 3 + 1
  CHECK(counts(f.db) == Counts{3, 4, 4});
  CHECK(f.store.find_event(h.pending));
  CHECK(f.store.tasks_of_event(h.half).size() == 2);
  CHECK(f.store.attempts_of_event(h.half).size() == 2);
  CHECK(f.store.find_event(h.newer));
  CHECK(f.metrics.purged() == PurgeCounts{7, 7, 7});
  const UnixMillis before = f.clock.now_ms() - std::chrono::milliseconds(30 * 24h).count();
  CHECK(logs.lines("retention_purged") ==
        std::vector<nlohmann::json>{{{"level", "info"},
                                     {"event", "retention_purged"},
                                     {"events", 7},
                                     {"tasks", 7},
                                     {"attempts", 7},
                                     {"audit", 0},
                                     {"batches", 3},
                                     {"before", format_rfc3339(before)}}});
  CHECK(r.run_once().batches == 0);  // nothing left: no line
  CHECK(logs.lines("retention_purged").size() == 1);
}

TEST_CASE("retention keeps what is younger than the retention, and everything at 0",
          "[retention]") {
  History h("retention-young");
  PublisherFixture& f = h.f;
  publisher::Retention never(f.store, f.clock, f.metrics, retention(0ms, 500));
  CHECK(never.run_once().purged == PurgeCounts{});
  // The old events were created exactly 31 days ago: kept by a retention of 31 days.
  publisher::Retention exact(f.store, f.clock, f.metrics, retention(31 * 24h, 500));
  CHECK(exact.run_once().purged == PurgeCounts{});
  publisher::Retention shorter(f.store, f.clock, f.metrics, retention(31 * 24h - 1ms, 500));
  CHECK(shorter.run_once().purged == PurgeCounts{7, 7, 7});
}

TEST_CASE("a purged event's task finished after a replay stays until it is finished again",
          "[retention]") {
  History h("retention-replay");
  PublisherFixture& f = h.f;
  publisher::EventQuery ok;
  ok.merchant_id = "ok";
  const auto old = f.store.list_events(ok).back();
  REQUIRE(f.store.replay(old.event_id, "", f.clock.now_ms()) == 1);  // pending again
  CHECK(f.store.purge(f.clock.now_ms() - std::chrono::milliseconds(30 * 24h).count(), 500) ==
        PurgeCounts{6, 6, 6});
  CHECK(f.store.find_event(old.event_id));
  f.dispatcher.run_until_idle();  // delivered again: finished
  CHECK(f.store.purge(f.clock.now_ms() - std::chrono::milliseconds(30 * 24h).count(), 500) ==
        PurgeCounts{1, 1, 2});
  CHECK_FALSE(f.store.find_event(old.event_id));
}

// More events per transaction than one statement binds parameters (the database layer's 99).
TEST_CASE("a batch of 500 purges 500 events; events without tasks too", "[retention]") {
  PublisherFixture f("retention-large");
  for (int i = 0; i < 510; ++i) REQUIRE(f.publish("nobody", "order.created").tasks == 0);
  f.advance(31 * 24h);
  publisher::Retention r(f.store, f.clock, f.metrics, retention(30 * 24h, 500));
  const auto pass = r.run_once();
  CHECK(pass.purged == PurgeCounts{510, 0, 0});
  CHECK(pass.batches == 2);
  CHECK(rows(f.db, "publisher_events") == 0);
}

}  // namespace
}  // namespace webhooks::test

namespace webhooks::test {
namespace {

TEST_CASE("a retention shorter than the replay window is logged once at start", "[retention]") {
  const LogCapture logs;
  publisher::Options o;
  o.database = database_target("retention_warning");
  o.retention = std::chrono::hours(1);  // --replay-max-age is 7 days
  { const publisher::Publisher warned(o); }
  const auto lines = logs.lines("retention_shorter_than_replay_max_age");
  REQUIRE(lines.size() == 1);
  CHECK(lines[0]["retention_ms"] == 3'600'000);
  CHECK(lines[0]["replay_max_age_ms"] == 604'800'000);
  o.retention = o.replay_max_age;  // as long: fine
  { const publisher::Publisher quiet(o); }
  o.retention = 0ms;  // kept forever
  { const publisher::Publisher forever(o); }
  CHECK(logs.lines("retention_shorter_than_replay_max_age").size() == 1);
}

}  // namespace
}  // namespace webhooks::test
