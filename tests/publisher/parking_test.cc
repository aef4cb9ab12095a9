// Tasks of a disabled endpoint are parked: outside the due index, so a claim never walks past
// them, and back in it when the endpoint is enabled. Runs on SQLite and PostgreSQL.
#include <catch2/catch.hpp>

#include "fixture.h"
#include "receiver.h"
#include "store/store_sql.h"
#include "support/legacy_schema.h"
#include "support/test_env.h"
#include "webhooks/idempotency/schema.h"
#include "webhooks/publisher/schema.h"

namespace webhooks::test {
namespace {

using publisher::Settlement;
using publisher::TaskState;
using namespace std::chrono_literals;

// The endpoint's pending tasks with that `parked` flag: parked = 0 are the ones in the due index,
// which the claim reads.
std::int64_t pending(db::Database& db, const std::string& endpoint_id, int parked) {
  return db
      .exec(
          "SELECT COUNT(*) FROM publisher_tasks WHERE endpoint_id = $1 "
          "AND state = 'pending' AND parked = $2",
          {endpoint_id, std::int64_t{parked}})
      .integer(0, 0);
}
std::int64_t due(db::Database& db, const std::string& id) { return pending(db, id, 0); }
std::int64_t parked(db::Database& db, const std::string& id) { return pending(db, id, 1); }

TEST_CASE(
    "a disabled endpoint's tasks are parked: claims see only other endpoints' tasks, "
    "enabling brings exactly those back",
    "[parking]") {
  PublisherFixture f("park");
  Receiver off_receiver, on_receiver;
  const auto off = f.add_endpoint("m_off", off_receiver.url());
  const auto on = f.add_endpoint("m_on", on_receiver.url());
  constexpr int kParked = 40;  // more than a batch (16)
  std::string first_event;
  for (int i = 0; i < kParked; ++i) {
    const auto accepted = f.publish("m_off", "order.created");
    if (i == 0) first_event = accepted.event_id;
  }
  REQUIRE(due(f.db, off.id) == kParked);
  REQUIRE(f.store.set_enabled(off.id, false, "maintenance", f.clock.now_ms()));
  CHECK(due(f.db, off.id) == 0);
  CHECK(parked(f.db, off.id) == kParked);
  const auto task = f.tasks(first_event).at(0);
  CHECK(task.state == TaskState::pending);  // still pending (DESIGN.md), but parked
  CHECK(task.parked);

  // Fan-out skips a disabled endpoint: nothing new for it while it is disabled.
  CHECK(f.publish("m_off", "order.created").tasks == 0);
  for (int i = 0; i < 3; ++i) CHECK(f.publish("m_on", "order.created").tasks == 1);

  if (engine() == db::Engine::sqlite) {  // the claim reads the per-endpoint due index only
    const UnixMillis now = f.clock.now_ms();
    const auto plan_of = [&f](std::string_view sql, std::initializer_list<db::Param> params) {
      const db::Rows plan = f.db.exec("EXPLAIN QUERY PLAN " + std::string(sql), params);
      std::string details;
      for (std::size_t r = 0; r < plan.size(); ++r) details += plan.text(r, 3) + "\n";
      return details;
    };
    const std::string endpoints =
        plan_of(publisher::detail::sql::kSelectDueEndpoints, {std::int64_t{now}});
    INFO(endpoints);
    // Never a table scan: the one SCAN of publisher_tasks is the index's first entry (LIMIT 1).
    CHECK(endpoints.find("SCAN publisher_tasks\n") == std::string::npos);
    CHECK(endpoints.find("SCAN t\n") == std::string::npos);
    CHECK(endpoints.find("INDEX publisher_tasks_endpoint_due") != std::string::npos);
    const std::string claim =
        plan_of(publisher::detail::sql::kClaimSqlite,
                {"probe", std::int64_t{now}, std::int64_t{16}, std::int64_t{now}, on.id});
    INFO(claim);
    CHECK(claim.find("INDEX publisher_tasks_endpoint_due") != std::string::npos);
  }

  const UnixMillis now = f.clock.now_ms();
  const auto claimed = f.store.claim("probe", 100, now, now + 60'000);
  REQUIRE(claimed.size() == 3);
  for (const auto& c : claimed) CHECK(c.task.endpoint_id == on.id);
  CHECK(f.store.release("probe", now) == 3);

  f.advance(1min);
  REQUIRE(f.store.set_enabled(off.id, true, "", f.clock.now_ms()));
  CHECK(parked(f.db, off.id) == 0);
  CHECK(due(f.db, off.id) == kParked);
  CHECK(f.tasks(first_event).at(0).next_attempt_at == task.next_attempt_at);  // kept
  CHECK(f.dispatcher.run_until_idle() == kParked + 3);
  CHECK(off_receiver.count() == kParked);
  CHECK(on_receiver.count() == 3);
}

TEST_CASE("410 parks the endpoint's other tasks too", "[parking]") {
  PublisherFixture f("gone-parks", [](publisher::Options& o) {
    o.batch_size = 1;  // one attempt, the other two tasks stay pending
    o.instance_id = "one";
  });
  Receiver receiver(statuses({410, 200}));
  const auto endpoint = f.add_endpoint("m1", receiver.url());
  for (int i = 0; i < 3; ++i) f.publish("m1", "order.created");
  publisher::Dispatcher& dispatcher = f.dispatcher;
  REQUIRE(dispatcher.run_once() == 1);
  CHECK_FALSE(f.store.find_endpoint(endpoint.id)->enabled);
  CHECK(due(f.db, endpoint.id) == 0);
  CHECK(parked(f.db, endpoint.id) == 3);  // the one that got 410 (scheduled again) and the rest

  f.advance(1min);
  CHECK(dispatcher.run_once() == 0);
  REQUIRE(f.store.set_enabled(endpoint.id, true, "", f.clock.now_ms()));
  CHECK(dispatcher.run_until_idle() == 3);
  CHECK(receiver.count() == 4);
}

TEST_CASE("a task in flight when its endpoint is disabled ends up parked, not lost", "[parking]") {
  PublisherFixture f("in-flight");
  Receiver receiver;
  const auto endpoint = f.add_endpoint("m1", receiver.url());
  const auto failed = f.publish("m1", "order.created");
  const auto delivered = f.publish("m1", "order.created");
  const UnixMillis now = f.clock.now_ms();
  const auto claimed = f.store.claim("w/1", 10, now, now + 60'000);
  REQUIRE(claimed.size() == 2);
  REQUIRE(f.store.set_enabled(endpoint.id, false, "maintenance", now));

  SECTION("its attempt is recorded") {
    std::vector<Settlement> records;
    for (const auto& c : claimed) {
      Settlement r;
      r.attempt.delivery_id = "d-" + std::to_string(c.task.id);
      r.attempt.task_id = c.task.id;
      r.attempt.event_id = c.task.event_id;
      r.attempt.endpoint_id = c.task.endpoint_id;
      r.attempt.attempt_number = 1;
      r.attempt.started_at = now;
      r.lease_owner = "w/1";
      const bool fails = c.task.event_id == failed.event_id;
      r.attempt.status = fails ? 503 : 200;
      r.next = fails ? Settlement::Next::retry : Settlement::Next::succeeded;
      r.next_attempt_at = now + 5'000;
      r.endpoint_failed = fails;
      records.push_back(r);
    }
    f.store.record(records, now);
    CHECK(f.store.attempts_of_event(failed.event_id).at(0).status == 503);
    const auto retry = f.tasks(failed.event_id).at(0);
    CHECK(retry.state == TaskState::pending);
    CHECK(retry.attempts == 1);
    CHECK(retry.parked);
    CHECK(f.tasks(delivered.event_id).at(0).state == TaskState::succeeded);
    CHECK(parked(f.db, endpoint.id) == 1);
  }
  SECTION("it is released (SIGTERM)") {
    CHECK(f.store.release("w/1", now) == 2);
    CHECK(parked(f.db, endpoint.id) == 2);
  }
  SECTION("its daemon dies and the lease lapses") {
    f.advance(2min);
    CHECK(f.store.claim("w/2", 10, f.clock.now_ms(), f.clock.now_ms() + 60'000).empty());
    CHECK(parked(f.db, endpoint.id) == 2);
  }
  CHECK(due(f.db, endpoint.id) == 0);
  f.advance(1min);
  CHECK(f.dispatcher.run_once() == 0);
  REQUIRE(f.store.set_enabled(endpoint.id, true, "", f.clock.now_ms()));
  f.dispatcher.run_until_idle();
  CHECK(f.tasks(failed.event_id).at(0).state == TaskState::succeeded);
  CHECK(f.tasks(delivered.event_id).at(0).state == TaskState::succeeded);
}

TEST_CASE("replay and recovery while the endpoint is disabled re-queue parked tasks", "[parking]") {
  PublisherFixture f("requeue-parked",
                     publisher::RetryPolicy({1s}, std::chrono::hours(1), 0.0));  // 2 attempts
  Receiver receiver(statuses({200, 503, 503, 200}));
  const auto endpoint = f.add_endpoint("m1", receiver.url());
  const auto succeeded = f.publish("m1", "order.created");
  REQUIRE(f.dispatcher.run_once() == 1);
  const auto dead = f.publish("m1", "order.created");
  REQUIRE(f.dispatcher.run_once() == 1);
  f.advance(1s);
  REQUIRE(f.dispatcher.run_once() == 1);
  REQUIRE(f.tasks(dead.event_id).at(0).state == TaskState::dead);

  REQUIRE(f.store.set_enabled(endpoint.id, false, "maintenance", f.clock.now_ms()));
  CHECK(f.store.replay(succeeded.event_id, "", f.clock.now_ms()) == 1);
  CHECK(f.store.recover(endpoint.id, 0, f.clock.now_ms()) == 1);
  for (const auto& event_id : {succeeded.event_id, dead.event_id}) {
    const auto task = f.tasks(event_id).at(0);
    CHECK(task.state == TaskState::pending);
    CHECK(task.parked);
  }
  CHECK(due(f.db, endpoint.id) == 0);
  CHECK(f.dispatcher.run_once() == 0);

  REQUIRE(f.store.set_enabled(endpoint.id, true, "", f.clock.now_ms()));
  CHECK(f.dispatcher.run_until_idle() == 2);
  CHECK(receiver.count() == 5);
  CHECK(f.tasks(succeeded.event_id).at(0).state == TaskState::succeeded);
  CHECK(f.tasks(dead.event_id).at(0).state == TaskState::succeeded);
}

TEST_CASE("migrating an existing database parks the tasks of endpoints already disabled",
          "[parking]") {
  const std::shared_ptr<db::Database> db = db::Database::open(database_target("park-migrate"));
  migrate_as_before_components(*db, 3, 0);  // the schema as it was before the old 0004
  db->transact([&](db::Transaction& tx) {
    for (const char* id : {"ep_on", "ep_off"}) {
      tx.exec(
          "INSERT INTO publisher_endpoints (id, merchant_id, url, enabled, created_at, "
          "updated_at) VALUES ($1, 'm1', 'http://192.0.2.1/hook', $2, 0, 0)",
          {id, std::int64_t{std::string(id) == "ep_on" ? 1 : 0}});
    }
    for (int i = 0; i < 6; ++i) {
      const std::string event_id = "ev_" + std::to_string(i);
      tx.exec(
          "INSERT INTO publisher_events (event_id, merchant_id, event_type, payload, "
          "created_at) VALUES ($1, 'm1', 'order.created', '{}', 0)",
          {event_id});
      tx.exec(
          "INSERT INTO publisher_tasks (event_id, endpoint_id, state, next_attempt_at, "
          "age_from, created_at, updated_at) VALUES ($1, $2, $3, 0, 0, 0, 0)",
          {event_id, i % 2 ? "ep_off" : "ep_on", i < 4 ? "pending" : "succeeded"});
    }
  });
  // The old 0001-0003 are adopted; publisher's 0002 (the old 0004) and later, and idempotency's
  // 0002 (the old 0005) and later run.
  const auto later = [&](const auto& schema) {
    return static_cast<int>(schema.migrations(db->engine()).size()) - 1;
  };
  REQUIRE(db->migrate({idempotency::schema(), publisher::schema()}, 1000) ==
          later(idempotency::schema()) + later(publisher::schema()));
  CHECK(parked(*db, "ep_off") == 2);
  CHECK(due(*db, "ep_off") == 0);
  CHECK(due(*db, "ep_on") == 2);
  publisher::Store store(db);
  const auto claimed = store.claim("probe", 10, 1000, 61'000);
  REQUIRE(claimed.size() == 2);
  for (const auto& c : claimed) CHECK(c.task.endpoint_id == "ep_on");
}

}  // namespace
}  // namespace webhooks::test
