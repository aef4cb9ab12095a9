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
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"
#include "support/frozen_http.h"
#include "support/own_postgres.h"

using namespace std::chrono;
using namespace webhooks::test;  // Stack, Answer (harness.h), OwnPostgres, the frozen checks

namespace {

const std::string kFreezeOrder = R"({"amount":2500,"currency":"USD","reference":"inv-7"})";

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
  Answer created = s.post("/orders", "before", kFreezeOrder);
  for (int attempt = 1; created.status == 503 && attempt < 20; ++attempt) {
    created = s.post("/orders", "before", kFreezeOrder);
  }
  REQUIRE(created.status == 201);
  const std::string order_id = created.json()["id"];
  REQUIRE(timed_get(s.api_port, "/healthz").status == 200);

  OwnPostgres::Frozen frozen(pg);
  REQUIRE(frozen.processes() >= 2);  // the postmaster and its backends

  // Six requests that need the database at once (three times the fiber threads): new orders and
  // reads. Meanwhile, until they are all answered, the sign-in page and /healthz are asked for
  // over and over.
  check_served_while_frozen(s.api_port, 6, [&](int i) {
    if (i % 2 != 0) return timed_get(s.api_port, "/orders/" + order_id, "key-m1");
    const auto start = steady_clock::now();
    const std::optional<Answer> posted =
        s.try_post("/orders", "frozen-" + std::to_string(i), kFreezeOrder);
    if (!posted) return TimedAnswer{false, 0, "", "", ms_since(start)};
    return TimedAnswer{true, posted->status, posted->body, posted->header("Retry-After"),
                       ms_since(start)};
  });

  // Resumed: orders-api recovers alone.
  frozen.thaw();
  const auto thawed = steady_clock::now();
  std::optional<Answer> after;
  for (int attempt = 0; ms_since(thawed) < 30'000; ++attempt) {
    after = s.try_post("/orders", "after", kFreezeOrder);
    if (after && after->status == 201) break;
  }
  const long long recovered_ms = ms_since(thawed);
  REQUIRE(after);
  CHECK(after->status == 201);
  WARN("after SIGCONT the first 201 came " << recovered_ms << " ms later");
  CHECK(recovered_ms < 5000);
  CHECK(timed_get(s.api_port, "/healthz").status == 200);
  CHECK(s.get("/orders/" + order_id).status == 200);
}
