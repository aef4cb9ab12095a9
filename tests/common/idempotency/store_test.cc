// The idempotency store on the engine named by WEBHOOKS_TEST_ENGINE, with a fake clock.
#include <catch2/catch.hpp>
#include <thread>

#include "support/test_env.h"
#include "webhooks/error.h"
#include "webhooks/fingerprint.h"
#include "webhooks/idempotency/schema.h"
#include "webhooks/idempotency/store.h"

using namespace webhooks;
using namespace webhooks::idempotency;
using namespace std::chrono_literals;

namespace {

constexpr UnixMillis kT0 = 1'700'000'000'000;
// Request fingerprints as request_fingerprint gives them: 64 hex digits.
const std::string kFp = sha256_hex("fp");
const std::string kOther = sha256_hex("other");
const std::string kDifferent = sha256_hex("different");

struct Fixture {
  std::shared_ptr<db::Database> db = test::open_database("store", {idempotency::schema()});
  Store store{db, Settings{30s, 24h}};
};

const Response kCreated{201, {{"Location", "/orders/1"}}, "{\"id\":\"1\"}"};

}  // namespace

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
  CHECK(again.outcome == BeginOutcome::replay);
  REQUIRE(again.response);
  CHECK(again.response->status == 201);
  CHECK(again.response->body == "{\"id\":\"1\"}");
  REQUIRE(again.response->headers.size() == 1);
  CHECK(again.response->headers[0] == std::pair<std::string, std::string>{"Location", "/orders/1"});
  CHECK(again.lease.token.empty());
  CHECK(again.created_at == kT0);

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
    threads.emplace_back([&, i] { outcomes[static_cast<std::size_t>(i)] = f.store.begin("m1", "race", kFp, kT0).outcome; });
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

TEST_CASE("a record holds its fingerprint as 32 bytes, its state as a code, no headers as NULL") {
  Fixture f;
  const BeginResult with = f.store.begin("m1", "with", kFp, kT0);
  REQUIRE(f.store.complete(with.lease, kCreated, kT0 + 1));
  // Either case of hex digits is the same fingerprint.
  std::string upper = kFp;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const BeginResult without = f.store.begin("m1", "without", upper, kT0);
  REQUIRE(f.store.complete(without.lease, Response{204, {}, ""}, kT0 + 1));
  const BeginResult busy = f.store.begin("m1", "busy", kFp, kT0);
  const BeginResult failed = f.store.begin("m1", "failed", kFp, kT0);
  REQUIRE(f.store.fail(failed.lease, kT0 + 1));
  (void)busy;

  const std::string length = f.db->engine() == db::Engine::sqlite ? "length" : "octet_length";
  const db::Rows rows = f.db->exec("SELECT idempotency_key, " + length + "(fingerprint), state, "
                                   "response_headers, lease_owner FROM idempotency_records "
                                   "ORDER BY idempotency_key");
  REQUIRE(rows.size() == 4);
  CHECK(rows.text(0, 0) == "busy");
  CHECK(rows.integer(0, 2) == 0);
  CHECK(rows.text(0, 4) == busy.lease.token);
  CHECK(rows.text(1, 0) == "failed");
  CHECK(rows.integer(1, 2) == 2);
  CHECK(rows.is_null(1, 4));
  CHECK(rows.text(2, 0) == "with");
  CHECK(rows.integer(2, 2) == 1);
  CHECK(rows.text(2, 3) == "[[\"Location\",\"/orders/1\"]]");
  CHECK(rows.is_null(2, 4));
  CHECK(rows.text(3, 0) == "without");
  CHECK(rows.integer(3, 2) == 1);
  CHECK(rows.is_null(3, 3));
  for (std::size_t i = 0; i < 4; ++i) CHECK(rows.integer(i, 1) == 32);
  // The stored bytes are the hex digits' bytes.
  const db::Rows raw = f.db->exec("SELECT fingerprint FROM idempotency_records WHERE "
                                  "idempotency_key = 'with'");
  REQUIRE(raw.text(0, 0).size() == 32);
  CHECK(static_cast<unsigned char>(raw.text(0, 0)[0]) == std::stoi(kFp.substr(0, 2), nullptr, 16));
  CHECK(static_cast<unsigned char>(raw.text(0, 0)[31]) == std::stoi(kFp.substr(62, 2), nullptr, 16));

  CHECK(f.store.find("m1", "without")->fingerprint == kFp);  // lowercase hex
  const BeginResult replay = f.store.begin("m1", "without", kFp, kT0 + 2);
  CHECK(replay.outcome == BeginOutcome::replay);
  REQUIRE(replay.response);
  CHECK(replay.response->status == 204);
  CHECK(replay.response->headers.empty());
  CHECK(replay.response->body.empty());
}

