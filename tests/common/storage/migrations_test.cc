// Each component migrates only its own tables, recorded as (component, version) in
// webhooks_migrations; a database made by the old single-sequence code (schema_migrations,
// versions 1..5, every table) is adopted in place with its rows. On the engine named by
// WEBHOOKS_TEST_ENGINE.
#include <algorithm>
#include <catch2/catch.hpp>
#include <thread>
#include <tuple>
#include <vector>

#include "support/legacy_schema.h"
#include "support/test_env.h"
#include "webhooks/db.h"
#include "webhooks/idempotency/schema.h"
#include "webhooks/idempotency/store.h"
#include "webhooks/outbox/schema.h"
#include "webhooks/publisher/schema.h"
#include "webhooks/publisher/store.h"

namespace webhooks::test {
namespace {

using Names = std::vector<std::string>;
using Row = std::tuple<std::string, std::int64_t, std::string, std::int64_t>;

constexpr std::int64_t kT0 = 1'700'000'000'000;

// The tables of the old single-sequence schema, and what migrations added since.
const Names kLegacyPublisherTables = {"publisher_attempts", "publisher_endpoint_secrets",
                                      "publisher_endpoints", "publisher_events", "publisher_tasks"};
const Names kPublisherTables = {"publisher_attempts",         "publisher_audit_log",
                                "publisher_endpoint_secrets", "publisher_endpoints",
                                "publisher_events",           "publisher_rate_log",
                                "publisher_revoked_sessions", "publisher_tasks"};

// webhooks_migrations: (component, version, name, applied_at), in that order.
std::vector<Row> bookkeeping(db::Database& db) {
  const db::Rows rows = db.exec(
      "SELECT component, version, name, applied_at FROM webhooks_migrations "
      "ORDER BY component, version");
  std::vector<Row> out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    out.emplace_back(rows.text(i, 0), rows.integer(i, 1), rows.text(i, 2), rows.integer(i, 3));
  }
  return out;
}

// The rows of `component`'s migrations from version `from` on, applied at `at`: what
// webhooks_migrations holds once it is migrated (counted from the component, so a later
// migration file changes no expectation here).
std::vector<Row> rows_of(const db::Component& component, db::Engine engine, std::int64_t at,
                         int from = 1) {
  std::vector<Row> out;
  for (const db::Migration& m : component.migrations(engine)) {
    if (m.version >= from) out.emplace_back(component.name, m.version, m.name, at);
  }
  return out;
}

int count_of(const db::Component& component, db::Engine engine, int from = 1) {
  return static_cast<int>(rows_of(component, engine, 0, from).size());
}

std::vector<Row> concat(std::vector<std::vector<Row>> parts) {
  std::vector<Row> out;
  for (auto& part : parts) out.insert(out.end(), part.begin(), part.end());
  return out;
}

Names with(Names names, const Names& more) {
  names.insert(names.end(), more.begin(), more.end());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST_CASE("each component creates only its own tables, recorded as (component, version)") {
  auto db = db::Database::open(database_target("components"));
  const db::Engine engine = db->engine();
  CHECK(db->migrate({idempotency::schema()}, 1000) == count_of(idempotency::schema(), engine));
  CHECK(table_names(*db) == Names{"idempotency_records", "webhooks_migrations"});

  CHECK(db->migrate({idempotency::schema(), outbox::schema()}, 2000) ==
        count_of(outbox::schema(), engine));
  CHECK(table_names(*db) == Names{"idempotency_records", "outbox", "webhooks_migrations"});

  CHECK(db->migrate({idempotency::schema(), publisher::schema()}, 3000) ==
        count_of(publisher::schema(), engine));
  CHECK(table_names(*db) ==
        with({"idempotency_records", "outbox", "webhooks_migrations"}, kPublisherTables));
  CHECK(db->migrate({idempotency::schema(), outbox::schema(), publisher::schema()}, 4000) == 0);
  CHECK(bookkeeping(*db) == concat({rows_of(idempotency::schema(), engine, 1000),
                                    rows_of(outbox::schema(), engine, 2000),
                                    rows_of(publisher::schema(), engine, 3000)}));
  CHECK(std::get<2>(rows_of(outbox::schema(), engine, 0).at(0)) == "0001_outbox");
  CHECK(std::get<2>(rows_of(publisher::schema(), engine, 0).at(1)) == "0002_parked_tasks");
}

TEST_CASE("a publisher's database holds no outbox; nothing but the bookkeeping for none") {
  auto db = db::Database::open(database_target("publisher_only"));
  CHECK(db->migrate({idempotency::schema(), publisher::schema()}, 1000) ==
        count_of(idempotency::schema(), db->engine()) +
            count_of(publisher::schema(), db->engine()));
  CHECK(table_names(*db) == with({"idempotency_records", "webhooks_migrations"}, kPublisherTables));
  auto bare = db::Database::open(database_target("no_components"));
  CHECK(bare->migrate({}, 1000) == 0);
  CHECK(table_names(*bare) == Names{"webhooks_migrations"});
}

TEST_CASE("a database made by the old single-sequence code is adopted in place, rows kept") {
  auto db = std::shared_ptr<db::Database>(db::Database::open(database_target("legacy")));
  migrate_as_before_components(*db, 5, kT0);
  // One row in each component's tables, as the old code's stores wrote them (a completed order's
  // record in the layout of the old 0005: fingerprint 32 bytes, state 1).
  const std::string fp(64, 'a');
  const std::string fp_bytes(32, '\xaa');
  db->exec(
      "INSERT INTO idempotency_records (scope, idempotency_key, fingerprint, state, attempts, "
      "response_status, response_body, created_at, expires_at) "
      "VALUES ('m1', 'order-1', $1, 1, 1, 201, '{\"id\":\"o1\"}', $2, $3)",
      {db::Bytes{fp_bytes}, kT0, kT0 + 24 * 3600 * 1000});
  db->exec(
      "INSERT INTO outbox (id, merchant_id, event_type, payload, created_at, next_attempt_at) "
      "VALUES ('ob1', 'm1', 'order.created', '{}', 1, 1)");
  db->exec(
      "INSERT INTO publisher_endpoints (id, merchant_id, url, created_at, updated_at) "
      "VALUES ('ep1', 'm1', 'http://192.0.2.1/hook', 1, 1)");
  const Names legacy_tables =
      with({"idempotency_records", "outbox", "schema_migrations"}, kLegacyPublisherTables);
  REQUIRE(table_names(*db) == legacy_tables);

  // A receiver opens it first: only idempotency's 0003 on (newer than the old sequence) to apply;
  // every old version is recorded as the component version it was, with its old applied_at; no
  // table is dropped.
  const db::Engine engine = db->engine();
  CHECK(db->migrate({idempotency::schema()}, kT0 + 1) ==
        count_of(idempotency::schema(), engine, 3));
  const std::vector<Row> old_idempotency = {{"idempotency", 1, "0001_records", kT0},
                                            {"idempotency", 2, "0002_compact_records", kT0}};
  const std::vector<Row> new_idempotency = rows_of(idempotency::schema(), engine, kT0 + 1, 3);
  const std::vector<Row> old_outbox = {{"outbox", 1, "0001_outbox", kT0}};
  const std::vector<Row> old_publisher = {{"publisher", 1, "0001_queue", kT0},
                                          {"publisher", 2, "0002_parked_tasks", kT0}};
  CHECK(bookkeeping(*db) == concat({old_idempotency, new_idempotency, old_outbox, old_publisher}));
  CHECK(table_names(*db) == with(legacy_tables, {"webhooks_migrations"}));
  CHECK(db->exec("SELECT COUNT(*) FROM schema_migrations").integer(0, 0) == 5);
  // Every component after it: only the migrations newer than the old sequence apply, nothing is
  // adopted twice.
  CHECK(db->migrate({idempotency::schema(), outbox::schema(), publisher::schema()}, kT0 + 2) ==
        count_of(outbox::schema(), engine, 2) + count_of(publisher::schema(), engine, 3));
  CHECK(bookkeeping(*db) == concat({old_idempotency, new_idempotency, old_outbox,
                                    rows_of(outbox::schema(), engine, kT0 + 2, 2), old_publisher,
                                    rows_of(publisher::schema(), engine, kT0 + 2, 3)}));

  idempotency::Store records(db, {std::chrono::seconds(30), std::chrono::hours(24)});
  const auto replay = records.begin("m1", "order-1", fp, kT0 + 3);
  CHECK(replay.outcome == idempotency::BeginOutcome::replay);
  REQUIRE(replay.response);
  CHECK(replay.response->status == 201);
  CHECK(replay.response->body == "{\"id\":\"o1\"}");
  CHECK(db->exec("SELECT id, sent_at FROM outbox").text(0, 0) == "ob1");
  publisher::Store store(db);
  const auto endpoint = store.find_endpoint("ep1");
  REQUIRE(endpoint);
  CHECK(endpoint->url == "http://192.0.2.1/hook");
}

TEST_CASE("another program's schema_migrations is left alone and adopts nothing") {
  auto db = db::Database::open(database_target("foreign"));
  db->exec("CREATE TABLE schema_migrations (version TEXT PRIMARY KEY)");  // e.g. a web framework's
  db->exec("INSERT INTO schema_migrations (version) VALUES ('1')");
  const int all = count_of(idempotency::schema(), db->engine());
  CHECK(db->migrate({idempotency::schema()}, 1000) == all);
  CHECK(table_names(*db) ==
        Names{"idempotency_records", "schema_migrations", "webhooks_migrations"});
  CHECK(db->exec("SELECT version FROM schema_migrations").text(0, 0) == "1");
  CHECK(bookkeeping(*db).size() == static_cast<std::size_t>(all));
}

TEST_CASE("several processes' components migrate one database at once, each migration once") {
  const std::string target = database_target("concurrent");
  const std::vector<std::vector<db::Component>> users = {
      {idempotency::schema()},                        // a receiver
      {idempotency::schema(), outbox::schema()},      // orders-api
      {idempotency::schema(), publisher::schema()},   // a publisher daemon
      {idempotency::schema(), publisher::schema()}};  // a second one
  std::vector<int> applied(users.size(), -1);
  std::vector<std::string> errors(users.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < users.size(); ++i) {
    threads.emplace_back([&, i] {
      try {
        applied[i] = db::Database::open(target)->migrate(users[i], 1000);
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::string& error : errors) {
    INFO(error);
    CHECK(error.empty());
  }
  auto db = db::Database::open(target);
  const int all = count_of(idempotency::schema(), db->engine()) +
                  count_of(outbox::schema(), db->engine()) +
                  count_of(publisher::schema(), db->engine());
  CHECK(applied[0] + applied[1] + applied[2] + applied[3] == all);
  CHECK(bookkeeping(*db).size() == static_cast<std::size_t>(all));
  CHECK(table_names(*db) ==
        with({"idempotency_records", "outbox", "webhooks_migrations"}, kPublisherTables));
}

}  // namespace webhooks::test
