// The handler's outcomes (answer table steps 7 and 9-11), the lease heartbeat, concurrency and
// transactional mode; on the engine named by WEBHOOKS_TEST_ENGINE, with a fake clock.
#include <atomic>
#include <latch>
#include <thread>

#include "receiver_support.h"
#include "webhooks/idempotency/store.h"

using namespace receiver_test;
using webhooks::idempotency::State;

namespace {

struct Fixture {
  explicit Fixture(bool grouped = true) {
    Config config = test_config(clock);
    config.group_commits = grouped;
    receiver = std::make_unique<Receiver>(config, db);
    db->exec("CREATE TABLE effects (event_id TEXT PRIMARY KEY, type TEXT NOT NULL)");
  }
  FakeClock clock{kNow * 1000};
  std::shared_ptr<db::Database> db = test::open_database("receiver_handling");
  std::unique_ptr<Receiver> receiver;

  Answer post(const std::string& id, const Handler& handler) {
    const std::string body = event_body(id);
    return receiver->handle(signed_headers(id, body), body, handler);
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

TEST_CASE("step 7: the same event while its handler runs is 409 with Retry-After") {
  Fixture f;
  Answer inner;
  const Answer outer = f.post("e1", [&](const Event& event) {
    CHECK(event.id == "e1");
    CHECK(event.type == "order.captured");
    CHECK(event.delivery_id == "d1");
    CHECK(event.attempt == 1);
    CHECK((*event.payload)["data"]["amount"] == 1000);
    f.clock.advance(std::chrono::milliseconds(12'500));
    inner = f.post("e1", ok);
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
  Receiver receiver(config, test::open_database("receiver_timeout"));
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
  config.lease = std::chrono::milliseconds(300);  // renewed every 100 ms of real time
  Receiver receiver(config, test::open_database("receiver_lease"));
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
    inner = receiver.handle(signed_headers("e1", body), body, ok);
    return Reply{};
  });
  CHECK(outer.status == 200);
  CHECK(inner.status == 409);
  CHECK(error_code(inner) == "event_in_progress");
}

TEST_CASE("16 concurrent deliveries of one event: one effect, answers 200 or 409") {
  for (const bool grouped : {true, false}) {
    INFO("group_commits " << grouped);
    Fixture f(grouped);
    std::atomic<int> calls{0};
    std::vector<Answer> answers(16);
    std::latch start(16);
    std::vector<std::thread> threads;
    const std::string body = event_body("e1");
    for (int i = 0; i < 16; ++i) {
      threads.emplace_back([&, i] {
        const Headers headers =
            signed_headers("e1", body, kNow, kSecret, "d" + std::to_string(i));
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
  for (const bool grouped : {true, false}) {
    INFO("group_commits " << grouped);
    Fixture f(grouped);
    const Answer thrown = f.post_tx("e1", [](const Event& e, db::Transaction& tx) -> Reply {
      insert_effect(e, tx);
      throw std::runtime_error("failed after writing");
    });
    CHECK(thrown.status == 500);
    CHECK(f.effects() == 0);
    CHECK(f.state("e1") == State::failed);

    const Answer unavailable = f.post_tx("e1", [](const Event& e, db::Transaction& tx) {
      insert_effect(e, tx);
      return Reply{503, ""};
    });
    CHECK(unavailable.status == 500);
    CHECK(f.effects() == 0);

    CHECK(f.post_tx("e1", insert_effect).status == 200);
    CHECK(f.effects() == 1);
    CHECK(f.state("e1") == State::completed);
    CHECK(f.post_tx("e1", insert_effect).status == 200);  // a duplicate: not run again
    CHECK(f.effects() == 1);

    int before = 0;
    const std::string body = event_body("e2");
    CHECK(f.receiver->handle(signed_headers("e2", body), body, insert_effect,
                             [&](const Event&) { ++before; })
              .status == 200);
    CHECK(before == 1);
    CHECK(f.effects() == 2);
  }
}
