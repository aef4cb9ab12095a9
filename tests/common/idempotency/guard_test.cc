// The guard's mapping of outcomes to answers, on the engine named by WEBHOOKS_TEST_ENGINE, with a
// fake clock. (Over real HTTP it is exercised by tests/examples/orders_api.)
#include "webhooks/idempotency/guard.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <thread>

#include "support/test_env.h"
#include "webhooks/error.h"
#include "webhooks/idempotency/schema.h"

using namespace webhooks;
using namespace webhooks::idempotency;
using namespace std::chrono_literals;
using Status = KeyCheck::Status;

namespace {

struct Fixture {
  FakeClock clock{1'700'000'000'000};
  std::shared_ptr<db::Database> db = test::open_database("guard", {idempotency::schema()});
  Store store{db, Settings{30s, 24h}};
  LeaseKeeper keeper{store, clock, 1h};
  Guard guard{store, keeper, clock};
  int runs = 0;

  Response post(std::optional<std::string_view> key, std::string_view body, int status = 201,
                std::string_view path = "/orders") {
    return guard.run("m1", key, "POST", path, body, [&, status](Attempt&) {
      ++runs;
      return Response{status, {}, "{\"run\":" + std::to_string(runs) + "}"};
    });
  }
};

std::string error_code(const Response& r) {
  return nlohmann::json::parse(r.body)["error"]["code"].get<std::string>();
}

std::string header(const Response& r, const std::string& name) {
  for (const auto& [n, v] : r.headers) {
    if (n == name) return v;
  }
  return "";
}

}  // namespace

TEST_CASE("Idempotency-Key parsing") {
  CHECK(parse_idempotency_key("abc").key == "abc");
  CHECK(parse_idempotency_key("\"abc\"").key == "abc");
  CHECK(parse_idempotency_key("\"a\\\"b\"").key == "a\"b");
  CHECK(parse_idempotency_key(std::string(255, 'k')).status == Status::ok);
  CHECK(parse_idempotency_key(std::nullopt).status == Status::missing);
  CHECK(parse_idempotency_key("").status == Status::invalid);
  CHECK(parse_idempotency_key("\"\"").status == Status::invalid);
  CHECK(parse_idempotency_key(std::string(256, 'k')).status == Status::invalid);
  CHECK(parse_idempotency_key("a\x01"
                              "b")
            .status == Status::invalid);
  CHECK(parse_idempotency_key("a\tb").status == Status::invalid);
  CHECK(parse_idempotency_key("caf\xc3\xa9").status == Status::invalid);
  CHECK(parse_idempotency_key("\"a\\x\"").status == Status::invalid);
  CHECK(parse_idempotency_key("\"a\"b\"").status == Status::invalid);
  CHECK(parse_idempotency_key(std::string(256, 'k')).message ==
        "Idempotency-Key is longer than 255 characters");
}

TEST_CASE("the guard maps outcomes to answers") {
  Fixture f;
  const Response first = f.post("k1", "{\"amount\":1000}");
  CHECK(first.status == 201);
  CHECK(first.body == "{\"run\":1}");
  CHECK(header(first, "Idempotent-Replayed").empty());

  const Response replay = f.post("\"k1\"", "{ \"amount\" : 1000.0 }");
  CHECK(replay.status == 201);
  CHECK(replay.body == "{\"run\":1}");
  CHECK(header(replay, "Idempotent-Replayed") == "true");
  CHECK(f.runs == 1);

  const Response reused = f.post("k1", "{\"amount\":1001}");
  CHECK(reused.status == 422);
  CHECK(error_code(reused) == "idempotency_key_reused");
  CHECK(f.post("k1", "{\"amount\":1000}", 201, "/payouts").status == 422);

  CHECK(error_code(f.post(std::nullopt, "{}")) == "idempotency_key_missing");
  CHECK(f.post(std::nullopt, "{}").status == 400);
  CHECK(error_code(f.post("", "{}")) == "idempotency_key_invalid");
  CHECK(error_code(f.post("k2", "{not json")) == "invalid_json");
  CHECK(f.runs == 1);
}

