// bench_console: the console's reads (Store::list_event_page, endpoint_stats, overview) on a
// SQLite file holding 1,000,000 events, each with its task and attempt, and the milliseconds each
// takes (median and p99 of repeated runs). The target: every one well under 100 ms.
//   bench_console [EVENTS]   (default 1000000; WEBHOOKS_BENCH_KEEP=1 keeps the database file in
//                             $TMPDIR/webhooks-bench-console/ for EXPLAIN QUERY PLAN)
// Seeding is a few INSERT … SELECT over a recursive counter, one transaction per table, in
// creation order: 10 days of events, 100 merchants with an endpoint each (three disabled), eight
// types, every other event with an Idempotency-Key, ~1% of tasks dead and the newest 2,000
// pending; one attempt per task (dead ones answered 500). No ANALYZE: the daemon never runs one.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "bench_util.h"
#include "webhooks/db.h"
#include "webhooks/idempotency/schema.h"
#include "webhooks/publisher/schema.h"
#include "webhooks/publisher/store.h"

namespace {

using namespace webhooks;
using Steady = std::chrono::steady_clock;

constexpr std::int64_t kSpanMs = 10LL * 24 * 3600 * 1000;  // the events cover 10 days
constexpr std::int64_t kNow = 1'700'000'000'000;

double ms_since(Steady::time_point start) {
  return std::chrono::duration<double, std::milli>(Steady::now() - start).count();
}

// The counter 0..n-1 as a CTE, and each event's creation time.
std::string counter(std::int64_t n) {
  return "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < " +
         std::to_string(n - 1) + ") ";
}
std::string created(std::int64_t n) {
  return "(" + std::to_string(kNow - kSpanMs) + " + i * " + std::to_string(kSpanMs / n) + ")";
}
const char* kEventId = "printf('%012x-7000-8000-%012x', ";

void seed(db::Database& db, std::int64_t n) {
  const std::string c = created(n), id = std::string(kEventId) + c + ", i)";
  db.transact([&](db::Transaction& tx) {
    tx.exec(counter(100) +
            "INSERT INTO publisher_endpoints (id, merchant_id, url, enabled, disabled_reason, "
            "failing_since, created_at, updated_at) SELECT 'ep' || i, 'm' || i, "
            "'https://example.com/m' || i, CASE WHEN i < 3 THEN 0 ELSE 1 END, CASE WHEN i < 3 "
            "THEN 'failing continuously' END, CASE WHEN i < 5 THEN " +
            std::to_string(kNow - 3'600'000) + " END, 0, 0 FROM n");
  });
  db.transact([&](db::Transaction& tx) {
    tx.exec(counter(n) +
            "INSERT INTO publisher_events (event_id, merchant_id, event_type, payload, created_at, "
            "idempotency_key) SELECT " +
            id + ", 'm' || (i % 100), 'order.' || (i / 3 % 8), '{\"order_id\":\"o_' || i || "
            "'\",\"amount\":' || (i % 10000) || '}', " +
            c + ", CASE WHEN i % 2 = 0 THEN 'key-' || i END FROM n");
  });
  const std::string state = "CASE WHEN i >= " + std::to_string(n - 2000) +
                            " THEN 'pending' WHEN i % 97 = 0 THEN 'dead' ELSE 'succeeded' END";
  db.transact([&](db::Transaction& tx) {
    tx.exec(counter(n) +
            "INSERT INTO publisher_tasks (id, event_id, endpoint_id, state, attempts, "
            "next_attempt_at, age_from, last_status, created_at, updated_at, event_created_at) "
            "SELECT i + 1, " +
            id + ", 'ep' || (i % 100), " + state + ", 1, " + c + " + 60000, " + c +
            ", CASE WHEN i % 97 = 0 THEN 500 ELSE 200 END, " + c + ", " + c + ", " + c +
            " FROM n");
  });
  db.transact([&](db::Transaction& tx) {
    tx.exec(counter(n - 2000) +
            "INSERT INTO publisher_attempts (delivery_id, task_id, event_id, endpoint_id, "
            "attempt_number, trigger_kind, started_at, status, latency_ms) SELECT "
            "printf('%012x-7000-9000-%012x', " +
            c + ", i), i + 1, " + id + ", 'ep' || (i % 100), 1, 'scheduled', " + c +
            " + 50, CASE WHEN i % 97 = 0 THEN 500 ELSE 200 END, i * 37 % 500 FROM n");
  });
}

// Runs `op` `runs` times; prints its median and p99 in milliseconds.
void measure(const char* name, int runs, const std::function<void()>& op) {
  op();  // warm
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    const auto start = Steady::now();
    op();
    ms.push_back(ms_since(start));
  }
  std::printf("  %-44s median %7.2f ms   p99 %7.2f ms\n", name, bench::median(ms),
              bench::quantile(ms, 0.99));
}

void run(publisher::Store& store, std::int64_t n) {
  using publisher::EventQuery;
  const auto page = [&store](const std::function<void(EventQuery&)>& set) {
    return [&store, set] {
      EventQuery q;
      q.limit = 50;
      set(q);
      if (store.list_event_page(q).events.empty()) std::abort();
    };
  };
  const std::int64_t mid = n / 2, step = kSpanMs / n, mid_at = kNow - kSpanMs + mid * step;
  char mid_id[64];
  std::snprintf(mid_id, sizeof mid_id, "%012llx-7000-8000-%012llx",
                static_cast<unsigned long long>(mid_at), static_cast<unsigned long long>(mid));
  const std::string deep = std::to_string(mid_at) + "." + mid_id;
  constexpr int kRuns = 200;
  measure("events: first page (50)", kRuns, page([](EventQuery&) {}));
  measure("events: merchant + type", kRuns, page([](EventQuery& q) {
            q.merchant_id = "m7";
            q.type = "order.5";
          }));
  measure("events: state = dead", kRuns,
          page([](EventQuery& q) { q.state = publisher::TaskState::dead; }));
  measure("events: merchant + state = dead", kRuns, page([](EventQuery& q) {
            q.merchant_id = "m42";
            q.state = publisher::TaskState::dead;
          }));
  measure("events: time range (one day)", kRuns, page([](EventQuery& q) {
            q.since = kNow - 3 * 86'400'000LL;
            q.until = kNow - 2 * 86'400'000LL;
          }));
  measure("events: 500,000 deep via cursor", kRuns, page([&](EventQuery& q) { q.cursor = deep; }));
  measure("events: q = event id", kRuns, page([&](EventQuery& q) { q.q = mid_id; }));
  measure("events: q = idempotency key", kRuns,
          page([&](EventQuery& q) { q.q = "key-" + std::to_string(mid); }));
  measure("endpoint stats (last 100 of 10,000 attempts)", kRuns,
          [&] { store.endpoint_stats("ep7"); });
  measure("overview", 50, [&] { store.overview(kNow); });
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 1'000'000;
  const auto dir = std::filesystem::temp_directory_path() / "webhooks-bench-console";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto db = std::shared_ptr<db::Database>(db::Database::open((dir / "console.db").string()));
  db->migrate({idempotency::schema(), publisher::schema()}, kNow);
  const auto start = Steady::now();
  seed(*db, n);
  std::printf("bench_console: the console's reads on SQLite, %lld events with their tasks and "
              "attempts (seeded in %.1f s)\n",
              static_cast<long long>(n), ms_since(start) / 1000);
  publisher::Store store(db);
  run(store, n);
  if (!std::getenv("WEBHOOKS_BENCH_KEEP")) std::filesystem::remove_all(dir);
  return 0;
}
