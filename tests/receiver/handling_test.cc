// The handler's outcomes (answer table steps 7 and 9-11), the lease heartbeat, concurrency and
// transactional mode; on the engine named by WEBHOOKS_TEST_ENGINE, with a fake clock.
#include <atomic>
#include <latch>
#include <thread>

#include "receiver_support.h"
#include "webhooks/idempotency/schema.h"
#include "webhooks/idempotency/store.h"

using namespace receiver_test;
using webhooks::idempotency::State;

namespace {

using Claims = Config::Claims;

struct Fixture {
  explicit Fixture(Claims claims = Claims::automatic) {
    Config config = test_config(clock);
    config.claims = claims;
    receiver = std::make_unique<Receiver>(config, db);
    db->exec("CREATE TABLE effects (event_id TEXT PRIMARY KEY, type TEXT NOT NULL)");
  }
  FakeClock clock{kNow * 1000};
  std::shared_ptr<db::Database> db =
      test::open_database("receiver_handling", {idempotency::schema()});
  std::unique_ptr<Receiver> receiver;

  Answer post(const std::string& id, const Handler& handler) {
    const std::string body = event_body(id);
    return receiver->handle(signed_headers(id, body), body, handler);
  }
  // A second receiver on the same database, as another process would run it (its own claims).
  std::unique_ptr<Receiver> another(Claims claims = Claims::durable) {
    Config config = test_config(clock);
    config.claims = claims;
    return std::make_unique<Receiver>(config, db);
  }
  Answer post_tx(const std::string& id, const TransactionalHandler& handler) {
    const std::string body = event_body(id);
    return receiver->handle(signed_headers(id, body), body, handler);
  }
  std::int64_t effects() { return db->exec("SELECT COUNT(*) FROM effects").integer(0, 0); }
  State state(const std::string& id) { return receiver->store().find("shop", id)->state; }
};

Reply insert_effect(const Event& event, db::Transaction& tx) {
  tx.exec("INSERT INTO effects (event_id, type) VALUES ($1, $2)", {event.id, event.type});
  return Reply{};
}

}  // namespace

TEST_CASE(
    "step 7: the same event while this process handles it is 409 at once (in-process claim)") {
  for (const Claims claims : {Claims::automatic, Claims::durable}) {
    Fixture f(claims);
    Answer inner;
    const Answer outer = f.post("e1", [&](const Event& event) {
      CHECK(event.id == "e1");
      CHECK(event.type == "order.captured");
      CHECK(event.delivery_id == "d1");
      CHECK(event.attempt == 1);
      CHECK(event.payload()["data"]["amount"] == 1000);
      inner = f.post("e1", ok);
      return Reply{};
    });
    CHECK(outer.status == 200);
    CHECK(inner.status == 409);
    CHECK(error_code(inner) == "event_in_progress");
    CHECK(header(inner, "Retry-After") == "1");
  }
  // Transactional: the record is not even visible yet; the claim alone answers (waiting for the
  // database here would wait for this very transaction).
  Fixture f;
  Answer inner;
  const Answer outer = f.post_tx("e2", [&](const Event& e, db::Transaction& tx) {
    inner = f.post_tx("e2", insert_effect);
    return insert_effect(e, tx);
  });
  CHECK(outer.status == 200);
  CHECK(inner.status == 409);
  CHECK(error_code(inner) == "event_in_progress");
  CHECK(f.effects() == 1);
}

