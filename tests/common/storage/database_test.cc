// The database layer on the engine named by WEBHOOKS_TEST_ENGINE.
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <thread>

#include "support/test_env.h"
#include "webhooks/db.h"
#include "webhooks/error.h"
#include "webhooks/idempotency/schema.h"

using namespace webhooks;

TEST_CASE("migrations apply once and are recorded as (component, version)") {
  const std::string target = test::database_target("migrate");
  auto db = db::Database::open(target);
  CHECK(db->migrate({idempotency::schema()}, 1000) == 5);
  CHECK(db->migrate({idempotency::schema()}, 2000) == 0);
  CHECK(db::Database::open(target)->migrate({idempotency::schema()}, 3000) == 0);
  const db::Rows rows = db->exec(
      "SELECT component, version, name, applied_at FROM webhooks_migrations ORDER BY version");
  REQUIRE(rows.size() == 5);
  CHECK(rows.text(0, 0) == "idempotency");
  CHECK(rows.integer(0, 1) == 1);
  CHECK(rows.text(0, 2) == "0001_records");
  CHECK(rows.integer(0, 3) == 1000);
  CHECK(rows.text(1, 0) == "idempotency");
  CHECK(rows.integer(1, 1) == 2);
  CHECK(rows.text(1, 2) == "0002_compact_records");
  CHECK(rows.integer(1, 3) == 1000);
  CHECK(rows.integer(2, 1) == 3);
  CHECK(rows.text(2, 2) == "0003_record_views");
  CHECK(rows.integer(3, 1) == 4);
  CHECK(rows.text(3, 2) == "0004_rendered_answers");
  CHECK(rows.integer(4, 1) == 5);
  CHECK(rows.text(4, 2) == "0005_state_check");
}

TEST_CASE("parameters, NULLs, affected rows and errors") {
  auto db = test::open_database("params", {});
  db->exec("CREATE TABLE t (id BIGINT PRIMARY KEY, name TEXT, note TEXT)");
  CHECK(db->exec("INSERT INTO t (id, name, note) VALUES ($1, $2, $3)",
                 {std::int64_t{1}, "a'b", nullptr})
            .affected() == 1);
  CHECK(db->exec("INSERT INTO t (id, name) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING",
                 {std::int64_t{1}, "x"})
            .affected() == 0);
  const db::Rows rows = db->exec("SELECT id, name, note FROM t WHERE name = $1", {"a'b"});
  REQUIRE(rows.size() == 1);
  CHECK(rows.integer(0, 0) == 1);
  CHECK(rows.text(0, 1) == "a'b");
  CHECK(rows.is_null(0, 2));
  CHECK_THROWS_AS(rows.text(1, 0), Error);
  CHECK_THROWS_AS(rows.integer(0, 1), Error);
  try {
    db->exec("INSERT INTO t (id) VALUES ($1)", {std::int64_t{1}});
    FAIL("duplicate key accepted");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::storage);
  }
  CHECK(db->exec("UPDATE t SET note = $2 WHERE id = $1", {std::int64_t{1}, "n"}).affected() == 1);
  CHECK(db->exec("SELECT note FROM t").text(0, 0) == "n");
}

TEST_CASE(
    "a text parameter with a NUL byte: refused by PostgreSQL before sending, kept by SQLite") {
  auto db = test::open_database("nul_text", {});
  db->exec("CREATE TABLE t (id BIGINT PRIMARY KEY, name TEXT)");
  const std::string with_nul("a\0b", 3);
  if (db->engine() == db::Engine::postgres) {
    try {
      db->exec("INSERT INTO t (id, name) VALUES ($1, $2)", {std::int64_t{1}, with_nul});
      FAIL("a NUL byte was sent to PostgreSQL");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::invalid_argument);
      CHECK(std::string(e.what()) ==
            "parameter $2 is text holding a NUL byte, which PostgreSQL cannot store");
    }
    CHECK_THROWS_AS(db->transact([&](db::Transaction& tx) {
      tx.exec("INSERT INTO t (id, name) VALUES ($1, $2)", {std::int64_t{2}, with_nul});
    }),
                    Error);
    CHECK(db->exec("SELECT COUNT(*) FROM t").integer(0, 0) == 0);  // nothing cut short stored
  } else {
    db->exec("INSERT INTO t (id, name) VALUES ($1, $2)", {std::int64_t{1}, with_nul});
    CHECK(db->exec("SELECT name FROM t").text(0, 0) == with_nul);
  }
}

