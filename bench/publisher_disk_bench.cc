// The disk one delivered event costs the publisher (docs/operations.md, "Retention"): N events with
// a typical payload (about 300 bytes of JSON), one task each, settled succeeded, and 1.3 attempts
// each on average (3 in 10 events failed once with a 500 first), written through
// Store::insert_event as ingest does, on SQLite and on PostgreSQL (WEBHOOKS_BENCH_POSTGRES_URL, set
// by scripts/bench). Prints the bytes per event and the extrapolation to 1,000,000 events.
//   bench_publisher_disk [EVENTS]      (default 100000)
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "webhooks/clock.h"
#include "webhooks/db.h"
#include "webhooks/idempotency/schema.h"
#include "webhooks/publisher/schema.h"
#include "webhooks/publisher/store.h"
#include "webhooks/uuid.h"

namespace {

using namespace webhooks;

constexpr int kPerTransaction = 1000;

// About 300 bytes, as an order event's data.
std::string payload(long i) {
  return R"({"order_id":"ord_)" + std::to_string(100000000 + i) +
         R"(","status":"captured","amount":12500,"currency":"EUR","customer":{"id":"cus_)" +
         std::to_string(5000000 + i % 9973) +
         R"(","email":"customer@example.com","country":"FR"},"items":[{"sku":"SKU-1042",)"
         R"("quantity":2,"unit_amount":5000},{"sku":"SKU-2210","quantity":1,"unit_amount":2500}],)"
         R"("captured_at":"2026-12-02T13:00:00Z"})";
}

constexpr std::string_view kSettle =
    "UPDATE publisher_tasks SET state = 'succeeded', attempts = $2, last_status = 200, "
    "updated_at = $3 WHERE event_id = $1";
constexpr std::string_view kAttempt =
    "INSERT INTO publisher_attempts (delivery_id, task_id, event_id, endpoint_id, attempt_number, "
    "trigger_kind, started_at, status, latency_ms, error, response_snippet) VALUES ($1, "
    "(SELECT id FROM publisher_tasks WHERE event_id = $2), $2, $3, $4, 'scheduled', $5, $6, $7, "
    "NULL, $8)";

// Inserts `events` events as described above.
void fill(db::Database& database, publisher::Store& store, long events) {
  UuidV7Generator ids(system_clock());
  publisher::Endpoint endpoint;
  endpoint.id = "ep_" + ids.next();
  endpoint.merchant_id = "merchant_1";
  endpoint.url = "https://merchant.example.com/webhooks";
  endpoint.secrets.push_back({"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", 0, std::nullopt});
  store.create_endpoint(endpoint);
  const UnixMillis now = system_clock().now_ms();
  for (long done = 0; done < events; done += kPerTransaction) {
    database.transact([&](db::Transaction& tx) {
      for (long i = done; i < std::min(events, done + kPerTransaction); ++i) {
        // One a millisecond, with the Idempotency-Key ingest stores (a UUID, as clients send).
        publisher::Event event;
        event.event_id = ids.next();
        event.merchant_id = "merchant_1";
        event.type = "order.captured";
        event.payload = payload(i);
        event.created_at = now - events + i;
        event.idempotency_key = ids.next();
        store.insert_event(tx, event, now);
        const int attempts = i % 10 < 3 ? 2 : 1;
        for (int a = 1; a <= attempts; ++a) {
          const bool ok = a == attempts;
          tx.exec(kAttempt,
                  {ids.next(), event.event_id, endpoint.id, std::int64_t{a}, std::int64_t{now},
                   std::int64_t{ok ? 200 : 500}, std::int64_t{ok ? 42 : 1200},
                   ok ? R"({"received":true})" : R"({"error":"internal"})"});
        }
        tx.exec(kSettle, {event.event_id, std::int64_t{attempts}, std::int64_t{now}});
      }
    });
  }
}

// Purges every event as retention would, 500 per transaction; prints the batches' median and
// slowest time (how long one batch holds the writers up).
void time_purge(const char* engine, publisher::Store& store, long events) {
  std::vector<double> ms;
  const UnixMillis before = system_clock().now_ms() + 1;
  for (;;) {
    const auto start = std::chrono::steady_clock::now();
    const publisher::PurgeCounts purged = store.purge(before, 500);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
    if (purged.events < 500) break;
  }
  std::sort(ms.begin(), ms.end());
  std::printf("%-10s purge of %ld events in %zu transactions of 500: median %.1f ms, max %.1f ms\n",
              engine, events, ms.size(), ms[ms.size() / 2], ms.back());
}

void report(const char* engine, long events, double bytes, const char* how) {
  const double per_event = bytes / static_cast<double>(events);
  std::printf("%-10s %7ld events  %6.0f bytes/event  => %5.2f GB per 1,000,000 events  [%s]\n",
              engine, events, per_event, per_event * 1e6 / 1e9, how);
}

std::uintmax_t file_bytes(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return ec ? 0 : size;
}

void sqlite(long events) {
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("bench-disk-" + std::to_string(getpid())))
          .string();
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/publisher.db";
  std::shared_ptr<db::Database> database = db::Database::open(path);
  database->migrate({idempotency::schema(), publisher::schema()}, system_clock().now_ms());
  database->exec("PRAGMA wal_checkpoint(TRUNCATE)");
  const std::uintmax_t empty = file_bytes(path) + file_bytes(path + "-wal");
  publisher::Store store(database);
  fill(*database, store, events);
  database->exec("PRAGMA wal_checkpoint(TRUNCATE)");
  const std::uintmax_t full = file_bytes(path) + file_bytes(path + "-wal");
  report("SQLite", events, static_cast<double>(full - empty),
         "file and WAL after a checkpoint, minus the empty schema's");
  time_purge("SQLite", store, events);
  database.reset();
  std::filesystem::remove_all(dir);
}

