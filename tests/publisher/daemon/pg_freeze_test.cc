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
#include "support/frozen_http.h"
#include "support/own_postgres.h"
#include "support/test_env.h"

namespace webhooks::test {
namespace {

using nlohmann::json;
using std::chrono::steady_clock;

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
  check_served_while_frozen(port, 6, [&](int i) {
    Client own(port);
    if (i % 2 == 0) {
      return timed_answer(
          [&] { return own.post("/v1/events", event(i), "frozen-" + std::to_string(i)); });
    }
    return timed_answer([&] { return own.get("/v1/endpoints?merchant_id=m1"); });
  });
  // /metrics reads the database: answered 503 within the bounds too.
  const TimedAnswer metrics = timed_get(port, "/metrics");
  REQUIRE(metrics.answered);
  CHECK(metrics.status == 503);
  CHECK(metrics.error_code() == "storage_unavailable");
  CHECK(metrics.ms < 3000);

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