TEST_CASE("bytes parameters round-trip as raw bytes, empty bytes are not NULL") {
  auto db = test::open_database("bytes", {});
  const std::string type = db->engine() == db::Engine::sqlite ? "BLOB" : "BYTEA";
  db->exec("CREATE TABLE b (id BIGINT PRIMARY KEY, v " + type + ")");
  const std::string raw("\x00\xff\x5cx'\x01", 6);  // NUL, 0xff, a backslash, x, a quote, 0x01
  CHECK(db->exec("INSERT INTO b (id, v) VALUES (1, $1), (2, $2), (3, NULL)",
                 {db::Bytes{raw}, db::Bytes{std::string_view()}})
            .affected() == 3);
  const std::string length = db->engine() == db::Engine::sqlite ? "length" : "octet_length";
  const db::Rows rows = db->exec("SELECT id, v, " + length + "(v) FROM b ORDER BY id");
  REQUIRE(rows.size() == 3);
  CHECK(rows.text(0, 1) == raw);
  CHECK(rows.integer(0, 2) == 6);
  CHECK_FALSE(rows.is_null(1, 1));
  CHECK(rows.text(1, 1).empty());
  CHECK(rows.integer(1, 2) == 0);
  CHECK(rows.is_null(2, 1));
  // A bytes parameter compares with a stored value byte for byte, in a transaction and in a read.
  db->transact([&](db::Transaction& tx) {
    CHECK(tx.exec("SELECT id FROM b WHERE v = $1", {db::Bytes{raw}}).integer(0, 0) == 1);
  });
  CHECK(db->read("SELECT id FROM b WHERE v = $1", {db::Bytes{raw}}).integer(0, 0) == 1);
  CHECK(db->read("SELECT COUNT(*) FROM b WHERE v = $1", {db::Bytes{raw.substr(0, 5)}})
            .integer(0, 0) == 0);
}

TEST_CASE("a throwing transaction rolls back") {
  auto db = test::open_database("rollback", {});
  db->exec("CREATE TABLE t (id BIGINT PRIMARY KEY)");
  CHECK_THROWS_WITH(db->transact([](db::Transaction& tx) {
    tx.exec("INSERT INTO t (id) VALUES (1)");
    throw std::runtime_error("boom");
  }),
                    "boom");
  CHECK(db->exec("SELECT COUNT(*) FROM t").integer(0, 0) == 0);
}

TEST_CASE("an unreachable database is a clear error") {
  if (test::engine() == db::Engine::postgres) {
    CHECK_THROWS_WITH(
        db::Database::open("postgresql://nobody:secret@127.0.0.1:1/none"),
        Catch::Matchers::StartsWith(
            "cannot connect to PostgreSQL at postgresql://nobody:***@127.0.0.1:1/none"));
  } else {
    CHECK_THROWS_WITH(
        db::Database::open("/nonexistent-dir/x.db"),
        Catch::Matchers::StartsWith("cannot open SQLite database /nonexistent-dir/x.db"));
  }
}

TEST_CASE("SQLite synchronous is NORMAL, FULL or EXTRA, never pasted unchecked into the PRAGMA") {
  const std::string dir = test::temp_dir("synchronous");
  db::Options options;
  // The value the writer's connection runs with: PRAGMA synchronous reads 1, 2 or 3.
  for (const auto& [value, level] : std::vector<std::pair<const char*, std::int64_t>>{
           {"NORMAL", 1}, {"full", 2}, {"Extra", 3}}) {
    options.sqlite_synchronous = value;
    const auto db = db::Database::open(dir + "/ok.db", options);
    std::int64_t read = -1;
    db->transact([&](db::Transaction& tx) { read = tx.exec("PRAGMA synchronous").integer(0, 0); });
    CHECK(read == level);
  }
  for (const char* value : {"OFF", "0", "", "NORMAL; DROP TABLE t"}) {
    options.sqlite_synchronous = value;
    try {
      db::Database::open(dir + "/bad.db", options);
      FAIL("accepted " << value);
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::invalid_argument);
      CHECK(std::string(e.what()) ==
            "SQLite synchronous must be NORMAL, FULL or EXTRA, not '" + std::string(value) + "'");
    }
  }
}

