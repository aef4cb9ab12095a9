// POST /orders' answers stored by reference (issue 30) on a real orders-api: the record holds the
// order's id (16 bytes) instead of the answer, and a replay from the database (the process
// restarted: no replay cache) is the first answer byte for byte, also after the order was
// captured; an order row gone answers 500 and makes no order; a record stored whole before the
// upgrade (migration 0004) still replays.
#include <catch2/catch.hpp>

#include "harness.h"
#include "orders_checks.h"
#include "schema.h"
#include "webhooks/fingerprint.h"
#include "webhooks/idempotency/schema.h"
#include "webhooks/outbox/schema.h"
#include "webhooks/uuid.h"

using webhooks::test::Answer;
using webhooks::test::Stack;

namespace {

// An order whose answer has what a rendering must give back exactly: an escaped quote, a
// backslash, a slash, an escaped and a literal non-ASCII character, an amount past 2^32.
const std::string kRenderedOrder =
    R"({"amount":123456789012,"currency":"EUR","reference":"caf\u00e9 \"q\" \\ / ü"})";

// The record of `key`: response_status, whether headers and body are NULL, response_ref.
struct StoredRecord {
  std::int64_t status = 0;
  bool headers_null = false, body_null = false;
  std::string ref;
};

StoredRecord stored_record(Stack& s, const std::string& key) {
  const webhooks::db::Rows rows = s.db().exec(
      "SELECT response_status, response_headers IS NULL, response_body IS NULL, response_ref "
      "FROM idempotency_records WHERE scope = 'orders-api:m1' AND idempotency_key = $1",
      {key});
  REQUIRE(rows.size() == 1);
  // IS NULL reads as 1/0 on SQLite, t/f on PostgreSQL.
  const auto yes = [](const std::string& v) { return v == "1" || v == "t"; };
  return {rows.integer(0, 0), yes(rows.text(0, 1)), yes(rows.text(0, 2)), rows.text(0, 3)};
}

// The 16 bytes of the UUID `id`.
std::string uuid_bytes(const std::string& id) {
  const auto bytes = webhooks::uuid_from_string(id);
  REQUIRE(bytes);
  return std::string(bytes->begin(), bytes->end());
}

// `replay` is `first` replayed: the same status, Location, Content-Type and body.
void check_same_answer(const Answer& replay, const Answer& first) {
  CHECK(replay.status == first.status);
  CHECK(replay.header("Idempotent-Replayed") == "true");
  CHECK(replay.header("Location") == first.header("Location"));
  CHECK(replay.header("Content-Type") == first.header("Content-Type"));
  CHECK(replay.body == first.body);
}

}  // namespace

TEST_CASE("a created order's answer is stored as its id and replayed byte for byte") {
  Stack s;
  s.start_api();
  const Answer created = webhooks::test::create_order(s, "k-render", kRenderedOrder);
  const std::string id = created.json()["id"];
  CHECK(created.header("Location") == "/orders/" + id);
  CHECK(created.json()["reference"] == "caf\u00e9 \"q\" \\ / \u00fc");
  const StoredRecord record = stored_record(s, "k-render");
  CHECK(record.status == 201);
  CHECK(record.headers_null);
  CHECK(record.body_null);
  CHECK(record.ref == uuid_bytes(id));

  // The order moves on; the answer to its creation does not.
  CHECK(s.put("/orders/" + id, R"({"status":"captured"})").status == 200);
  CHECK(s.get("/orders/" + id).json()["status"] == "captured");
  s.start_api();  // a new process: the replay is rendered from the database
  check_same_answer(s.post("/orders", "k-render", kRenderedOrder), created);
  check_same_answer(s.post("/orders", "k-render", kRenderedOrder), created);  // and from memory
  CHECK(s.count("SELECT COUNT(*) FROM orders") == 1);

  const Answer key = s.get("/v1/idempotency-keys/k-render");
  CHECK(key.json()["resource_id"] == id);
  CHECK(key.json()["status"] == 201);
  webhooks::test::check_completed_with(s, "k-render", 201, created.body);
  // A refusal is stored whole: it renders nothing.
  CHECK(s.post("/orders", "k-refused", R"({"amount":0,"currency":"EUR","reference":"r"})").status ==
        422);
  const StoredRecord refused = stored_record(s, "k-refused");
  CHECK(refused.status == 422);
  CHECK(refused.headers_null);
  CHECK_FALSE(refused.body_null);
  CHECK(refused.ref.empty());
}

TEST_CASE("a created order's replay with the order row gone: 500 internal_error, no new order") {
  Stack s;
  s.start_api();
  webhooks::test::create_order(s, "k-gone", kRenderedOrder);
  s.db().exec("DELETE FROM orders");
  s.start_api();
  webhooks::test::check_error(s.post("/orders", "k-gone", kRenderedOrder), 500, "internal_error");
  CHECK(s.count("SELECT COUNT(*) FROM orders") == 0);
  CHECK(s.count("SELECT COUNT(*) FROM outbox") == 1);
  CHECK(stored_record(s, "k-gone").status == 201);  // the record is kept as it was
}

TEST_CASE("an order's record stored whole before migration 0004 replays after the upgrade") {
  Stack s;
  const std::string body =
      R"({"amount":1000,"created_at":"2026-12-01T00:00:00.000Z","currency":"EUR",)"
      R"("id":"019ad5a0-0000-7000-8000-000000000001","merchant_id":"m1","reference":"inv-1",)"
      R"("status":"created"})";
  {
    // The database as the previous version left it: idempotency migrations 1-3 (with the outbox's
    // and orders-api's own), the answer whole.
    std::shared_ptr<webhooks::db::Database> db = webhooks::db::Database::open(s.orders_db);
    webhooks::db::Component before = webhooks::idempotency::schema();
    before.sqlite = before.sqlite.first(3);
    before.postgres = before.postgres.first(3);
    db->migrate({before, webhooks::outbox::schema(), webhooks::orders::schema()}, 1000);
    const auto now = webhooks::system_clock().now_ms();
    const std::string fingerprint =
        webhooks::request_fingerprint("POST", "/orders", webhooks::test::kOrder);
    std::string fingerprint_bytes;
    for (std::size_t i = 0; i < fingerprint.size(); i += 2) {
      fingerprint_bytes.push_back(
          static_cast<char>(std::stoi(fingerprint.substr(i, 2), nullptr, 16)));
    }
    db->exec(
        "INSERT INTO idempotency_records (scope, idempotency_key, fingerprint, state, lease_owner, "
        "lease_expires_at, attempts, response_status, response_headers, response_body, "
        "created_at, expires_at, route, updated_at) VALUES ('orders-api:m1', 'k-old', $1, 1, "
        "NULL, NULL, 1, 201, $2, $3, $4, $5, 'POST /orders', $4)",
        {webhooks::db::Bytes{fingerprint_bytes},
         R"([["Location","/orders/019ad5a0-0000-7000-8000-000000000001"]])", body, now,
         now + 3'600'000});
  }
  s.start_api();
  const Answer replay = s.post("/orders", "k-old", webhooks::test::kOrder);
  CHECK(replay.status == 201);
  CHECK(replay.header("Idempotent-Replayed") == "true");
  CHECK(replay.header("Location") == "/orders/019ad5a0-0000-7000-8000-000000000001");
  CHECK(replay.body == body);
  CHECK(s.count("SELECT COUNT(*) FROM orders") == 0);  // replayed, never made again
  CHECK(stored_record(s, "k-old").ref.empty());
}