TEST_CASE("step 7: a durable claim held by another process is 409 with the lease's Retry-After") {
  Fixture f(Claims::durable);
  const std::unique_ptr<Receiver> other = f.another();
  CHECK(f.receiver->durable_claims());
  CHECK(other->durable_claims());
  Answer inner;
  const std::string body = event_body("e1");
  const Answer outer = f.post("e1", [&](const Event&) {
    f.clock.advance(std::chrono::milliseconds(12'500));
    inner = other->handle(signed_headers("e1", body), body, ok);
    return Reply{};
  });
  CHECK(outer.status == 200);
  CHECK(inner.status == 409);
  CHECK(error_code(inner) == "event_in_progress");
  CHECK(header(inner, "Retry-After") == "18");  // 30 s lease, 12.5 s gone
}

TEST_CASE("steps 9 and 10: 2xx and final 4xx answers are stored and replayed") {
  Fixture f;
  int calls = 0;
  const auto reply = [&](int status, std::string body) {
    return [&calls, status, body](const Event&) {
      ++calls;
      return Reply{status, body};
    };
  };
  CHECK(f.post("e202", reply(202, "{\"queued\":1}")).status == 202);
  const Answer again = f.post("e202", reply(200, ""));
  CHECK(again.status == 202);
  CHECK(again.body == "{\"queued\":1}");
  CHECK(calls == 1);

  const Answer rejected = f.post("e422", reply(422, ""));
  CHECK(rejected.status == 422);
  CHECK(error_code(rejected) == "event_rejected");
  const Answer replayed = f.post("e422", reply(200, ""));
  CHECK(replayed.status == 422);
  CHECK(error_code(replayed) == "event_rejected");
  CHECK(header(replayed, "Idempotent-Replayed") == "true");
  CHECK(calls == 2);
  CHECK(f.state("e422") == State::completed);

  for (const int status : {408, 409, 425, 429, 500, 503}) {
    const std::string id = "e" + std::to_string(status);
    const Answer failed = f.post(id, reply(status, ""));
    CHECK(failed.status == 500);
    CHECK(error_code(failed) == "handler_failed");
    CHECK(f.state(id) == State::failed);
  }
}

TEST_CASE("duplicates are counted on the record, from the replay cache too (both modes)") {
  Fixture f;
  CHECK(f.post("e-count", ok).status == 200);
  CHECK(header(f.post("e-count", ok), "Idempotent-Replayed") == "true");  // the replay cache
  CHECK(header(f.post("e-count", ok), "Idempotent-Replayed") == "true");
  const std::string other = event_body("e-count", "order.refunded");
  CHECK(f.receiver->handle(signed_headers("e-count", other), other, ok).status == 422);
  CHECK(f.post_tx("e-count-tx", insert_effect).status == 200);
  CHECK(header(f.post_tx("e-count-tx", insert_effect), "Idempotent-Replayed") == "true");
  CHECK(f.receiver->store().flush_counts() == 2);
  const auto now = f.clock.now_ms();
  const auto counted = f.receiver->store().lookup("shop", "e-count", now);
  REQUIRE(counted);
  CHECK(counted->replays == 2);
  CHECK(counted->mismatches == 1);
  CHECK(counted->conflicts == 0);
  CHECK(f.receiver->store().lookup("shop", "e-count-tx", now)->replays == 1);
}

TEST_CASE("step 11: a throwing handler is 500 and the next delivery runs it again") {
  Fixture f;
  int calls = 0;
  const Answer thrown = f.post("e1", [&](const Event&) -> Reply {
    ++calls;
    throw std::runtime_error("the warehouse is down");
  });
  CHECK(thrown.status == 500);
  CHECK(error_code(thrown) == "handler_failed");
  CHECK(f.state("e1") == State::failed);
  const Answer retried = f.post("e1", [&](const Event& event) {
    ++calls;
    CHECK(event.attempt == 2);
    return Reply{};
  });
  CHECK(retried.status == 200);
  CHECK(header(retried, "Idempotent-Replayed").empty());
  CHECK(f.post("e1", ok).status == 200);
  CHECK(calls == 2);
  CHECK(f.receiver->store().find("shop", "e1")->attempts == 2);
}

TEST_CASE("a handler that overruns handler_timeout fails the event") {
  FakeClock clock{kNow * 1000};
  Config config = test_config(clock);
  config.handler_timeout = std::chrono::milliseconds(1);
  Receiver receiver(config, test::open_database("receiver_timeout", {idempotency::schema()}));
  const std::string body = event_body("slow");
  const Answer slow = receiver.handle(signed_headers("slow", body), body, [](const Event&) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a slow handler
    return Reply{};
  });
  CHECK(slow.status == 500);
  CHECK(receiver.store().find("shop", "slow")->state == State::failed);
}

TEST_CASE("the lease is renewed while the handler runs") {
  FakeClock clock{kNow * 1000};
  Config config = test_config(clock);
  config.claims = Claims::durable;
  config.lease = std::chrono::milliseconds(300);  // renewed every 100 ms of real time
  const std::shared_ptr<db::Database> db =
      test::open_database("receiver_lease", {idempotency::schema()});
  Receiver receiver(config, db);
  Receiver other(config, db);  // another process: only the durable record stops it
  const std::string body = event_body("e1");
  Answer inner;
  const Answer outer = receiver.handle(signed_headers("e1", body), body, [&](const Event&) {
    clock.advance(std::chrono::milliseconds(200));
    const UnixMillis now = clock.now_ms();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (receiver.store().find("shop", "e1")->lease_expires_at < now + 300 &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    clock.advance(std::chrono::milliseconds(200));  // past the first lease, within the renewed one
    inner = other.handle(signed_headers("e1", body), body, ok);
    return Reply{};
  });
  CHECK(outer.status == 200);
  CHECK(inner.status == 409);
  CHECK(error_code(inner) == "event_in_progress");
}

TEST_CASE("16 concurrent deliveries of one event: one effect, answers 200 or 409") {
  for (const Claims claims : {Claims::automatic, Claims::durable}) {
    INFO("claims " << static_cast<int>(claims));
    Fixture f(claims);
    std::atomic<int> calls{0};
    std::vector<Answer> answers(16);
    std::latch start(16);
    std::vector<std::thread> threads;
    const std::string body = event_body("e1");
    for (int i = 0; i < 16; ++i) {
      threads.emplace_back([&, i] {
        const Headers headers = signed_headers("e1", body, kNow, kSecret, "d" + std::to_string(i));
        start.arrive_and_wait();
        answers[i] = f.receiver->handle(headers, body, [&](const Event& e, db::Transaction& tx) {
          ++calls;
          return insert_effect(e, tx);
        });
      });
    }
    for (auto& t : threads) t.join();
    int ok200 = 0, busy = 0;
    for (const Answer& a : answers) {
      if (a.status == 200) ++ok200;
      if (a.status == 409 && error_code(a) == "event_in_progress") ++busy;
    }
    CHECK(ok200 + busy == 16);
    CHECK(ok200 >= 1);
    CHECK(calls == 1);
    CHECK(f.effects() == 1);
  }
}

TEST_CASE("transactional mode: effects and the dedup record commit together or not at all") {
  Fixture f;
  const Answer thrown = f.post_tx("e1", [](const Event& e, db::Transaction& tx) -> Reply {
    insert_effect(e, tx);
    throw std::runtime_error("failed after writing");
  });
  CHECK(thrown.status == 500);
  CHECK(error_code(thrown) == "handler_failed");
  CHECK(f.effects() == 0);
  CHECK(f.state("e1") == State::failed);  // the failed attempt is counted

  const Answer unavailable = f.post_tx("e1", [](const Event& e, db::Transaction& tx) {
    CHECK(e.attempt == 2);
    insert_effect(e, tx);
    return Reply{503, ""};
  });
  CHECK(unavailable.status == 500);
  CHECK(f.effects() == 0);

  CHECK(f.post_tx("e1", insert_effect).status == 200);
  CHECK(f.effects() == 1);
  CHECK(f.state("e1") == State::completed);
  CHECK(f.receiver->store().find("shop", "e1")->attempts == 3);
  const Answer duplicate = f.post_tx("e1", insert_effect);  // not run again
  CHECK(duplicate.status == 200);
  CHECK(header(duplicate, "Idempotent-Replayed") == "true");
  CHECK(f.effects() == 1);
}

TEST_CASE(
    "transactional mode: 24 concurrent new events, one handler fails: only its writes roll back") {
  Fixture f;
  constexpr int kEvents = 24;
  std::vector<Answer> answers(kEvents);
  std::vector<std::thread> threads;
  std::latch start(kEvents);
  for (int i = 0; i < kEvents; ++i) {
    threads.emplace_back([&, i] {
      const std::string id = "e" + std::to_string(i);
      const std::string body = event_body(id);
      const Headers headers = signed_headers(id, body);
      start.arrive_and_wait();
      answers[i] = f.receiver->handle(headers, body, [](const Event& e, db::Transaction& tx) {
        insert_effect(e, tx);
        if (e.id == "e7") throw std::runtime_error("e7 fails after its write");
        return Reply{};
      });
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < kEvents; ++i) {
    INFO("event e" << i);
    CHECK(answers[i].status == (i == 7 ? 500 : 200));
  }
  CHECK(f.effects() == kEvents - 1);
  CHECK(f.db->exec("SELECT COUNT(*) FROM effects WHERE event_id = 'e7'").integer(0, 0) == 0);
  CHECK(f.state("e7") == State::failed);
  CHECK(f.state("e8") == State::completed);
}

TEST_CASE("transactional mode: a duplicate from another process waits for the first, bounded") {
  // The other "process" is a second Receiver on the same database, with claims of its own.
  Fixture f;
  Config config = test_config(f.clock);
  config.lock_timeout = std::chrono::milliseconds(200);
  if (test::engine() == db::Engine::sqlite) {
    // SQLite: the second writer waits for the first's BEGIN IMMEDIATE lock; bounded by the
    // busy timeout, after which the store is unavailable (503), never a second run.
    config.database.sqlite_busy_timeout_ms = 200;
  }
  const std::string target = test::database_target("receiver_cross_process");
  Receiver first(config, db::Database::open(target, config.database));
  first.database().exec("CREATE TABLE effects (event_id TEXT PRIMARY KEY, type TEXT NOT NULL)");
  Receiver second(config, db::Database::open(target, config.database));
  const std::string body = event_body("e1");
  Answer waited;
  int second_calls = 0;
  const Answer answered =
      first.handle(signed_headers("e1", body), body, [&](const Event& e, db::Transaction& tx) {
        insert_effect(e, tx);
        // Inside the first's open transaction, the second delivery of e1 arrives.
        waited = second.handle(signed_headers("e1", body, kNow, kSecret, "d2"), body,
                               [&](const Event& e2, db::Transaction& tx2) {
                                 ++second_calls;
                                 return insert_effect(e2, tx2);
                               });
        return Reply{};
      });
  CHECK(answered.status == 200);
  CHECK(second_calls == 0);
  if (test::engine() == db::Engine::postgres) {
    CHECK(waited.status == 409);  // gave up after lock_timeout
    CHECK(error_code(waited) == "event_in_progress");
    CHECK(header(waited, "Retry-After") == "1");
  } else {
    CHECK(waited.status == 503);  // gave up after the busy timeout
    CHECK(error_code(waited) == "storage_unavailable");
  }
  // Once the first has committed, the second replays its answer and runs nothing.
  const Answer replayed = second.handle(signed_headers("e1", body, kNow, kSecret, "d3"), body,
                                        [&](const Event& e2, db::Transaction& tx2) {
                                          ++second_calls;
                                          return insert_effect(e2, tx2);
                                        });
  CHECK(replayed.status == 200);
  CHECK(header(replayed, "Idempotent-Replayed") == "true");
  CHECK(second_calls == 0);
  CHECK(first.database().exec("SELECT COUNT(*) FROM effects").integer(0, 0) == 1);
}
