// The guard's mapping of outcomes to answers, on the engine named by WEBHOOKS_TEST_ENGINE, with a
// fake clock. (Over real HTTP it is exercised by tests/orders.)
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/test_env.h"
#include "webhooks/error.h"
#include "webhooks/idempotency/guard.h"

using namespace webhooks;
using namespace webhooks::idempotency;
using namespace std::chrono_literals;
using Status = KeyCheck::Status;

namespace {

struct Fixture {
  FakeClock clock{1'700'000'000'000};
  std::shared_ptr<db::Database> db = test::open_database("guard");
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
  CHECK(parse_idempotency_key("a\x01" "b").status == Status::invalid);
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

  const Response thrown = f.guard.run("m1", "kx", "POST", "/orders", "{}", [](Attempt&) -> Response {
    throw std::runtime_error("the partner is down");
  });
  CHECK(thrown.status == 500);
  CHECK(error_code(thrown) == "internal_error");
  CHECK(f.store.find("m1", "kx")->state == State::failed);
  bool reacquired = false;
  CHECK(f.guard.run("m1", "kx", "POST", "/orders", "{}", [&](Attempt& a) {
    reacquired = a.reacquired() && a.attempts() == 2;
    return Response{200, {}, "{}"};
  }).status == 200);
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

  // A lease lost before commit: the writes roll back and the answer is 500.
  const Response lost = f.guard.run("m1", "k2", "POST", "/orders", "{}", [&](Attempt& a) {
    f.clock.advance(31s);
    f.store.sweep(f.clock.now_ms());
    return a.commit([](db::Transaction& tx) {
      tx.exec("INSERT INTO orders (id) VALUES ('o2')");
      return Response{201, {}, "{\"id\":\"o2\"}"};
    });
  });
  CHECK(lost.status == 500);
  CHECK(f.db->exec("SELECT COUNT(*) FROM orders").integer(0, 0) == 1);
}
