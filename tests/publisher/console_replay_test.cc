// Store::replay_missing: tasks for the events an endpoint never had one for, on SQLite and
// PostgreSQL.
#include <catch2/catch.hpp>
#include <thread>

#include "console_support.h"

namespace webhooks::test {
namespace {

using publisher::TaskState;
using publisher::Trigger;
using namespace std::chrono_literals;

// The endpoint's tasks of `event_id`.
std::vector<publisher::Task> tasks_for(PublisherFixture& f, const std::string& event_id,
                                       const std::string& endpoint_id) {
  std::vector<publisher::Task> out;
  for (const auto& t : f.tasks(event_id)) {
    if (t.endpoint_id == endpoint_id) out.push_back(t);
  }
  return out;
}

TEST_CASE("replay missing: events from before the endpoint and while it was disabled, once",
          "[console]") {
  PublisherFixture f("console_replay_missing");
  const UnixMillis t0 = f.clock.now_ms();
  const std::string before = f.publish("m1", "order.created").event_id;  // no endpoint yet
  f.advance(1s);
  const auto x = f.add_endpoint("m1", "http://127.0.0.1:9/x", {"order.*"});
  const std::string delivered = f.publish("m1", "order.created").event_id;
  REQUIRE(f.store.set_enabled(x.id, false, "maintenance", f.clock.now_ms()));
  f.advance(1s);
  const UnixMillis t_disabled = f.clock.now_ms();
  const std::string while_disabled = f.publish("m1", "order.paid").event_id;
  const std::string mismatch = f.publish("m1", "invoice.paid").event_id;  // filter: not order.*
  const std::string other_merchant = f.publish("m2", "order.created").event_id;
  REQUIRE(f.store.set_enabled(x.id, true, "", f.clock.now_ms()));
  f.advance(1s);
  const UnixMillis now = f.clock.now_ms();

  // Since t_disabled: only the event accepted while disabled.
  CHECK(f.store.replay_missing(x.id, t_disabled, now) == 1);
  const auto made = tasks_for(f, while_disabled, x.id);
  REQUIRE(made.size() == 1);
  CHECK(made[0].state == TaskState::pending);
  CHECK(made[0].next_trigger == Trigger::manual);
  CHECK(made[0].next_attempt_at == now);
  CHECK(made[0].age_from == now);
  CHECK(made[0].attempts == 0);
  CHECK_FALSE(made[0].parked);
  // Since t0: the one from before the endpoint existed; the delivered one keeps its one task.
  CHECK(f.store.replay_missing(x.id, t0, now) == 1);
  CHECK(tasks_for(f, before, x.id).size() == 1);
  CHECK(tasks_for(f, delivered, x.id).size() == 1);
  CHECK(tasks_for(f, while_disabled, x.id).size() == 1);
  CHECK(f.tasks(mismatch).empty());
  CHECK(f.tasks(other_merchant).empty());
  // Twice: nothing more.
  CHECK(f.store.replay_missing(x.id, t0, now) == 0);
  CHECK(f.store.replay_missing("no-such-endpoint", t0, now) == std::nullopt);

  // The new tasks are claimable now (manual trigger), the ones replay made included.
  const auto claimed = f.store.claim("c", 10, now, now + 60'000);
  CHECK(claimed.size() == 3);
}

TEST_CASE("replay missing for a disabled endpoint parks what it creates", "[console]") {
  PublisherFixture f("console_replay_parked");
  const UnixMillis t0 = f.clock.now_ms();
  const std::string e1 = f.publish("m1", "order.created").event_id;
  const auto y = f.add_endpoint("m1", "http://127.0.0.1:9/y");
  REQUIRE(f.store.set_enabled(y.id, false, "maintenance", t0));
  CHECK(f.store.replay_missing(y.id, t0, t0) == 1);
  const auto made = tasks_for(f, e1, y.id);
  REQUIRE(made.size() == 1);
  CHECK(made[0].parked);
  CHECK(f.store.claim("c", 10, t0, t0 + 60'000).empty());
  REQUIRE(f.store.set_enabled(y.id, true, "", t0));  // unparks it
  CHECK(f.store.claim("c2", 10, t0, t0 + 60'000).size() == 1);
}

TEST_CASE("replay missing run twice at once creates each task once", "[console]") {
  PublisherFixture f("console_replay_race");
  const UnixMillis t0 = f.clock.now_ms();
  std::vector<std::string> events;
  for (int i = 0; i < 50; ++i) events.push_back(f.publish("m1", "order.created").event_id);
  const auto z = f.add_endpoint("m1", "http://127.0.0.1:9/z");
  std::optional<int> first, second;
  std::thread racer([&] { first = f.store.replay_missing(z.id, t0, t0); });
  second = f.store.replay_missing(z.id, t0, t0);
  racer.join();
  REQUIRE(first);
  REQUIRE(second);
  CHECK(*first + *second == 50);
  for (const auto& id : events) CHECK(tasks_for(f, id, z.id).size() == 1);
}

TEST_CASE("replay missing over more events than one batch, all at one time, filter applied",
          "[console]") {
  PublisherFixture f("console_replay_batches");
  const UnixMillis t0 = f.clock.now_ms();
  // 1,201 events at the same instant: batches of 500 page by event id.
  int orders = 0;
  for (int i = 0; i < 1201; ++i) {
    const bool order = i % 3 != 0;
    orders += order ? 1 : 0;
    f.publish("m1", order ? "order.created" : "payout.created");
  }
  f.publish("m2", "order.created");  // another merchant's
  const auto w = f.add_endpoint("m1", "http://127.0.0.1:9/w", {"order.*"});
  REQUIRE(orders == 800);
  CHECK(f.store.replay_missing(w.id, t0 + 1, t0) == 0);  // every event is at t0, before since
  CHECK(f.store.replay_missing(w.id, t0, t0) == 800);
  CHECK(f.store.replay_missing(w.id, t0, t0) == 0);
}

}  // namespace
}  // namespace webhooks::test
