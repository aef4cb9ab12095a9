// The idempotency store's records on the engine named by WEBHOOKS_TEST_ENGINE: how a record is
// stored, fingerprints refused, and begin_deferred with complete_begun.
#include <catch2/catch.hpp>
#include <thread>

#include "store_fixture.h"
#include "support/test_env.h"
#include "webhooks/error.h"
#include "webhooks/fingerprint.h"
#include "webhooks/idempotency/schema.h"
#include "webhooks/idempotency/store.h"

using namespace webhooks;
using namespace webhooks::idempotency;
using namespace webhooks::test;
using namespace std::chrono_literals;

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
  const db::Rows rows = f.db->exec("SELECT idempotency_key, " + length +
                                   "(fingerprint), state, "
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
  const db::Rows raw = f.db->exec(
      "SELECT fingerprint FROM idempotency_records WHERE "
      "idempotency_key = 'with'");
  REQUIRE(raw.text(0, 0).size() == 32);
  CHECK(static_cast<unsigned char>(raw.text(0, 0)[0]) == std::stoi(kFp.substr(0, 2), nullptr, 16));
  CHECK(static_cast<unsigned char>(raw.text(0, 0)[31]) ==
        std::stoi(kFp.substr(62, 2), nullptr, 16));

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

TEST_CASE(
    "begin_deferred + complete_begun: one write for a new record on SQLite, begin first on "
    "PostgreSQL") {
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
