// orders-api when its PostgreSQL server stops answering: the server processes frozen (SIGSTOP),
// not closed, as a frozen host or a network that drops packets leaves them. With
// --db-statement-timeout 300ms and --db-pool-wait 300ms, a request that needs the database
// answers 503 storage_unavailable with Retry-After: 1 within the bounds, /healthz answers within
// 1 s saying the database is unreachable, the console's sign-in page is served meanwhile, and once
// the server is resumed (SIGCONT) orders are taken again without a restart. A real PostgreSQL of
// the test's own (support/own_postgres.h), orders-api as a real process.
#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"
#include "support/own_postgres.h"

using namespace std::chrono;
using webhooks::test::Answer;
using webhooks::test::ms_since;
using webhooks::test::OwnPostgres;
using webhooks::test::Stack;

namespace {

const std::string kOrder = R"({"amount":2500,"currency":"USD","reference":"inv-7"})";

// An answer (none when the connection failed) and how long it took.
struct Timed {
  std::optional<Answer> answer;
  long long ms = 0;
};

// A GET, with `Authorization: Bearer token` unless `token` is empty. Asserts nothing (it runs on
// the test's threads too).
Timed timed_get(int port, const std::string& path, const std::string& token = "") {
  httplib::Client http("127.0.0.1", port);
  http.set_read_timeout(seconds(30));
  httplib::Headers headers;
  if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
  const auto start = steady_clock::now();
  const auto result = http.Get(path.c_str(), headers);
  Timed timed{std::nullopt, ms_since(start)};
  if (result) timed.answer = Answer{result->status, result->body, result->headers};
  return timed;
}

}  // namespace

TEST_CASE(
    "PostgreSQL frozen under orders-api: 503 storage_unavailable within the bounds, /healthz "
    "within 1 s, the sign-in page served meanwhile; orders are taken again once it is resumed",
    "[pg_freeze]") {
  OwnPostgres pg;
  Stack s;
  s.orders_db = pg.create_database("orders_freeze");
  s.start_api(
      {"--db-statement-timeout", "300ms", "--db-pool-wait", "300ms", "--fiber-threads", "2"});
  // Before the freeze. A new database's first statements may take longer than 300 ms on a loaded
  // machine (then 503): tried again, with the same key, until they succeed.
  Answer created = s.post("/orders", "before", kOrder);
  for (int attempt = 1; created.status == 503 && attempt < 20; ++attempt) {
    created = s.post("/orders", "before", kOrder);
  }
  REQUIRE(created.status == 201);
  const std::string order_id = created.json()["id"];
  REQUIRE(timed_get(s.api_port, "/healthz").answer->status == 200);

  OwnPostgres::Frozen frozen(pg);
  REQUIRE(frozen.processes() >= 2);  // the postmaster and its backends

  // Six requests that need the database at once (three times the fiber threads): new orders and
  // reads. Meanwhile, until they are all answered, the sign-in page and /healthz are asked for
  // over and over.
  constexpr int kStuck = 6;
  std::vector<Timed> stuck(kStuck);
  std::vector<std::function<void()>> calls;
  for (int i = 0; i < kStuck; ++i) {
    calls.emplace_back([&, i] {
      Timed& mine = stuck[static_cast<std::size_t>(i)];
      if (i % 2 == 0) {
        const auto start = steady_clock::now();
        mine.answer = s.try_post("/orders", "frozen-" + std::to_string(i), kOrder);
        mine.ms = ms_since(start);
      } else {
        mine = timed_get(s.api_port, "/orders/" + order_id, "key-m1");
      }
    });
  }
  int logins_meanwhile = 0, health_checks = 0;
  long long slowest_login = 0, slowest_health = 0;
  webhooks::test::probe_while_stuck(calls, [&](const auto& still_waiting) {
    const Timed login = timed_get(s.api_port, "/console/login");
    REQUIRE(login.answer);
    CHECK(login.answer->status == 200);
    slowest_login = std::max(slowest_login, login.ms);
    if (still_waiting()) ++logins_meanwhile;
    const Timed health = timed_get(s.api_port, "/healthz");
    REQUIRE(health.answer);
    CHECK(health.ms < 1000);
    slowest_health = std::max(slowest_health, health.ms);
    CHECK(health.answer->status == 503);
    CHECK(health.answer->error_code() == "storage_unavailable");
    CHECK(health.answer->header("Retry-After") == "1");
    CHECK(health.answer->json()["error"]["message"].get<std::string>().starts_with(
        "the database is unreachable"));
    ++health_checks;
  });
  INFO("sign-in pages served while the requests waited: " << logins_meanwhile);
  CHECK(logins_meanwhile >= 1);
  CHECK(slowest_login < 1000);
  for (const Timed& t : stuck) {
    REQUIRE(t.answer);
    INFO("took " << t.ms << " ms: " << t.answer->body);
    CHECK(t.answer->status == 503);
    CHECK(t.answer->error_code() == "storage_unavailable");
    CHECK(t.answer->header("Retry-After") == "1");
    // At most a pool wait (300 ms) and two statements' waits (300 + 250 ms each), with room for
    // a loaded machine.
    CHECK(t.ms < 3000);
  }
  WARN("frozen: DB requests answered in "
       << stuck[0].ms << ".." << stuck[kStuck - 1].ms << " ms, sign-in page at most "
       << slowest_login << " ms, " << health_checks << " /healthz checks, the slowest "
       << slowest_health << " ms");

  // Resumed: orders-api recovers alone.
  frozen.thaw();
  const auto thawed = steady_clock::now();
  std::optional<Answer> after;
  for (int attempt = 0; ms_since(thawed) < 30'000; ++attempt) {
    after = s.try_post("/orders", "after", kOrder);
    if (after && after->status == 201) break;
  }
  const long long recovered_ms = ms_since(thawed);
  REQUIRE(after);
  CHECK(after->status == 201);
  WARN("after SIGCONT the first 201 came " << recovered_ms << " ms later");
  CHECK(recovered_ms < 5000);
  CHECK(timed_get(s.api_port, "/healthz").answer->status == 200);
  CHECK(s.get("/orders/" + order_id).status == 200);
}