TEST_CASE("a second request while the first runs gets 409 with Retry-After") {
  Fixture f;
  Response inner;
  const Response outer = f.guard.run("m1", "k1", "POST", "/orders", "{}", [&](Attempt&) {
    f.clock.advance(12'500ms);
    inner = f.post("k1", "{}");
    return Response{201, {}, "{}"};
  });
  CHECK(outer.status == 201);
  CHECK(inner.status == 409);
  CHECK(error_code(inner) == "idempotency_key_in_use");
  CHECK(header(inner, "Retry-After") == "18");  // 30 s lease, 12.5 s gone: 17.5 s rounded up
}

TEST_CASE("5xx and exceptions fail the record so the retry runs; final 4xx are replayed") {
  Fixture f;
  CHECK(f.post("k503", "{}", 503).status == 503);
  CHECK(f.store.find("m1", "k503")->state == State::failed);
  const Response retried = f.post("k503", "{}", 201);
  CHECK(retried.status == 201);
  CHECK(header(retried, "Idempotent-Replayed").empty());
  CHECK(f.runs == 2);

  CHECK(f.post("k422", "{}", 422).status == 422);
  const Response replayed = f.post("k422", "{}", 201);
  CHECK(replayed.status == 422);
  CHECK(header(replayed, "Idempotent-Replayed") == "true");
  CHECK(f.runs == 3);

  const Response thrown =
      f.guard.run("m1", "kx", "POST", "/orders", "{}",
                  [](Attempt&) -> Response { throw std::runtime_error("the partner is down"); });
  CHECK(thrown.status == 500);
  CHECK(error_code(thrown) == "internal_error");
  CHECK(f.store.find("m1", "kx")->state == State::failed);
  bool reacquired = false;
  CHECK(f.guard
            .run("m1", "kx", "POST", "/orders", "{}",
                 [&](Attempt& a) {
                   reacquired = a.reacquired() && a.attempts() == 2;
                   return Response{200, {}, "{}"};
                 })
            .status == 200);
  CHECK(reacquired);
}

TEST_CASE("Attempt::commit stores the record with the operation's writes") {
  Fixture f;
  f.db->exec("CREATE TABLE orders (id TEXT PRIMARY KEY)");
  const Response r = f.guard.run("m1", "k1", "POST", "/orders", "{}", [](Attempt& a) {
    return a.commit([](db::Transaction& tx) {
      tx.exec("INSERT INTO orders (id) VALUES ('o1')");
      return Response{201, {}, "{\"id\":\"o1\"}"};
    });
  });
  CHECK(r.status == 201);
  CHECK(f.store.find("m1", "k1")->state == State::completed);
  CHECK(f.db->exec("SELECT COUNT(*) FROM orders").integer(0, 0) == 1);

  // A lease lost before commit: the writes roll back and the answer is 409, as for any caller
  // that finds the key held by another (answers.h, in_use).
  const Response lost = f.guard.run("m1", "k2", "POST", "/orders", "{}", [&](Attempt& a) {
    f.clock.advance(31s);
    f.store.sweep(f.clock.now_ms());
    return a.commit([](db::Transaction& tx) {
      tx.exec("INSERT INTO orders (id) VALUES ('o2')");
      return Response{201, {}, "{\"id\":\"o2\"}"};
    });
  });
  CHECK(lost.status == 409);
  CHECK(error_code(lost) == "idempotency_key_in_use");
  CHECK(nlohmann::json::parse(lost.body)["error"]["message"] ==
        "the idempotency lease was lost while the operation ran");
  REQUIRE(lost.headers.size() == 1);
  CHECK(lost.headers[0] == std::pair<std::string, std::string>{"Retry-After", "1"});
  CHECK(f.db->exec("SELECT COUNT(*) FROM orders").integer(0, 0) == 1);
}

namespace {

// Makes the database refuse the writes of an operation, and then every write, the way a full
// disk does, with a real engine fault: on SQLite `PRAGMA max_page_count` at the database's current
// size (the next page the operation needs fails with SQLITE_FULL, "database or disk is full"); on
// PostgreSQL, ALTER DATABASE … ALLOW_CONNECTIONS false and its sessions terminated (the
// operation's own among them, then no connection at all).
class WriteFault {
 public:
  WriteFault(std::shared_ptr<db::Database> db, std::string target)
      : db_(std::move(db)), name_(target.substr(target.rfind('/') + 1)) {
    if (db_->engine() == db::Engine::postgres) ops_ = db::Database::open(test::postgres_url());
  }
  // Inside the operation's transaction `tx`.
  void start(db::Transaction& tx) {
    if (!ops_) {
      const std::int64_t pages = tx.exec("PRAGMA page_count").integer(0, 0);
      tx.exec("PRAGMA max_page_count = " + std::to_string(pages));
      return;
    }
    ops_->exec("ALTER DATABASE " + name_ + " ALLOW_CONNECTIONS false");
    ops_->exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1",
               {name_});
    const auto sessions = [&] {
      return ops_->exec("SELECT COUNT(*) FROM pg_stat_activity WHERE datname = $1", {name_})
          .integer(0, 0);
    };
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (sessions() > 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(5ms);
    }
    REQUIRE(sessions() == 0);
  }
  void end() {
    if (!ops_) {
      db_->exec("PRAGMA max_page_count = 1073741823");
      return;
    }
    ops_->exec("ALTER DATABASE " + name_ + " ALLOW_CONNECTIONS true");
  }

 private:
  std::shared_ptr<db::Database> db_;
  std::string name_;
  std::unique_ptr<db::Database> ops_;
};

}  // namespace

