// The console's reads (Store::list_event_page, endpoint_stats, overview) with exact values, on
// SQLite and PostgreSQL. Attempts are recorded the way the dispatcher records them: claim, then
// Store::record.
#include <catch2/catch.hpp>

#include "console_support.h"
#include "webhooks/error.h"

namespace webhooks::test {
namespace {

using publisher::EventQuery;
using publisher::TaskState;
using namespace std::chrono_literals;

TEST_CASE("events page newest first by cursor; equal times break by id; no duplicates",
          "[console]") {
  PublisherFixture f("console_page");
  f.add_endpoint("m1", "http://127.0.0.1:9/a");
  f.add_endpoint("m1", "http://127.0.0.1:9/b");  // two tasks per event
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(f.publish("m1", "order.created").event_id);
  EventQuery q;
  q.limit = 2;
  const auto first = f.store.list_event_page(q);
  CHECK(event_ids(first) == std::vector<std::string>{ids[4], ids[3]});
  CHECK(first.next_cursor == std::to_string(f.clock.now_ms()) + "." + ids[3]);
  CHECK(first.task_states.at(ids[4]) == std::map<TaskState, int>{{TaskState::pending, 2}});
  f.advance(1s);
  const std::string newer = f.publish("m1", "order.created").event_id;  // shifts no page
  q.cursor = first.next_cursor;
  const auto second = f.store.list_event_page(q);
  CHECK(event_ids(second) == std::vector<std::string>{ids[2], ids[1]});
  q.cursor = second.next_cursor;
  const auto third = f.store.list_event_page(q);
  CHECK(event_ids(third) == std::vector<std::string>{ids[0]});
  CHECK(third.next_cursor.empty());

  // By state the tasks' index leads: two pending tasks per event, each event listed once.
  EventQuery pending;
  pending.state = TaskState::pending;
  pending.limit = 4;
  const auto p1 = f.store.list_event_page(pending);
  CHECK(event_ids(p1) == std::vector<std::string>{newer, ids[4], ids[3], ids[2]});
  pending.cursor = p1.next_cursor;
  const auto p2 = f.store.list_event_page(pending);
  CHECK(event_ids(p2) == std::vector<std::string>{ids[1], ids[0]});
  CHECK(p2.next_cursor.empty());
  pending.cursor.clear();
  pending.limit = 6;  // exactly all: no next page
  CHECK(f.store.list_event_page(pending).next_cursor.empty());

  EventQuery bad;
  for (const char* cursor : {"x", "12", ".abc", "-5.abc", "5.", "5.a b", "1234567890123456789.a"}) {
    bad.cursor = cursor;
    CHECK_THROWS_MATCHES(f.store.list_event_page(bad), Error,
                         Catch::Predicate<Error>([](const Error& e) {
                           return e.code() == ErrorCode::invalid_argument;
                         }));
  }
  bad.cursor.clear();
  bad.limit = 1001;
  CHECK_THROWS_AS(f.store.list_event_page(bad), Error);
}

// Four events a second apart; m1 events reach endpoint a (every type), m2 payouts endpoint b.
struct FilterWorld {
  PublisherFixture f{"console_filters"};
  publisher::Endpoint a = f.add_endpoint("m1", "http://127.0.0.1:9/a");
  publisher::Endpoint b = f.add_endpoint("m2", "http://127.0.0.1:9/b", {"payout.*"});
  UnixMillis t0 = f.clock.now_ms();
  std::string e1, e2, e3, e4;

