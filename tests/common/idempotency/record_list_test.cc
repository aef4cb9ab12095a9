// Store::list (filters, paging) and the counted replays, 409s and 422s (OutcomeCounts,
// Store::flush_counts, and the Guard that counts them), on the engine named by
// WEBHOOKS_TEST_ENGINE.
#include <catch2/catch.hpp>

#include "store_fixture.h"
#include "webhooks/error.h"
#include "webhooks/idempotency/guard.h"
#include "webhooks/idempotency/maintenance.h"

using namespace webhooks;
using namespace webhooks::idempotency;
using namespace webhooks::test;
using namespace std::chrono_literals;

namespace {

std::vector<std::string> keys_of(const ListPage& page) {
  std::vector<std::string> keys;
  for (const RecordView& view : page.records) keys.push_back(view.key);
  return keys;
}

// m1: k0..k5 created at kT0 + 0..5 s; k1 and k4 completed, k2 failed, the rest in progress; "kx"
// of m2 at kT0 + 3 s; "old" of m1 created a day before kT0 (expired at kT0).
void fill(Fixture& f) {
  for (int i = 0; i < 6; ++i) {
    const UnixMillis at = kT0 + i * 1000;
    const BeginResult begun = f.store.begin("m1", "k" + std::to_string(i), kFp, at, "POST /o");
    if (i == 1 || i == 4) REQUIRE(f.store.complete(begun.lease, kCreated, at + 1));
    if (i == 2) REQUIRE(f.store.fail(begun.lease, at + 1, 500));
  }
  f.store.begin("m2", "kx", kFp, kT0 + 3000);
  f.store.begin("m1", "old", kFp, kT0 - 24 * 3600 * 1000);
}

}  // namespace

