// bench_publisher's shared helpers (publisher_bench.h): timing, progress, the load loop and the
// requests of ingest and delivery.
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "delivery/dispatcher.h"
#include "publisher_bench.h"
#include "sample_order.h"

namespace publisher_bench {

double since_ms(Steady::time_point t0, Steady::time_point t1) {
  return std::chrono::duration<double, std::milli>(t1 - t0).count();
}

std::string load_average() {
  double load[3] = {0, 0, 0};
  if (getloadavg(load, 3) != 3) return "?";
  char text[64];
  std::snprintf(text, sizeof text, "%.2f %.2f %.2f", load[0], load[1], load[2]);
  return text;
}

// Progress on stderr (a profiler can wait for a phase): "[publisher_bench] <phase>".
void progress(const char* phase) {
  std::fprintf(stderr, "[publisher_bench] %s\n", phase);
  std::fflush(stderr);
}

std::string ingest_body(int i) {
  return nlohmann::json{
      {"merchant_id", kMerchant}, {"type", "order.captured"}, {"data", bench::sample_order(i)}}
      .dump();
}

Load run_load(int port, const std::vector<HttpRequest>& requests, int expect_status) {
  return bench::http_load(port, requests, kConnections, kPhaseBudget, expect_status);
}

void print_load(const char* name, const Load& f, double baseline, const char* unit) {
  std::printf("  %-44s %8.0f %s  p50 %6.2f ms  p99 %6.2f ms  (%ld requests, %ld failed)", name,
              f.per_second, unit, f.p50_ms, f.p99_ms, f.done, f.failed);
  if (baseline > 0) std::printf("  %.2fx baseline", f.per_second / baseline);
  std::printf("\n");
}

publisher::Options bench_options(const std::string& path) {
  publisher::Options o;  // every default, but:
  o.database = path;
  o.admin_token = kToken;
  o.allow_private_networks = true;  // the endpoint is on loopback
  return o;
}

std::vector<HttpRequest> ingest_requests(const std::string& prefix, int count) {
  std::vector<HttpRequest> out;
  out.reserve(count);
  for (int i = 0; i < count; ++i) {
    out.push_back({"/v1/events",
                   ingest_body(i),
                   {{"Authorization", std::string("Bearer ") + kToken},
                    {"Idempotency-Key", prefix + std::to_string(i)}}});
  }
  return out;
}

// Requests exactly as the dispatcher puts them on the wire (build_delivery), for the ceiling.
std::vector<HttpRequest> delivery_requests(int count) {
  ClaimedTask task;
  task.secrets = {Secret::generate().to_string()};
  UuidV7Generator ids(system_clock());
  std::vector<HttpRequest> out;
  out.reserve(count);
  for (int i = 0; i < count; ++i) {
    task.event = Event{};
    task.event.event_id = ids.next();
    task.event.merchant_id = kMerchant;
    task.event.type = "order.captured";
    task.event.payload = nlohmann::json::parse(ingest_body(i))["data"].dump();
    task.event.created_at = system_clock().now_ms();
    const DeliveryRequest d = build_delivery(task, system_clock().now_seconds(), ids.next());
    HttpRequest r{"/hook", d.body, {}};
    for (const auto& [name, value] : d.headers) {
      if (name != "content-type") r.headers.emplace(name, value);
    }
    out.push_back(std::move(r));
  }
  return out;
}

void drop_console_indexes(db::Database& db) {
  db.transact([](db::Transaction& tx) {
    for (const char* statement :
         {"DROP INDEX publisher_events_idempotency_key", "DROP INDEX publisher_events_type",
          "DROP INDEX publisher_events_merchant", "DROP INDEX publisher_events_created",
          "CREATE INDEX publisher_events_merchant ON publisher_events (merchant_id, created_at)",
          "CREATE INDEX publisher_events_created ON publisher_events (created_at)",
          "DROP INDEX publisher_tasks_pending_events",
          "DROP INDEX publisher_tasks_delivering_events",
          "DROP INDEX publisher_tasks_succeeded_events", "DROP INDEX publisher_tasks_dead_events",
          "DROP INDEX publisher_tasks_event",
          "CREATE INDEX publisher_tasks_event ON publisher_tasks (event_id)",
          "DROP INDEX publisher_attempts_endpoint", "DROP INDEX publisher_attempts_started",
          "DROP INDEX publisher_tasks_due",
          "CREATE INDEX publisher_tasks_due ON publisher_tasks (next_attempt_at) "
          "WHERE state = 'pending' AND parked = 0"}) {
      tx.exec(statement);
    }
  });
}

}  // namespace publisher_bench
