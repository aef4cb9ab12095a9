// Store::lookup, Store::list and the counted replays, 409s and 422s (Store::flush_counts), on the
// engine named by WEBHOOKS_TEST_ENGINE.
#include <catch2/catch.hpp>

#include "store_fixture.h"
#include "webhooks/error.h"
#include "webhooks/idempotency/guard.h"

using namespace webhooks;
using namespace webhooks::idempotency;
using namespace webhooks::test;
using namespace std::chrono_literals;

namespace {

constexpr UnixMillis kDay = 24 * 3600 * 1000;

}  // namespace

TEST_CASE("lookup shows a record in progress, completed and failed") {
  Fixture f;
  f.store.begin("m1", "busy", kFp, kT0, "POST /orders");
  const std::optional<RecordView> busy = f.store.lookup("m1", "busy", kT0 + 1);
  REQUIRE(busy);
  CHECK(busy->key == "busy");
  CHECK(busy->state == State::in_progress);
  CHECK(busy->route == "POST /orders");
  CHECK(busy->fingerprint == kFp);
  CHECK(busy->attempts == 1);
  CHECK_FALSE(busy->status);
  CHECK(busy->created_at == kT0);
  CHECK(busy->updated_at == kT0);
  CHECK(busy->expires_at == kT0 + kDay);
  CHECK_FALSE(busy->resource_id);
  CHECK(busy->replays + busy->conflicts + busy->mismatches == 0);

  const BeginResult done = f.store.begin("m1", "done", kFp, kT0, "POST /orders");
  REQUIRE(f.store.complete(done.lease, kCreated, kT0 + 5));
  const std::optional<RecordView> completed = f.store.lookup("m1", "done", kT0 + 6);
  REQUIRE(completed);
  CHECK(completed->state == State::completed);
  CHECK(completed->status == 201);
  CHECK(completed->updated_at == kT0 + 5);
  CHECK(completed->resource_id == "1");

  const BeginResult broke = f.store.begin("m1", "broke", kOther, kT0 + 1, "POST /payouts");
  REQUIRE(f.store.fail(broke.lease, kT0 + 7, 502));
  const BeginResult again = f.store.begin("m1", "broke", kOther, kT0 + 8, "POST /payouts");
  CHECK(again.outcome == BeginOutcome::reacquired);
  REQUIRE(f.store.fail(again.lease, kT0 + 9, 503));
  const std::optional<RecordView> failed = f.store.lookup("m1", "broke", kT0 + 10);
  REQUIRE(failed);
  CHECK(failed->state == State::failed);
  CHECK(failed->route == "POST /payouts");
  CHECK(failed->fingerprint == kOther);
  CHECK(failed->attempts == 2);
  CHECK(failed->status == 503);
  CHECK(failed->created_at == kT0 + 1);
  CHECK(failed->updated_at == kT0 + 9);
  CHECK_FALSE(failed->resource_id);
  // A failed record's status is for lookup only: the retry runs again.
  CHECK(f.store.begin("m1", "broke", kOther, kT0 + 11).outcome == BeginOutcome::reacquired);
}

TEST_CASE("lookup: an expired record, another scope's and an unknown key are absent") {
  Fixture f;
  const BeginResult done = f.store.begin("m1", "k1", kFp, kT0, "POST /orders");
  REQUIRE(f.store.complete(done.lease, Response{200, {}, "{\"id\":42}"}, kT0 + 1));
  REQUIRE(f.store.lookup("m1", "k1", kT0 + kDay - 1));
  CHECK(f.store.lookup("m1", "k1", kT0 + kDay - 1)->resource_id == "42");
  CHECK_FALSE(f.store.lookup("m1", "k1", kT0 + kDay));
  CHECK_FALSE(f.store.lookup("m2", "k1", kT0 + 2));
  CHECK_FALSE(f.store.lookup("m1", "k2", kT0 + 2));
  // A body that is not an object with an id names no resource.
  const BeginResult plain = f.store.begin("m1", "plain", kFp, kT0);
  REQUIRE(f.store.complete(plain.lease, Response{204, {}, ""}, kT0 + 1));
  const std::optional<RecordView> view = f.store.lookup("m1", "plain", kT0 + 2);
  REQUIRE(view);
  CHECK_FALSE(view->resource_id);
  CHECK(view->route.empty());  // begun without a route
}

TEST_CASE("a deferred begin stores its route when complete_begun inserts the record") {
  Fixture f;
  f.db->transact([&](db::Transaction& tx) {
    const BeginResult begun = f.store.begin_deferred(tx, "m1", "k1", kFp, kT0, "PUT /orders/7");
    REQUIRE(f.store.complete_begun(tx, begun, kFp, Response{200, {}, "{\"id\":\"7\"}"}, kT0 + 3));
  });
  const std::optional<RecordView> view = f.store.lookup("m1", "k1", kT0 + 4);
  REQUIRE(view);
  CHECK(view->route == "PUT /orders/7");
  CHECK(view->state == State::completed);
  CHECK(view->created_at == kT0);
  CHECK(view->updated_at == kT0 + 3);
  CHECK(view->resource_id == "7");
}