TEST_CASE("list: a scope's live records newest first, paged by cursor") {
  Fixture f;
  fill(f);
  ListQuery query;
  query.limit = 4;
  const ListPage first = f.store.list("m1", query, kT0 + 10'000);
  CHECK(keys_of(first) == std::vector<std::string>{"k5", "k4", "k3", "k2"});
  CHECK(first.next_cursor == std::to_string(kT0 + 2000) + ".k2");
  CHECK(first.records[1].status == 201);
  CHECK(first.records[1].resource_id == "1");
  CHECK(first.records[3].state == State::failed);
  query.cursor = first.next_cursor;
  const ListPage second = f.store.list("m1", query, kT0 + 10'000);
  CHECK(keys_of(second) == std::vector<std::string>{"k1", "k0"});
  CHECK(second.next_cursor.empty());
  // Exactly one page's worth: no next page.
  query = {};
  query.limit = 6;
  CHECK(f.store.list("m1", query, kT0 + 10'000).next_cursor.empty());
  CHECK(keys_of(f.store.list("m2", {}, kT0 + 10'000)) == std::vector<std::string>{"kx"});
  CHECK(f.store.list("m3", {}, kT0).records.empty());
}

TEST_CASE("list: filters by state and created time, refuses a bad limit or cursor") {
  Fixture f;
  fill(f);
  ListQuery query;
  query.state = State::completed;
  CHECK(keys_of(f.store.list("m1", query, kT0 + 10'000)) == std::vector<std::string>{"k4", "k1"});
  query.state = State::in_progress;
  CHECK(keys_of(f.store.list("m1", query, kT0 + 10'000)) ==
        std::vector<std::string>{"k5", "k3", "k0"});
  query.state = State::failed;
  CHECK(keys_of(f.store.list("m1", query, kT0 + 10'000)) == std::vector<std::string>{"k2"});
  query = {};
  query.created_from = kT0 + 1000;
  query.created_until = kT0 + 4000;  // exclusive
  CHECK(keys_of(f.store.list("m1", query, kT0 + 10'000)) ==
        std::vector<std::string>{"k3", "k2", "k1"});
  // The expired record shows only while it lives.
  query.created_from = 0;
  query.created_until = kT0;
  CHECK(keys_of(f.store.list("m1", query, kT0 - 1)) == std::vector<std::string>{"old"});
  CHECK(f.store.list("m1", query, kT0).records.empty());

  const auto refused = [&](int limit, std::string cursor, std::string_view message) {
    ListQuery bad;
    bad.limit = limit;
    bad.cursor = std::move(cursor);
    try {
      f.store.list("m1", bad, kT0);
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::invalid_argument);
      CHECK(e.what() == std::string(message));
    }
  };
  refused(0, "", "limit must be 1 to 200");
  refused(201, "", "limit must be 1 to 200");
  for (const char* cursor : {"x.k1", "12", ".k1", "12.", "-5.k1"}) {
    refused(50, cursor, "invalid cursor: pass next_cursor of a page");
  }
}

TEST_CASE("counted replays, 409s and 422s reach the record only when flushed") {
  Fixture f;
  const BeginResult done = f.store.begin("m1", "k1", kFp, kT0, "POST /o");
  REQUIRE(f.store.complete(done.lease, kCreated, kT0 + 1));
  for (int i = 0; i < 5; ++i) f.store.counts().add("m1", "k1", BeginOutcome::replay);
  for (int i = 0; i < 3; ++i) f.store.counts().add("m1", "k1", BeginOutcome::in_progress);
  for (int i = 0; i < 2; ++i) f.store.counts().add("m1", "k1", BeginOutcome::mismatch);
  f.store.counts().add("m1", "k1", BeginOutcome::reacquired);  // not counted
  f.store.counts().add("m1", "gone", BeginOutcome::replay);    // no record: nothing written
  CHECK(f.store.counts().pending_keys() == 2);
  CHECK(f.store.lookup("m1", "k1", kT0 + 2)->replays == 0);  // not flushed yet

  CHECK(f.store.flush_counts() == 2);
  CHECK(f.store.counts().pending_keys() == 0);
  std::optional<RecordView> view = f.store.lookup("m1", "k1", kT0 + 2);
  REQUIRE(view);
  CHECK(view->replays == 5);
  CHECK(view->conflicts == 3);
  CHECK(view->mismatches == 2);
  CHECK(view->updated_at == kT0 + 1);  // counting is not a change of state
  CHECK_FALSE(f.store.lookup("m1", "gone", kT0 + 2));

  f.store.counts().add("m1", "k1", BeginOutcome::replay);
  CHECK(f.store.flush_counts() == 1);
  CHECK(f.store.flush_counts() == 0);
  CHECK(f.store.lookup("m1", "k1", kT0 + 2)->replays == 6);
}

TEST_CASE("the guard counts each replay, 409 and 422 without a write, Maintenance flushes") {
  FakeClock clock{kT0};
  Fixture f;
  LeaseKeeper keeper{f.store, clock, 1h};
  Guard guard{f.store, keeper, clock};
  const auto post = [&](std::string_view key, std::string_view body) {
    return guard.run_in_transaction("m1", key, "POST", "/orders", body,
                                    [](db::Transaction&, const BeginResult&) {
                                      return Response{201, {}, "{\"id\":\"o1\"}"};
                                    });
  };
  CHECK(post("k1", "{\"a\":1}").status == 201);
  for (int i = 0; i < 4; ++i) CHECK(post("k1", "{\"a\":1}").status == 201);  // replays
  for (int i = 0; i < 3; ++i) CHECK(post("k1", "{\"a\":2}").status == 422);
  CHECK(guard
            .run("m1", "k2", "POST", "/payouts", "{}",
                 [&](Attempt&) {
                   CHECK(guard
                             .run("m1", "k2", "POST", "/payouts", "{}",
                                  [](Attempt&) {
                                    return Response{201, {}, "{}"};
                                  })
                             .status == 409);
                   return Response{502, {}, "{}"};
                 })
            .status == 502);
  {
    Maintenance maintenance(f.store, clock, 1h, 1h);
    CHECK(maintenance.run_once().flushed == 2);
  }
  const std::optional<RecordView> k1 = f.store.lookup("m1", "k1", kT0);
  REQUIRE(k1);
  CHECK(k1->route == "POST /orders");
  CHECK(k1->resource_id == "o1");
  CHECK(k1->replays == 4);
  CHECK(k1->conflicts == 0);
  CHECK(k1->mismatches == 3);
  const std::optional<RecordView> k2 = f.store.lookup("m1", "k2", kT0);
  REQUIRE(k2);
  CHECK(k2->state == State::failed);
  CHECK(k2->route == "POST /payouts");
  CHECK(k2->status == 502);
  CHECK(k2->conflicts == 1);
}
