// How each kind of answer (or no answer) is read: timeouts, refused connections, redirects,
// Retry-After in its forms. Real HTTP on loopback, fake clock. Runs on SQLite and PostgreSQL.
#include <catch2/catch.hpp>
#include <thread>

#include "fixture.h"
#include "receiver.h"

namespace webhooks::test {
namespace {

using publisher::TaskState;
using namespace std::chrono_literals;

// The single task of the single event published to `url`, after one run_once.
publisher::Task attempt_once(PublisherFixture& f, const std::string& url, std::string* event_id) {
  f.add_endpoint("m1", url);
  const auto accepted = f.publish("m1", "order.created");
  *event_id = accepted.event_id;
  REQUIRE(f.dispatcher.run_once() == 1);
  return f.tasks(accepted.event_id)[0];
}

TEST_CASE("a refused connection is an attempt with status 0, retried", "[outcomes]") {
  PublisherFixture f("refused");
  std::string event_id;
  const auto task = attempt_once(f, "http://127.0.0.1:9/hook", &event_id);
  CHECK(task.state == TaskState::pending);
  CHECK(task.next_attempt_at == f.clock.now_ms() + 5000);
  const auto attempts = f.store.attempts_of_event(event_id);
  REQUIRE(attempts.size() == 1);
  CHECK(attempts[0].status == 0);
  CHECK(attempts[0].error == publisher::TransportError::connect);  // typed to the record
  CHECK(attempts[0].error_message.find("port 9") != std::string::npos);
  // The columns keep one text, "<code>: <message>", as before the code was typed.
  CHECK(task.last_error == "connect: " + attempts[0].error_message);
}

TEST_CASE("a timeout is an attempt with status 0, retried", "[outcomes]") {
  PublisherFixture f("timeout");
  Receiver slow([](std::size_t, const Received&) {
    std::this_thread::sleep_for(1500ms);  // beyond the fixture's 1 s total timeout
    return Receiver::Reply{200, {}};
  });
  std::string event_id;
  const auto task = attempt_once(f, slow.url(), &event_id);
  CHECK(task.state == TaskState::pending);
  const auto attempts = f.store.attempts_of_event(event_id);
  REQUIRE(attempts.size() == 1);
  CHECK(attempts[0].status == 0);
  CHECK(attempts[0].error == publisher::TransportError::timeout);
  CHECK(attempts[0].error_message.find("timed out") != std::string::npos);
  CHECK(task.last_error == "timeout: " + attempts[0].error_message);
}

TEST_CASE("a 302 is recorded as a failure and never followed", "[outcomes]") {
  PublisherFixture f("redirect");
  Receiver target;
  Receiver redirecting([&](std::size_t, const Received&) {
    return Receiver::Reply{302, {{"Location", target.url()}}};
  });
  std::string event_id;
  const auto task = attempt_once(f, redirecting.url(), &event_id);
  CHECK(task.state == TaskState::pending);
  CHECK(task.last_status == 302);
  CHECK(target.count() == 0);
}

TEST_CASE("Retry-After as an HTTP date and as junk", "[outcomes]") {
  SECTION("an HTTP date 2 minutes ahead") {
    PublisherFixture f("retry-after-date");
    f.clock.set_ms(1'784'000'000'000);  // a whole second
    Receiver receiver([&](std::size_t, const Received&) {
      // 1784000120 s = Tue, 14 Jul 2026 03:35:20 GMT
      return Receiver::Reply{429, {{"Retry-After", "Tue, 14 Jul 2026 03:35:20 GMT"}}};
    });
    std::string event_id;
    const auto task = attempt_once(f, receiver.url(), &event_id);
    CHECK(task.next_attempt_at == 1'784'000'120'000);
  }
  SECTION("junk is ignored: the schedule applies") {
    PublisherFixture f("retry-after-junk");
    Receiver receiver([](std::size_t, const Received&) {
      return Receiver::Reply{429, {{"Retry-After", "soon-ish"}}};
    });
    std::string event_id;
    const auto start = f.clock.now_ms();
    const auto task = attempt_once(f, receiver.url(), &event_id);
    CHECK(task.next_attempt_at == start + 5000);
  }
}

}  // namespace
}  // namespace webhooks::test
