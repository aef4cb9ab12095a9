// The idempotency store tests' fixture (store_test.cc, store_records_test.cc; upgrade_test.cc its
// time): a store on the engine named by WEBHOOKS_TEST_ENGINE, a fixed time and fingerprints.
#pragma once

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/test_env.h"
#include "webhooks/fingerprint.h"
#include "webhooks/idempotency/schema.h"
#include "webhooks/idempotency/store.h"

namespace webhooks::test {

using namespace std::chrono_literals;

constexpr UnixMillis kT0 = 1'700'000'000'000;
// Request fingerprints as request_fingerprint gives them: 64 hex digits.
const std::string kFp = sha256_hex("fp");
const std::string kOther = sha256_hex("other");
const std::string kDifferent = sha256_hex("different");

// The first column of the rows `sql` reads, as text.
inline std::vector<std::string> first_column(db::Database& db, std::string_view sql) {
  const db::Rows rows = db.exec(sql);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < rows.size(); ++i) out.push_back(rows.text(i, 0));
  return out;
}

// SQLite: the indexes of idempotency_records by name, and what they are since 0004 (a rowid
// table: its three indexes and the primary key's).
inline std::vector<std::string> sqlite_record_indexes(db::Database& db) {
  return first_column(db,
                      "SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = "
                      "'idempotency_records' ORDER BY name");
}
const std::vector<std::string> kSqliteRecordIndexes{
    "idempotency_records_expires_at", "idempotency_records_lease",
    "idempotency_records_scope_created", "sqlite_autoindex_idempotency_records_1"};

struct Fixture {
  std::shared_ptr<db::Database> db = test::open_database("store", {idempotency::schema()});
  idempotency::Store store{db, idempotency::Settings{30s, 24h}};
};

const idempotency::Response kCreated{201, {{"Location", "/orders/1"}}, "{\"id\":\"1\"}"};

// `begun` is a replay of kCreated (201, Location: /orders/1, {"id":"1"}) first begun at kT0.
inline void check_replays_created(const idempotency::BeginResult& begun) {
  CHECK(begun.outcome == idempotency::BeginOutcome::replay);
  REQUIRE(begun.response);
  CHECK(begun.response->status == 201);
  CHECK(begun.response->body == "{\"id\":\"1\"}");
  REQUIRE(begun.response->headers.size() == 1);
  CHECK(begun.response->headers[0] == std::pair<std::string, std::string>{"Location", "/orders/1"});
  CHECK(begun.created_at == kT0);
}

}  // namespace webhooks::test