  FilterWorld() {
    e1 = ingest_with_key(f, "m1", "order.created", "k-shared");
    f.advance(1s);
    e2 = f.publish("m2", "payout.paid").event_id;
    f.advance(1s);
    e3 = f.publish("m1", "order.captured").event_id;
    f.advance(1s);
    e4 = ingest_with_key(f, "m2", "order.created", "k-shared");  // b's filter: no task
    // e1 dies, e3 succeeds, e2 is retried later (pending).
    settle_all(f, {{e1, Outcome::dead}, {e3, Outcome::succeeded}, {e2, Outcome::retry}});
  }
  std::vector<std::string> list(const std::function<void(EventQuery&)>& set) {
    EventQuery q;
    set(q);
    return event_ids(f.store.list_event_page(q));
  }
};

TEST_CASE("every filter of the events listing, alone and together", "[console]") {
  FilterWorld w;
  using V = std::vector<std::string>;
  CHECK(w.list([](EventQuery&) {}) == V{w.e4, w.e3, w.e2, w.e1});
  CHECK(w.list([](EventQuery& q) { q.merchant_id = "m1"; }) == V{w.e3, w.e1});
  CHECK(w.list([](EventQuery& q) { q.type = "order.created"; }) == V{w.e4, w.e1});
  CHECK(w.list([](EventQuery& q) {
    q.merchant_id = "m2";
    q.type = "order.created";
  }) == V{w.e4});
  CHECK(w.list([](EventQuery& q) { q.state = TaskState::dead; }) == V{w.e1});
  CHECK(w.list([](EventQuery& q) { q.state = TaskState::succeeded; }) == V{w.e3});
  CHECK(w.list([](EventQuery& q) { q.state = TaskState::pending; }) == V{w.e2});
  CHECK(w.list([](EventQuery& q) { q.state = TaskState::delivering; }).empty());
  CHECK(w.list([&](EventQuery& q) {
           q.state = TaskState::pending;
           q.merchant_id = "m1";
         }).empty());
  CHECK(w.list([&](EventQuery& q) { q.since = w.t0 + 1000; }) == V{w.e4, w.e3, w.e2});
  CHECK(w.list([&](EventQuery& q) { q.until = w.t0 + 2000; }) == V{w.e2, w.e1});
  CHECK(w.list([&](EventQuery& q) {
    q.since = w.t0 + 1000;
    q.until = w.t0 + 3000;
  }) == V{w.e3, w.e2});
  CHECK(w.list([&](EventQuery& q) {
    q.state = TaskState::dead;
    q.until = w.t0 + 1;
  }) == V{w.e1});
  CHECK(w.list([&](EventQuery& q) { q.q = w.e2; }) == V{w.e2});
  CHECK(w.list([](EventQuery& q) { q.q = "k-shared"; }) == V{w.e4, w.e1});
  CHECK(w.list([](EventQuery& q) {
    q.q = "k-shared";
    q.state = TaskState::dead;
  }) == V{w.e1});
  CHECK(w.list([](EventQuery& q) {
    q.q = "k-shared";
    q.merchant_id = "m2";
  }) == V{w.e4});
  CHECK(w.list([](EventQuery& q) { q.q = "k-other"; }).empty());

  EventQuery m1;
  m1.merchant_id = "m1";
  const auto page = w.f.store.list_event_page(m1);
  CHECK(page.task_states ==
        std::map<std::string, std::map<TaskState, int>>{{w.e3, {{TaskState::succeeded, 1}}},
                                                        {w.e1, {{TaskState::dead, 1}}}});
  CHECK(page.events.at(1).idempotency_key == "k-shared");
  CHECK(page.events.at(0).idempotency_key.empty());
  CHECK(w.f.store.find_event(w.e4)->idempotency_key == "k-shared");
}

TEST_CASE("a page of 1,000 events counts every event's tasks (statements of 64 ids)", "[console]") {
  PublisherFixture f("console_big_page");
  f.add_endpoint("m1", "http://127.0.0.1:9/a");
  std::vector<std::string> ids;
  for (int i = 0; i < 130; ++i) ids.push_back(f.publish("m1", "order.created").event_id);
  for (const int limit : {65, 129, 1000}) {
    publisher::EventQuery q;
    q.limit = limit;
    const auto page = f.store.list_event_page(q);
    const std::size_t listed = std::min<std::size_t>(static_cast<std::size_t>(limit), 130);
    REQUIRE(page.events.size() == listed);
    REQUIRE(page.task_states.size() == listed);
    for (const auto& event : page.events) {
      CHECK(page.task_states.at(event.event_id) ==
            std::map<publisher::TaskState, int>{{publisher::TaskState::pending, 1}});
    }
  }
}

TEST_CASE("a state with a merchant reads at most scan_limit tasks per page", "[console]") {
  PublisherFixture f("console_scan_limit");
  f.add_endpoint("m1", "http://127.0.0.1:9/a");
  f.add_endpoint("m1", "http://127.0.0.1:9/b");  // m1's events: two tasks each
  f.add_endpoint("m2", "http://127.0.0.1:9/c");
  std::vector<std::string> e;  // e0 (m1), e1..e4 (m2), e5 (m1); pending tasks newest first:
  for (const char* m : {"m1", "m2", "m2", "m2", "m2", "m1"}) {  // e5 e5 e4 e3 e2 e1 e0 e0
    e.push_back(f.publish(m, "order.created").event_id);
  }
  const std::string at = std::to_string(f.clock.now_ms()) + ".";
  EventQuery q;
  q.merchant_id = "m1";
  q.state = TaskState::pending;
  q.limit = 10;
  CHECK(event_ids(f.store.list_event_page(q)) == std::vector<std::string>{e[5], e[0]});
  q.scan_limit = 3;  // e5 e5 e4
  const auto first = f.store.list_event_page(q);
  CHECK(event_ids(first) == std::vector<std::string>{e[5]});
  CHECK(first.next_cursor == at + e[4]);
  q.cursor = first.next_cursor;  // e3 e2 e1: none of m1's, and older tasks remain
  const auto second = f.store.list_event_page(q);
  CHECK(event_ids(second).empty());
  CHECK(second.next_cursor == at + e[1]);
  q.cursor = second.next_cursor;  // e0 e0: fewer than 3 left, so the last page
  const auto third = f.store.list_event_page(q);
  CHECK(event_ids(third) == std::vector<std::string>{e[0]});
  CHECK(third.next_cursor.empty());
  CHECK(third.task_states.at(e[0]) == std::map<TaskState, int>{{TaskState::pending, 2}});

  EventQuery by_type;  // the same window with a type
  by_type.type = "order.created";
  by_type.state = TaskState::pending;
  by_type.scan_limit = 3;
  CHECK(event_ids(f.store.list_event_page(by_type)) == std::vector<std::string>{e[5], e[4]});
  by_type.scan_limit = 0;
  CHECK_THROWS_MATCHES(f.store.list_event_page(by_type), Error,
                       Catch::Predicate<Error>([](const Error& error) {
                         return error.code() == ErrorCode::invalid_argument &&
                                std::string(error.what()) == "scan_limit must be at least 1";
                       }));
}

}  // namespace
}  // namespace webhooks::test
