// The idempotency store on the engine named by WEBHOOKS_TEST_ENGINE, with a fake clock.
#include "webhooks/idempotency/store.h"

#include <catch2/catch.hpp>
#include <thread>

#include "store_fixture.h"
#include "support/test_env.h"
#include "webhooks/error.h"
#include "webhooks/fingerprint.h"
#include "webhooks/idempotency/schema.h"

using namespace webhooks;
using namespace webhooks::idempotency;
using namespace webhooks::test;
using namespace std::chrono_literals;

TEST_CASE("the first begin acquires; a completed record replays its response") {
  Fixture f;
  const BeginResult first = f.store.begin("m1", "k1", kFp, kT0);
  CHECK(first.outcome == BeginOutcome::acquired);
  CHECK(first.attempts == 1);
  CHECK(first.lease.scope == "m1");
  CHECK(first.lease.key == "k1");
  CHECK(first.lease.token.size() == 24);
  CHECK(f.store.complete(first.lease, kCreated, kT0 + 10));

  const BeginResult again = f.store.begin("m1", "k1", kFp, kT0 + 20);
  check_replays_created(again);
  CHECK(again.lease.token.empty());

  const auto record = f.store.find("m1", "k1");
  REQUIRE(record);
  CHECK(record->state == State::completed);
  CHECK(record->expires_at == kT0 + 24 * 3600 * 1000);
  CHECK_FALSE(record->lease_owner);
}