namespace {

// SQLite's temporary files open in this process (named etilqs_*, unlinked as soon as opened).
int open_sqlite_temp_files() {
  int count = 0;
  for (const auto& fd : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    const std::string target = std::filesystem::read_symlink(fd.path(), ec).string();
    if (!ec && target.find("etilqs_") != std::string::npos) ++count;
  }
  return count;
}

}  // namespace

TEST_CASE("SQLite keeps a savepoint's journal in memory, never in a temporary file") {
  if (test::engine() != db::Engine::sqlite) return;
  const std::string path = test::temp_dir("temp_store") + "/t.db";
  auto db = db::Database::open(path);
  db->exec("CREATE TABLE pages (id INTEGER PRIMARY KEY, data TEXT NOT NULL)");
  const std::string row(3000, 'x');  // one row a 4 KiB page
  for (std::int64_t i = 0; i < 64; ++i) {
    db->exec("INSERT INTO pages (id, data) VALUES ($1, $2)", {i, row});
  }
  db->transact([&](db::Transaction& tx) {
    CHECK(tx.exec("PRAGMA temp_store").integer(0, 0) == 2);  // MEMORY
    // 64 pages changed under a savepoint journal 256 KiB of their old contents: SQLite's default
    // spills such a journal to a temporary file past 64 KiB.
    tx.exec("SAVEPOINT s");
    CHECK(tx.exec("UPDATE pages SET data = $1", {std::string(3000, 'y')}).affected() == 64);
    CHECK(open_sqlite_temp_files() == 0);
    tx.exec("ROLLBACK TO SAVEPOINT s");  // the journal restores every page
    tx.exec("RELEASE SAVEPOINT s");
  });
  CHECK(db->exec("SELECT count(*) FROM pages WHERE data = $1", {row}).integer(0, 0) == 64);
}

TEST_CASE("SQLite background checkpoints copy the WAL into the database file off the commit path") {
  const std::string path = test::temp_dir("background_checkpoint") + "/c.db";
  const std::string blob(100 * 1024, 'x');  // 25 overflow pages of 4 KiB a row
  {
    db::Options options;
    options.sqlite_background_checkpoint = true;
    auto db = db::Database::open(path, options);
    db->exec("CREATE TABLE blobs (id INTEGER PRIMARY KEY, data TEXT NOT NULL)");
    // 120 commits, about 3,000 WAL pages: a commit 1,000 pages past the last checkpoint's end
    // wakes the checkpointer; none reaches the 8,000 pages past which a commit checkpoints by
    // itself. SQLite's own automatic checkpoint is replaced, so only the checkpointer thread can
    // grow the database file.
    for (std::int64_t i = 0; i < 120; ++i) {
      db->exec("INSERT INTO blobs (id, data) VALUES ($1, $2)", {i, blob});
    }
    // Waits (at most 10 s) for the thread to have copied at least 2,000 pages.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::filesystem::file_size(path) < 2000u * 4096u &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    CHECK(std::filesystem::file_size(path) >= 2000u * 4096u);
  }
  auto reopened = db::Database::open(path);
  const db::Rows rows = reopened->exec("SELECT COUNT(*), SUM(LENGTH(data)) FROM blobs");
  CHECK(rows.integer(0, 0) == 120);
  CHECK(rows.integer(0, 1) == 120 * 100 * 1024);
}

TEST_CASE("a read runs beside an open write transaction and sees what was committed") {
  auto db = test::open_database("read", {});
  db->exec("CREATE TABLE t (id BIGINT PRIMARY KEY)");
  db->exec("INSERT INTO t (id) VALUES (1)");
  std::int64_t seen_inside = -1;
  db->transact([&](db::Transaction& tx) {
    tx.exec("INSERT INTO t (id) VALUES (2)");
    // On the transaction's own connection this read would wait for the transaction: a deadlock.
    std::thread reader([&] { seen_inside = db->read("SELECT COUNT(*) FROM t").integer(0, 0); });
    reader.join();
  });
  CHECK(seen_inside == 1);
  CHECK(db->read("SELECT COUNT(*) FROM t WHERE id >= $1", {std::int64_t{2}}).integer(0, 0) == 1);
  if (db->engine() == db::Engine::sqlite) {
    CHECK_THROWS_WITH(db->read("INSERT INTO t (id) VALUES (3)"),
                      Catch::Contains("attempt to write a readonly database"));
    CHECK(db->exec("SELECT COUNT(*) FROM t").integer(0, 0) == 2);
  }
}
