// PostgreSQL that stops answering under the publisher: its server processes frozen (SIGSTOP), not
// closed, as a frozen host or a network that drops packets leaves them. With
// --db-statement-timeout 300ms and --db-pool-wait 300ms, a request that needs the database
// answers 503 storage_unavailable with Retry-After: 1 within the bounds, /healthz answers within
// 1 s saying the database is unreachable, the console's sign-in page is served meanwhile, and
// once the server is resumed (SIGCONT) requests succeed again without a restart. A real
// PostgreSQL of the test's own (support/own_postgres.h), the daemon as a real process.
#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "daemon_client.h"
#include "process.h"
#include "support/own_postgres.h"
#include "support/test_env.h"

namespace webhooks::test {
namespace {

using nlohmann::json;
using std::chrono::steady_clock;

// One request's answer (answered false when the connection failed) and how long it took.
struct Timed {
  bool answered = false;
  int status = 0;
  std::string body, retry_after;
  long long ms = 0;
  std::string error_code() const { return json::parse(body)["error"]["code"]; }
};

template <typename F>
Timed timed(F request) {
  const auto start = steady_clock::now();
  const httplib::Result result = request();
  Timed timed;
  timed.ms = ms_since(start);
  if (result) {
    timed.answered = true;
    timed.status = result->status;
    timed.body = result->body;
    timed.retry_after = result->get_header_value("Retry-After");
  }
  return timed;
}

json event(int n) {
  return {{"merchant_id", "m1"}, {"type", "order.created"}, {"data", {{"n", n}}}};
}

TEST_CASE(
    "PostgreSQL frozen: 503 storage_unavailable within the bounds, /healthz within 1 s, the "
    "sign-in page served meanwhile; requests succeed again once it is resumed",
    "[pg_freeze]") {
  OwnPostgres pg;
  const std::string target = pg.create_database("publisher_freeze");
  Daemon daemon({"--listen", "127.0.0.1:0", "--db", target, "--admin-token", kToken,
                 "--allow-private-networks", "--db-statement-timeout", "300ms", "--db-pool-wait",
                 "300ms", "--fiber-threads", "2", "--poll-interval", "50ms"},
                temp_dir("publisherd-pg-freeze"));
  const int port = daemon.wait_listening();
  Client client(port);
  // Before the freeze. A new database's first statements may take longer than 300 ms on a loaded
  // machine (then 503): tried again until they succeed.
  REQUIRE(eventually([&] {
    const auto created = client.post(
        "/v1/endpoints", {{"merchant_id", "m1"}, {"url", "http://127.0.0.1:9/"}}, "endpoint");
    return created && created->status == 201;
  }));
  REQUIRE(eventually([&] {
    const auto accepted = client.post("/v1/events", event(0), "before");
    return accepted && accepted->status == 202;
  }));
  REQUIRE(client.http.Get("/healthz")->status == 200);

  OwnPostgres::Frozen frozen(pg);
  REQUIRE(frozen.processes() >= 2);  // the postmaster and its backends

  // Six requests that need the database at once (three times the fiber threads): ingests and
  // reads. Meanwhile, until they are all answered, the sign-in page and /healthz are asked for
  // over and over.
  constexpr int kStuck = 6;
  std::vector<Timed> stuck(kStuck);
  std::vector<std::function<void()>> calls;
  for (int i = 0; i < kStuck; ++i) {
    calls.emplace_back([&, i] {
      Client own(port);
      stuck[static_cast<std::size_t>(i)] =
          i % 2 == 0 ? timed([&] {
            return own.post("/v1/events", event(i), "frozen-" + std::to_string(i));
          })
                     : timed([&] { return own.get("/v1/endpoints?merchant_id=m1"); });
    });
  }
  Client probe(port);
  int logins_meanwhile = 0, health_checks = 0;
  long long slowest_login = 0, slowest_health = 0;
  probe_while_stuck(calls, [&](const auto& still_waiting) {
    const Timed login = timed([&] { return probe.http.Get("/console/login"); });
    REQUIRE(login.answered);
    CHECK(login.status == 200);
    slowest_login = std::max(slowest_login, login.ms);
    if (still_waiting()) ++logins_meanwhile;
    const Timed health = timed([&] { return probe.http.Get("/healthz"); });
    REQUIRE(health.answered);
    CHECK(health.ms < 1000);
    slowest_health = std::max(slowest_health, health.ms);
    CHECK(health.status == 503);
    CHECK(health.retry_after == "1");
    const json body = json::parse(health.body);
    CHECK(body["error"]["code"] == "storage_unavailable");
    CHECK(body["error"]["message"].get<std::string>().starts_with("the database is unreachable"));
    ++health_checks;
  });
  INFO("sign-in pages served while the requests waited: " << logins_meanwhile);
  CHECK(logins_meanwhile >= 1);
  CHECK(slowest_login < 1000);
  for (const Timed& answer : stuck) {
    REQUIRE(answer.answered);
    INFO("took " << answer.ms << " ms: " << answer.body);
    CHECK(answer.status == 503);
    CHECK(answer.error_code() == "storage_unavailable");
    CHECK(answer.retry_after == "1");
    // At most a pool wait (300 ms) and two statements' waits (300 + 250 ms each), with room for
    // a loaded machine.
    CHECK(answer.ms < 3000);
  }
  // /metrics reads the database: answered 503 within the bounds too.
  const Timed metrics = timed([&] { return probe.http.Get("/metrics"); });
  REQUIRE(metrics.answered);
  CHECK(metrics.status == 503);
  CHECK(metrics.error_code() == "storage_unavailable");
  CHECK(metrics.ms < 3000);
  WARN("frozen: DB requests answered in "
       << stuck[0].ms << ".." << stuck[kStuck - 1].ms << " ms, sign-in page at most "
       << slowest_login << " ms, " << health_checks << " /healthz checks, the slowest "
       << slowest_health << " ms");

  // Resumed: the daemon recovers alone.
  frozen.thaw();
  const auto thawed = steady_clock::now();
  REQUIRE(eventually([&] {
    const auto accepted = client.post("/v1/events", event(100), "after");
    return accepted && accepted->status == 202;
  }));
  const long long recovered_ms = ms_since(thawed);
  WARN("after SIGCONT the first 202 came " << recovered_ms << " ms later");
  CHECK(recovered_ms < 5000);
  CHECK(client.http.Get("/healthz")->status == 200);
  CHECK(client.get("/v1/endpoints?merchant_id=m1")->status == 200);
}

}  // namespace
}  // namespace webhooks::test