constexpr const char* kTables =
    "SELECT pg_total_relation_size('publisher_events') + pg_total_relation_size('publisher_tasks') "
    "+ pg_total_relation_size('publisher_attempts')";

void postgres(const std::string& url, long events) {
  {
    std::shared_ptr<db::Database> server = db::Database::open(url);
    server->exec("DROP DATABASE IF EXISTS bench_disk");
    server->exec("CREATE DATABASE bench_disk");
  }
  const std::string target = url.substr(0, url.rfind('/') + 1) + "bench_disk";
  std::shared_ptr<db::Database> database = db::Database::open(target);
  database->migrate({idempotency::schema(), publisher::schema()}, system_clock().now_ms());
  const std::int64_t empty = database->exec(kTables).integer(0, 0);
  publisher::Store store(database);
  fill(*database, store, events);
  const std::int64_t filled = database->exec(kTables).integer(0, 0);
  database->exec("VACUUM FULL publisher_tasks");
  const std::int64_t live = database->exec(kTables).integer(0, 0);
  report("PostgreSQL", events, static_cast<double>(filled - empty),
         "pg_total_relation_size of events, tasks, attempts incl. indexes and TOAST, as filled "
         "(a settled task leaves a dead row version until vacuumed)");
  report("PostgreSQL", events, static_cast<double>(live - empty), "the same after VACUUM FULL");
  time_purge("PostgreSQL", store, events);
}

}  // namespace

int main(int argc, char** argv) {
  const long events = argc > 1 ? std::atol(argv[1]) : 100'000;
  if (events <= 0) {
    std::fprintf(stderr, "usage: bench_publisher_disk [EVENTS > 0]\n");
    return 2;
  }
  std::printf("publisher disk per event: %zu-byte payload, 1 task, 1.3 attempts\n",
              payload(0).size());
  sqlite(events);
  if (const char* url = std::getenv("WEBHOOKS_BENCH_POSTGRES_URL")) postgres(url, events);
  return 0;
}