TEST_CASE(
    "a storage failure in the operation's commit is 503 with Retry-After, and the retry runs at "
    "once, not 409 for the rest of the lease") {
  FakeClock clock{1'700'000'000'000};
  const std::string target = test::database_target("guard-full");
  std::shared_ptr<db::Database> db = db::Database::open(target);
  db->migrate({idempotency::schema()}, clock.now_ms());
  db->exec("CREATE TABLE orders (id TEXT PRIMARY KEY, filler TEXT NOT NULL)");
  Store store{db, Settings{30s, 24h}};
  LeaseKeeper keeper{store, clock, 1h};
  Guard guard{store, keeper, clock};
  WriteFault fault(db, target);
  const std::string filler(64 * 1024, 'x');  // needs pages the database no longer gets
  int runs = 0;
  const auto create = [&](bool break_it) {
    return guard.run("m1", "order-1", "POST", "/orders", R"({"amount":100})", [&](Attempt& a) {
      ++runs;
      return a.commit([&](db::Transaction& tx) {
        if (break_it) fault.start(tx);
        tx.exec("INSERT INTO orders (id, filler) VALUES ('o1', $1)", {filler});
        return Response{201, {}, R"({"id":"o1"})"};
      });
    });
  };

  const Response full = create(true);
  CHECK(full.status == 503);
  CHECK(error_code(full) == "storage_unavailable");
  CHECK(nlohmann::json::parse(full.body)["error"]["message"] ==
        "the database failed; retry with the same key");
  CHECK(header(full, "Retry-After") == "1");
  CHECK(runs == 1);

  fault.end();  // space freed, the database back
  // The same clock: the first attempt's 30 s lease has not lapsed, yet the retry runs.
  const Response retry = create(false);
  CHECK(retry.status == 201);
  CHECK(retry.body == R"({"id":"o1"})");
  CHECK(header(retry, "Idempotent-Replayed").empty());
  CHECK(runs == 2);
  CHECK(db->exec("SELECT COUNT(*) FROM orders").integer(0, 0) == 1);
  const auto record = store.find("m1", "order-1");
  REQUIRE(record);
  CHECK(record->state == State::completed);
  CHECK(record->attempts == 2);
  const Response replay = create(false);
  CHECK(replay.status == 201);
  CHECK(header(replay, "Idempotent-Replayed") == "true");
  CHECK(runs == 2);
}
