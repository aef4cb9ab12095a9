// A database made by the schema before the old migration 0005 (now idempotency's 0002)
// (fingerprints as 64 hex digits, states by name, "[]" for no headers, an updated_at column) opens
// and works after it: its records replay, mismatch, block and reacquire exactly as before. On the
// engine named by WEBHOOKS_TEST_ENGINE.
#include <catch2/catch.hpp>

#include "store_fixture.h"
#include "support/legacy_schema.h"
#include "support/test_env.h"
#include "webhooks/db.h"
#include "webhooks/fingerprint.h"
#include "webhooks/idempotency/schema.h"
#include "webhooks/idempotency/store.h"

using namespace webhooks;
using namespace webhooks::idempotency;
using webhooks::test::kT0;  // the store tests' fixed time (store_fixture.h)

namespace {

constexpr UnixMillis kTtl = 24LL * 3600 * 1000;

// A record as the store wrote it before migration 0005.
void insert_old_record(db::Database& db, std::string_view key, std::string_view fingerprint,
                       std::string_view state, std::optional<std::string_view> lease_owner,
                       std::int64_t lease_expires_at, std::int64_t attempts, std::int64_t status,
                       std::string_view headers, std::string_view body) {
  const bool has_response = state == "completed";
  db.exec(
      "INSERT INTO idempotency_records (scope, idempotency_key, fingerprint, state, lease_owner, "
      "lease_expires_at, attempts, response_status, response_headers, response_body, created_at, "
      "updated_at, expires_at) VALUES ('m1', $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
      {key, fingerprint, state, lease_owner ? db::Param(*lease_owner) : db::Param(nullptr),
       lease_expires_at ? db::Param(lease_expires_at) : db::Param(nullptr), attempts,
       has_response ? db::Param(status) : db::Param(nullptr),
       has_response ? db::Param(headers) : db::Param(nullptr),
       has_response ? db::Param(body) : db::Param(nullptr), kT0, kT0 + 10, kT0 + kTtl});
}

std::string upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

// The six records after the upgrade: fingerprints of 32 bytes, states as numbers, "[]" as NULL.
void check_converted(db::Database& database) {
  db::Database* db = &database;
  const std::string length = db->engine() == db::Engine::sqlite ? "length" : "octet_length";
  const db::Rows stored = db->exec("SELECT idempotency_key, " + length +
                                   "(fingerprint), state, "
                                   "response_headers FROM idempotency_records ORDER BY "
                                   "idempotency_key");
  REQUIRE(stored.size() == 6);
  const char* keys[] = {"busy", "done", "failed", "odd", "plain", "upper"};
  const std::int64_t states[] = {0, 1, 2, 1, 1, 1};
  for (std::size_t i = 0; i < 6; ++i) {
    CHECK(stored.text(i, 0) == keys[i]);
    CHECK(stored.integer(i, 1) == 32);
    CHECK(stored.integer(i, 2) == states[i]);
  }
  CHECK(stored.text(1, 3) == "[[\"Location\",\"/orders/1\"]]");
  CHECK(stored.is_null(4, 3));  // "[]" became NULL
  CHECK(stored.is_null(5, 3));
}

// The converted records replay, mismatch, block and reacquire as before the upgrade.
void check_records_work(Store& store, const std::string& fp, const std::string& other) {
  const UnixMillis now = kT0 + 1000;
  const BeginResult done = store.begin("m1", "done", fp, now);
  webhooks::test::check_replays_created(done);
  CHECK(store.begin("m1", "done", other, now).outcome == BeginOutcome::mismatch);

  const BeginResult plain = store.begin("m1", "plain", fp, now);
  CHECK(plain.outcome == BeginOutcome::replay);
  REQUIRE(plain.response);
  CHECK(plain.response->status == 200);
  CHECK(plain.response->headers.empty());
  CHECK(plain.response->body == "ok");
  CHECK(store.begin("m1", "upper", fp, now).outcome == BeginOutcome::replay);
  CHECK(store.find("m1", "upper")->fingerprint == fp);  // lowercase hex again

  const BeginResult busy = store.begin("m1", "busy", fp, now);
  CHECK(busy.outcome == BeginOutcome::in_progress);
  CHECK(busy.lease_expires_at == kT0 + 30'000);
  // The lease taken before the upgrade still settles its record.
  CHECK(store.complete(Lease{"m1", "busy", "old-token"}, Response{201, {}, "{\"id\":\"2\"}"}, now));
  CHECK(store.begin("m1", "busy", fp, now + 1).outcome == BeginOutcome::replay);

  const BeginResult failed = store.begin("m1", "failed", fp, now);
  CHECK(failed.outcome == BeginOutcome::reacquired);
  CHECK(failed.attempts == 2);

  // A fingerprint that was not 64 hex digits became 32 zero bytes: never a replay.
  CHECK(store.begin("m1", "odd", fp, now).outcome == BeginOutcome::mismatch);
  CHECK(store.find("m1", "odd")->fingerprint == std::string(64, '0'));
}

}  // namespace

TEST_CASE("migration 0005 converts the records of an older database in place") {
  const std::string target = test::database_target("upgrade");
  auto db = std::shared_ptr<db::Database>(db::Database::open(target));
  test::migrate_as_before_components(*db, 4, kT0);  // today's 0001-0004
  const std::string fp = sha256_hex("POST\n/orders\n{}");
  const std::string other = sha256_hex("POST\n/orders\n{\"amount\":1}");
  insert_old_record(*db, "done", fp, "completed", std::nullopt, 0, 1, 201,
                    "[[\"Location\",\"/orders/1\"]]", "{\"id\":\"1\"}");
  insert_old_record(*db, "plain", fp, "completed", std::nullopt, 0, 1, 200, "[]", "ok");
  insert_old_record(*db, "upper", upper(fp), "completed", std::nullopt, 0, 1, 204, "[]", "");
  insert_old_record(*db, "busy", fp, "in_progress", "old-token", kT0 + 30'000, 1, 0, "", "");
  insert_old_record(*db, "failed", fp, "failed", std::nullopt, 0, 1, 0, "", "");
  insert_old_record(*db, "odd", "fp", "completed", std::nullopt, 0, 1, 201, "[]", "x");

  // The old sequence's 0001-0004 are adopted; the idempotency component's 0002 (the old 0005),
  // 0003, 0004 and 0005 run.
  CHECK(db->migrate({schema()}, kT0 + 1) == 4);
  CHECK(db->migrate({schema()}, kT0 + 2) == 0);

  check_converted(*db);

  Store store(db, Settings{std::chrono::seconds(30), std::chrono::hours(24)});
  check_records_work(store, fp, other);

  CHECK(store.purge(kT0 + kTtl) == 6);
  CHECK(db->exec("SELECT COUNT(*) FROM idempotency_records").integer(0, 0) == 0);
}