TEST_CASE("a fingerprint that is not 64 hex digits is refused and nothing is written") {
  Fixture f;
  const auto refused = [&](std::string_view fingerprint, std::string_view fragment) {
    try {
      f.store.begin("m1", "k1", fingerprint, kT0);
      FAIL("accepted " << fingerprint);
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::invalid_argument);
      CHECK_THAT(e.what(), Catch::Contains(std::string(fragment)));
    }
  };
  refused("fp", "64 hex digits (SHA-256), not 2 characters");
  refused(kFp + "0", "not 65 characters");
  refused("", "not 0 characters");
  refused(kFp.substr(0, 63) + "g", "non-hex character at offset 63");
  CHECK_THROWS_AS(f.store.peek("m1", "k1", "fp", kT0), Error);
  CHECK_FALSE(f.store.find("m1", "k1"));
  f.db->transact([&](db::Transaction& tx) {
    CHECK_THROWS_AS(f.store.begin(tx, "m1", "k1", "zz", kT0), Error);
  });
  CHECK_FALSE(f.store.find("m1", "k1"));
}

TEST_CASE("begin_deferred + complete_begun: one write for a new record on SQLite, begin first on PostgreSQL") {
  Fixture f;
  const bool sqlite = f.db->engine() == db::Engine::sqlite;
  f.db->transact([&](db::Transaction& tx) {
    const BeginResult begun = f.store.begin_deferred(tx, "m1", "k1", kFp, kT0);
    CHECK(begun.outcome == BeginOutcome::acquired);
    CHECK(begun.attempts == 1);
    CHECK(begun.created_at == kT0);
    CHECK(begun.expires_at == kT0 + 24 * 3600 * 1000);
    CHECK(begun.lease.scope == "m1");
    CHECK(begun.lease.key == "k1");
    CHECK(begun.deferred == sqlite);
    CHECK(begun.lease.token.size() == (sqlite ? 0u : 24u));
    // Nothing written yet on SQLite; the in_progress record on PostgreSQL.
    CHECK(tx.exec("SELECT COUNT(*) FROM idempotency_records").integer(0, 0) == (sqlite ? 0 : 1));
    CHECK(f.store.complete_begun(tx, begun, kFp, kCreated, kT0 + 5));
  });
  const auto record = f.store.find("m1", "k1");
  REQUIRE(record);
  CHECK(record->state == State::completed);
  CHECK(record->fingerprint == kFp);
  CHECK(record->attempts == 1);
  CHECK(record->created_at == kT0);
  CHECK(record->expires_at == kT0 + 24 * 3600 * 1000);
  CHECK_FALSE(record->lease_owner);
  REQUIRE(record->response);
  CHECK(record->response->status == 201);
  CHECK(record->response->body == "{\"id\":\"1\"}");
  CHECK(record->response->headers ==
        std::vector<std::pair<std::string, std::string>>{{"Location", "/orders/1"}});

  // Settled outcomes are begin's: a replay, a mismatch.
  f.db->transact([&](db::Transaction& tx) {
    const BeginResult replay = f.store.begin_deferred(tx, "m1", "k1", kFp, kT0 + 10);
    CHECK(replay.outcome == BeginOutcome::replay);
    CHECK_FALSE(replay.deferred);
    CHECK(f.store.begin_deferred(tx, "m1", "k1", kOther, kT0 + 10).outcome ==
          BeginOutcome::mismatch);
  });

  // Past its expiry the record is replaced by a new one, completed in one write on SQLite.
  const UnixMillis later = kT0 + 24 * 3600 * 1000 + 1;
  f.db->transact([&](db::Transaction& tx) {
    const BeginResult again = f.store.begin_deferred(tx, "m1", "k1", kOther, later);
    CHECK(again.outcome == BeginOutcome::acquired);
    CHECK(again.deferred == sqlite);
    CHECK(f.store.complete_begun(tx, again, kOther, Response{200, {}, "{}"}, later));
  });
  const auto replaced = f.store.find("m1", "k1");
  REQUIRE(replaced);
  CHECK(replaced->fingerprint == kOther);
  CHECK(replaced->created_at == later);
  CHECK(replaced->attempts == 1);
  CHECK(replaced->response->body == "{}");
  CHECK(replaced->response->headers.empty());
}

TEST_CASE("begin_deferred reacquires a failed record with a lease, as begin does") {
  Fixture f;
  const BeginResult first = f.store.begin("m1", "k2", kFp, kT0);
  REQUIRE(f.store.fail(first.lease, kT0 + 1));
  f.db->transact([&](db::Transaction& tx) {
    const BeginResult again = f.store.begin_deferred(tx, "m1", "k2", kFp, kT0 + 2);
    CHECK(again.outcome == BeginOutcome::reacquired);
    CHECK_FALSE(again.deferred);
    CHECK(again.attempts == 2);
    CHECK(again.lease.token.size() == 24);
    CHECK(f.store.complete_begun(tx, again, kFp, kCreated, kT0 + 3));
  });
  const auto record = f.store.find("m1", "k2");
  REQUIRE(record);
  CHECK(record->state == State::completed);
  CHECK(record->attempts == 2);
}