TEST_CASE("a live lease answers in_progress with its expiry; a different body is a mismatch") {
  Fixture f;
  const BeginResult first = f.store.begin("m1", "k1", kFp, kT0);
  const BeginResult busy = f.store.begin("m1", "k1", kFp, kT0 + 1000);
  CHECK(busy.outcome == BeginOutcome::in_progress);
  CHECK(busy.lease_expires_at == kT0 + 30'000);
  CHECK(f.store.begin("m1", "k1", kOther, kT0 + 1000).outcome == BeginOutcome::mismatch);
  CHECK(f.store.complete(first.lease, kCreated, kT0 + 2000));
  CHECK(f.store.begin("m1", "k1", kOther, kT0 + 3000).outcome == BeginOutcome::mismatch);
}

TEST_CASE("scopes are separate") {
  Fixture f;
  CHECK(f.store.begin("m1", "k1", kFp, kT0).outcome == BeginOutcome::acquired);
  CHECK(f.store.begin("m2", "k1", kFp, kT0).outcome == BeginOutcome::acquired);
}

TEST_CASE("failed records and lapsed leases are reacquired") {
  Fixture f;
  const BeginResult first = f.store.begin("m1", "k1", kFp, kT0);
  CHECK(f.store.fail(first.lease, kT0 + 5));
  const BeginResult second = f.store.begin("m1", "k1", kFp, kT0 + 10);
  CHECK(second.outcome == BeginOutcome::reacquired);
  CHECK(second.attempts == 2);
  CHECK(second.lease.token != first.lease.token);
  // The old holder can no longer settle the record.
  CHECK_FALSE(f.store.complete(first.lease, kCreated, kT0 + 20));
  CHECK_FALSE(f.store.fail(first.lease, kT0 + 20));
  // The new holder crashes: its lease lapses 30 s later.
  CHECK(f.store.begin("m1", "k1", kFp, kT0 + 10 + 29'999).outcome == BeginOutcome::in_progress);
  const BeginResult third = f.store.begin("m1", "k1", kFp, kT0 + 10 + 30'000);
  CHECK(third.outcome == BeginOutcome::reacquired);
  CHECK(third.attempts == 3);
  CHECK_FALSE(f.store.renew(second.lease, kT0 + 40'000));
  CHECK(f.store.complete(third.lease, kCreated, kT0 + 40'001));
  CHECK(f.store.begin("m1", "k1", kFp, kT0 + 50'000).outcome == BeginOutcome::replay);
}

TEST_CASE("a heartbeat keeps the lease alive") {
  Fixture f;
  const BeginResult first = f.store.begin("m1", "k1", kFp, kT0);
  for (int i = 1; i <= 5; ++i) REQUIRE(f.store.renew(first.lease, kT0 + i * 20'000));
  const BeginResult busy = f.store.begin("m1", "k1", kFp, kT0 + 110'000);
  CHECK(busy.outcome == BeginOutcome::in_progress);
  CHECK(busy.lease_expires_at == kT0 + 130'000);
}

TEST_CASE("after the TTL the same key is a new request") {
  Fixture f;
  const BeginResult first = f.store.begin("m1", "k1", kFp, kT0);
  CHECK(f.store.complete(first.lease, kCreated, kT0 + 1));
  const UnixMillis later = kT0 + 24 * 3600 * 1000;
  const BeginResult fresh = f.store.begin("m1", "k1", kDifferent, later);
  CHECK(fresh.outcome == BeginOutcome::acquired);
  CHECK(fresh.attempts == 1);
  const auto record = f.store.find("m1", "k1");
  CHECK(record->fingerprint == kDifferent);
  CHECK(record->created_at == later);
  CHECK_FALSE(record->response);
}

TEST_CASE("the sweeper fails lapsed leases; the purge deletes expired records") {
  Fixture f;
  const BeginResult a = f.store.begin("m1", "a", kFp, kT0);
  const BeginResult b = f.store.begin("m1", "b", kFp, kT0 + 10'000);
  const BeginResult c = f.store.begin("m1", "c", kFp, kT0);
  CHECK(f.store.complete(c.lease, kCreated, kT0));
  CHECK(f.store.sweep(kT0 + 30'000) == 1);  // only a's lease has lapsed
  CHECK(f.store.find("m1", "a")->state == State::failed);
  CHECK(f.store.find("m1", "b")->state == State::in_progress);
  CHECK_FALSE(f.store.complete(a.lease, kCreated, kT0 + 30'001));
  CHECK(f.store.sweep(kT0 + 30'000) == 0);
  (void)b;
  CHECK(f.store.purge(kT0 + 24 * 3600 * 1000 - 1) == 0);
  CHECK(f.store.purge(kT0 + 24 * 3600 * 1000) == 2);  // a and c
  CHECK_FALSE(f.store.find("m1", "a"));
  CHECK(f.store.find("m1", "b"));
  CHECK(f.store.purge(kT0 + 48 * 3600 * 1000, 1) == 1);
}

TEST_CASE("racing callers: exactly one acquires") {
  Fixture f;
  constexpr int kThreads = 16;
  std::vector<BeginOutcome> outcomes(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      outcomes[static_cast<std::size_t>(i)] = f.store.begin("m1", "race", kFp, kT0).outcome;
    });
  }
  for (auto& t : threads) t.join();
  CHECK(std::count(outcomes.begin(), outcomes.end(), BeginOutcome::acquired) == 1);
  CHECK(std::count(outcomes.begin(), outcomes.end(), BeginOutcome::in_progress) == kThreads - 1);
}

TEST_CASE("complete inside the caller's transaction commits or rolls back with its writes") {
  Fixture f;
  f.db->exec("CREATE TABLE orders (id TEXT PRIMARY KEY)");
  const BeginResult first = f.store.begin("m1", "k1", kFp, kT0);
  CHECK_THROWS_AS(f.db->transact([&](db::Transaction& tx) {
    tx.exec("INSERT INTO orders (id) VALUES ($1)", {"o1"});
    REQUIRE(f.store.complete(tx, first.lease, kCreated, kT0 + 1));
    throw Error(ErrorCode::io, "the operation fails after writing");
  }),
                  Error);
  CHECK(f.db->exec("SELECT COUNT(*) FROM orders").integer(0, 0) == 0);
  CHECK(f.store.find("m1", "k1")->state == State::in_progress);

  f.db->transact([&](db::Transaction& tx) {
    tx.exec("INSERT INTO orders (id) VALUES ($1)", {"o1"});
    REQUIRE(f.store.complete(tx, first.lease, kCreated, kT0 + 2));
  });
  CHECK(f.db->exec("SELECT COUNT(*) FROM orders").integer(0, 0) == 1);
  CHECK(f.store.find("m1", "k1")->state == State::completed);
}

TEST_CASE("begin and fail inside the caller's transaction hold only once it commits") {
  Fixture f;
  const auto acquire_then_throw = [&](db::Transaction& tx) {
    REQUIRE(f.store.begin(tx, "m1", "k1", kFp, kT0).outcome == BeginOutcome::acquired);
    throw Error(ErrorCode::io, "rolled back");
  };
  CHECK_THROWS_AS(f.db->transact(acquire_then_throw), Error);
  CHECK_FALSE(f.store.find("m1", "k1"));

  BeginResult first, second, busy, other;
  f.db->transact([&](db::Transaction& tx) {
    first = f.store.begin(tx, "m1", "k1", kFp, kT0);
    second = f.store.begin(tx, "m1", "k2", kFp, kT0);
    busy = f.store.begin(tx, "m1", "k1", kFp, kT0 + 1);
    other = f.store.begin(tx, "m1", "k1", kOther, kT0 + 1);
  });
  CHECK(first.outcome == BeginOutcome::acquired);
  CHECK(first.attempts == 1);
  CHECK(first.lease.token.size() == 24);
  CHECK(second.outcome == BeginOutcome::acquired);
  CHECK(busy.outcome == BeginOutcome::in_progress);
  CHECK(busy.lease_expires_at == kT0 + 30'000);
  CHECK(other.outcome == BeginOutcome::mismatch);
  CHECK(f.store.find("m1", "k1")->state == State::in_progress);

  bool failed = false, completed = false, stale = true;
  f.db->transact([&](db::Transaction& tx) {
    failed = f.store.fail(tx, first.lease, kT0 + 2);
    completed = f.store.complete(tx, second.lease, kCreated, kT0 + 2);
    stale = f.store.fail(tx, first.lease, kT0 + 3);  // no longer in_progress
  });
  CHECK(failed);
  CHECK(completed);
  CHECK_FALSE(stale);
  CHECK(f.store.find("m1", "k1")->state == State::failed);

  BeginResult again, replay;
  f.db->transact([&](db::Transaction& tx) {
    again = f.store.begin(tx, "m1", "k1", kFp, kT0 + 4);
    replay = f.store.begin(tx, "m1", "k2", kFp, kT0 + 4);
  });
  CHECK(again.outcome == BeginOutcome::reacquired);
  CHECK(again.attempts == 2);
  CHECK(again.created_at == kT0);
  CHECK(again.lease.token != first.lease.token);
  CHECK(replay.outcome == BeginOutcome::replay);
  REQUIRE(replay.response);
  CHECK(replay.response->status == 201);
}

TEST_CASE("peek gives begin's outcome without writing") {
  Fixture f;
  const BeginResult absent = f.store.peek("m1", "k1", kFp, kT0);
  CHECK(absent.outcome == BeginOutcome::acquired);
  CHECK(absent.attempts == 1);
  CHECK(absent.lease.token.empty());
  CHECK_FALSE(f.store.find("m1", "k1"));  // peek wrote nothing
  const BeginResult first = f.store.begin("m1", "k1", kFp, kT0);

  const BeginResult busy = f.store.peek("m1", "k1", kFp, kT0 + 1000);
  CHECK(busy.outcome == BeginOutcome::in_progress);
  CHECK(busy.lease_expires_at == kT0 + 30'000);
  CHECK(busy.lease.token.empty());
  CHECK(f.store.peek("m1", "k1", kOther, kT0 + 1000).outcome == BeginOutcome::mismatch);
  const BeginResult lapsed = f.store.peek("m1", "k1", kFp, kT0 + 30'000);
  CHECK(lapsed.outcome == BeginOutcome::reacquired);  // the lease lapsed: begin takes it over
  CHECK(lapsed.attempts == 2);
  CHECK(lapsed.created_at == kT0);
  CHECK(lapsed.lease.token.empty());

  REQUIRE(f.store.complete(first.lease, kCreated, kT0 + 2000));
  const BeginResult replay = f.store.peek("m1", "k1", kFp, kT0 + 3000);
  CHECK(replay.outcome == BeginOutcome::replay);
  REQUIRE(replay.response);
  CHECK(replay.response->status == 201);
  CHECK(replay.response->headers.size() == 1);
  CHECK(replay.created_at == kT0);
  CHECK(replay.attempts == 1);
  const BeginResult expired = f.store.peek("m1", "k1", kFp, kT0 + 24 * 3600 * 1000);
  CHECK(expired.outcome == BeginOutcome::acquired);  // expired: as if absent
  CHECK(expired.attempts == 1);

  const BeginResult second = f.store.begin("m1", "k2", kFp, kT0);
  REQUIRE(f.store.fail(second.lease, kT0 + 1));
  const BeginResult failed = f.store.peek("m1", "k2", kFp, kT0 + 2);
  CHECK(failed.outcome == BeginOutcome::reacquired);  // failed: begin reacquires
  CHECK(failed.attempts == 2);
  CHECK(f.store.peek("m1", "k2", kOther, kT0 + 2).outcome == BeginOutcome::mismatch);
  CHECK(f.store.find("m1", "k2")->state == State::failed);  // peek wrote nothing
  CHECK(f.store.find("m1", "k2")->attempts == 1);
}

TEST_CASE("final statuses: 2xx and deterministic 4xx") {
  for (int s : {200, 201, 204, 400, 401, 403, 404, 410, 422}) CHECK(is_final_status(s));
  for (int s : {100, 301, 408, 409, 425, 429, 500, 502, 503, 504}) CHECK_FALSE(is_final_status(s));
  CHECK(to_string(BeginOutcome::reacquired) == "reacquired");
  CHECK(to_string(State::in_progress) == "in_progress");
}
