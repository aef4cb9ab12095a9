// Migration 0005 (the state's CHECK as three comparisons; SQLite: the table rebuilt) on a database
// with records of every state: every column kept, in rowid order on SQLite; the rule unchanged
// (0, 1 and 2 taken, anything else refused); and on SQLite the insert of a completed record no
// longer builds a temporary index for the CHECK. On the engine named by WEBHOOKS_TEST_ENGINE.
#include <catch2/catch.hpp>

#include "store_fixture.h"
#include "support/test_env.h"
#include "webhooks/db.h"
#include "webhooks/error.h"
#include "webhooks/idempotency/schema.h"

using namespace webhooks;
using webhooks::test::kT0;

namespace {

// The idempotency component as it was before 0005: migrations 1-4.
db::Component before_0005() {
  db::Component old = idempotency::schema();
  old.sqlite = old.sqlite.first(4);
  old.postgres = old.postgres.first(4);
  return old;
}

void insert(db::Database& db, std::string_view key, std::int64_t state) {
  db.exec(
      "INSERT INTO idempotency_records (scope, idempotency_key, fingerprint, state, attempts, "
      "response_status, response_body, created_at, expires_at) "
      "VALUES ('s', $1, $2, $3, 1, 200, 'ok', $4, $5)",
      {key, db::Bytes{std::string(32, '\x01')}, state, kT0, kT0 + 1000});
}

std::vector<std::string> rows(db::Database& db) {
  const db::Rows r = db.exec(
      "SELECT idempotency_key, state, response_body, created_at FROM idempotency_records ORDER "
      "BY idempotency_key");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < r.size(); ++i) {
    out.push_back(r.text(i, 0) + "|" + std::to_string(r.integer(i, 1)) + "|" + r.text(i, 2) + "|" +
                  std::to_string(r.integer(i, 3)));
  }
  return out;
}

}  // namespace

TEST_CASE("migration 0005 keeps every record; the state is still 0, 1 or 2") {
  auto db = db::Database::open(test::database_target("state_check"));
  REQUIRE(db->migrate({before_0005()}, kT0) == 4);
  insert(*db, "c", 1);
  insert(*db, "a", 0);
  insert(*db, "b", 2);

  CHECK(db->migrate({idempotency::schema()}, kT0 + 1) == 1);
  CHECK(db->migrate({idempotency::schema()}, kT0 + 2) == 0);
  const std::string t0 = std::to_string(kT0);
  CHECK(rows(*db) == std::vector<std::string>{"a|0|ok|" + t0, "b|2|ok|" + t0, "c|1|ok|" + t0});

  insert(*db, "d", 2);
  CHECK_THROWS_WITH(insert(*db, "e", 3), Catch::Contains("CHECK constraint failed") ||
                                             Catch::Contains("idempotency_records_state_check"));
  CHECK_THROWS_WITH(insert(*db, "f", -1), Catch::Contains("CHECK constraint failed") ||
                                              Catch::Contains("idempotency_records_state_check"));
  CHECK(db->exec("SELECT COUNT(*) FROM idempotency_records").integer(0, 0) == 4);

  if (db->engine() == db::Engine::sqlite) {
    // Copied in rowid order, the records' age: c, a, b as inserted, then d.
    CHECK(
        test::first_column(*db, "SELECT idempotency_key FROM idempotency_records ORDER BY rowid") ==
        std::vector<std::string>{"c", "a", "b", "d"});
    CHECK(test::sqlite_record_indexes(*db) == test::kSqliteRecordIndexes);
    // The CHECK's IN over three constants built a temporary index (OpenEphemeral) for every
    // inserted row; three comparisons build none.
    const db::Rows program = db->exec(
        "EXPLAIN INSERT INTO idempotency_records (scope, idempotency_key, fingerprint, state, "
        "created_at, expires_at) VALUES ('s', 'g', zeroblob(32), 1, 0, 0)");
    int ephemeral = 0;
    for (std::size_t i = 0; i < program.size(); ++i) {
      if (program.text(i, 1) == "OpenEphemeral") ++ephemeral;  // columns: addr, opcode, ...
    }
    CHECK(ephemeral == 0);
  }
}
