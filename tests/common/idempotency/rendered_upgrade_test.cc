// Migration 0004 (answers stored by reference; SQLite: the table rebuilt with a rowid) on a
// database whose records were written as the store wrote them before it: every column kept, the
// stored answers replayed byte for byte, leases and counters kept, new answers stored by
// reference. On the engine named by WEBHOOKS_TEST_ENGINE.
#include <catch2/catch.hpp>

#include "store_fixture.h"
#include "support/test_env.h"
#include "webhooks/db.h"
#include "webhooks/idempotency/schema.h"
#include "webhooks/idempotency/store.h"

using namespace webhooks;
using namespace webhooks::idempotency;
using webhooks::test::kFp;
using webhooks::test::kOther;
using webhooks::test::kT0;

namespace {

constexpr UnixMillis kRecordTtl = 24LL * 3600 * 1000;
const std::string kOrderBody =
    R"({"amount":1000,"created_at":"2023-11-14T22:13:20.000Z","currency":"EUR",)"
    R"("id":"018bcfe5-687b-7000-8000-000000000001","merchant_id":"m1","reference":"caf\u00e9",)"
    R"("status":"created"})";
const std::string kOrderHeaders =
    R"([["Location","/orders/018bcfe5-687b-7000-8000-000000000001"]])";

// kFp's 32 bytes, as the fingerprint column holds it.
std::string fingerprint_bytes() {
  std::string bytes;
  for (std::size_t i = 0; i < kFp.size(); i += 2) {
    bytes.push_back(static_cast<char>(std::stoi(kFp.substr(i, 2), nullptr, 16)));
  }
  return bytes;
}

// The idempotency component as it was before 0004: migrations 1-3.
db::Component before_0004() {
  db::Component old = schema();
  old.sqlite = old.sqlite.first(3);
  old.postgres = old.postgres.first(3);
  return old;
}

// A completed record as the store's insert_completed wrote it before 0004 (fingerprint kFp).
void insert_completed(db::Database& db, std::string_view key, std::int64_t status,
                      std::optional<std::string_view> headers, std::string_view body) {
  db.exec(
      "INSERT INTO idempotency_records (scope, idempotency_key, fingerprint, state, lease_owner, "
      "lease_expires_at, attempts, response_status, response_headers, response_body, created_at, "
      "expires_at, route, updated_at) VALUES ('orders-api:m1', $1, $2, 1, NULL, NULL, 1, $3, $4, "
      "$5, $6, $7, 'POST /orders', $8)",
      {key, db::Bytes{fingerprint_bytes()}, status,
       headers ? db::Param(*headers) : db::Param(nullptr), body, kT0, kT0 + kRecordTtl, kT0 + 3});
}

// A record begun as the store's insert wrote it before 0004: in_progress under `token`.
void insert_in_progress(db::Database& db, std::string_view key, std::string_view token) {
  db.exec(
      "INSERT INTO idempotency_records (scope, idempotency_key, fingerprint, state, lease_owner, "
      "lease_expires_at, attempts, created_at, expires_at, route, updated_at) "
      "VALUES ('orders-api:m1', $1, $2, 0, $3, $4, 1, $5, $6, 'POST /orders', $5)",
      {key, db::Bytes{fingerprint_bytes()}, token, kT0 + 30'000, kT0, kT0 + kRecordTtl});
}

// Every column but the fingerprint of every record, in key order, NULL as "NULL".
std::vector<std::string> columns(db::Database& db) {
  const db::Rows rows = db.exec(
      "SELECT scope, idempotency_key, state, lease_owner, lease_expires_at, attempts, "
      "response_status, response_headers, response_body, created_at, expires_at, route, "
      "updated_at, replays, conflicts, mismatches FROM idempotency_records ORDER BY "
      "idempotency_key");
  std::vector<std::string> out;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    std::string line;
    for (std::size_t c = 0; c < 16; ++c) {
      line += (c ? "|" : "") + (rows.is_null(r, c) ? std::string("NULL") : rows.text(r, c));
    }
    out.push_back(line);
  }
  return out;
}

// Renders any reference as 201 {"ref":REF}, for what the store does with new answers.
class Echo final : public ReplayRenderer {
 public:
  std::optional<Response> render(db::Statements&, std::string_view, int,
                                 std::string_view rendered_from) const override {
    return Response{201, {}, "{\"ref\":\"" + std::string(rendered_from) + "\"}"};
  }
  std::optional<std::string> resource_id(std::string_view rendered_from) const override {
    return std::string(rendered_from);
  }
};

}  // namespace

TEST_CASE("migration 0004 keeps the records written before it; they replay as stored") {
  auto db = std::shared_ptr<db::Database>(db::Database::open(test::database_target("upgrade4")));
  REQUIRE(db->migrate({before_0004()}, kT0) == 3);
  insert_completed(*db, "order", 201, kOrderHeaders, kOrderBody);
  insert_completed(*db, "refused", 422, std::nullopt,
                   R"({"error":{"code":"validation_failed","message":"amount"}})");
  insert_in_progress(*db, "running", "old-token");
  db->exec(
      "UPDATE idempotency_records SET replays = 2, mismatches = 1 WHERE idempotency_key = 'order'");
  const std::vector<std::string> before = columns(*db);

  CHECK(db->migrate({schema()}, kT0 + 1) == 2);  // 0004, and 0005 (the state's CHECK)
  CHECK(db->migrate({schema()}, kT0 + 2) == 0);
  CHECK(columns(*db) == before);
  CHECK(columns(*db) ==
        std::vector<std::string>{
            "orders-api:m1|order|1|NULL|NULL|1|201|" + kOrderHeaders + "|" + kOrderBody +
                "|1700000000000|1700086400000|POST /orders|1700000000003|2|NULL|1",
            "orders-api:m1|refused|1|NULL|NULL|1|422|NULL|"
            R"({"error":{"code":"validation_failed","message":"amount"}})"
            "|1700000000000|1700086400000|POST /orders|1700000000003|NULL|NULL|NULL",
            "orders-api:m1|running|0|old-token|1700000030000|1|NULL|NULL|NULL|1700000000000|"
            "1700086400000|POST /orders|1700000000000|NULL|NULL|NULL"});
  CHECK(db->exec("SELECT COUNT(*) FROM idempotency_records WHERE response_ref IS NULL")
            .integer(0, 0) == 3);
  if (db->engine() == db::Engine::sqlite) {
    // A rowid table now, with its three indexes (and the primary key's).
    CHECK(db->exec("SELECT COUNT(rowid) FROM idempotency_records").integer(0, 0) == 3);
    CHECK(test::sqlite_record_indexes(*db) == test::kSqliteRecordIndexes);
  }

  Store store(db,
              Settings{std::chrono::seconds(30), std::chrono::hours(24), std::make_shared<Echo>()});
  const UnixMillis now = kT0 + 1000;
  const BeginResult order = store.begin("orders-api:m1", "order", kFp, now, "POST /orders");
  CHECK(order.outcome == BeginOutcome::replay);
  REQUIRE(order.response);
  CHECK(order.response->status == 201);
  CHECK(order.response->headers ==
        std::vector<std::pair<std::string, std::string>>{
            {"Location", "/orders/018bcfe5-687b-7000-8000-000000000001"}});
  CHECK(order.response->body == kOrderBody);
  CHECK(order.response->rendered_from.empty());
  const BeginResult refused = store.begin("orders-api:m1", "refused", kFp, now, "POST /orders");
  REQUIRE(refused.response);
  CHECK(refused.response->status == 422);
  CHECK(refused.response->headers.empty());
  CHECK(refused.response->body == R"({"error":{"code":"validation_failed","message":"amount"}})");
  CHECK(store.begin("orders-api:m1", "order", kOther, now).outcome == BeginOutcome::mismatch);
  const std::optional<RecordView> view = store.lookup("orders-api:m1", "order", now);
  REQUIRE(view);
  CHECK(view->resource_id == "018bcfe5-687b-7000-8000-000000000001");  // from the stored body
  CHECK(view->replays == 2);
  CHECK(view->mismatches == 1);

  // The lease taken before the upgrade completes its record, now by reference.
  CHECK(store.begin("orders-api:m1", "running", kFp, now).outcome == BeginOutcome::in_progress);
  Response answer{201, {}, "{\"ref\":\"ord-2\"}"};
  answer.rendered_from = "ord-2";
  CHECK(store.complete(Lease{"orders-api:m1", "running", "old-token"}, answer, now));
  CHECK(db->exec("SELECT response_ref FROM idempotency_records WHERE idempotency_key = 'running'")
            .text(0, 0) == "ord-2");
  const BeginResult running = store.begin("orders-api:m1", "running", kFp, now + 1);
  CHECK(running.outcome == BeginOutcome::replay);
  REQUIRE(running.response);
  CHECK(running.response->body == "{\"ref\":\"ord-2\"}");

  CHECK(store.purge(kT0 + kRecordTtl) == 3);
  CHECK(db->exec("SELECT COUNT(*) FROM idempotency_records").integer(0, 0) == 0);
}
