// Shared parts of bench_publisher (publisher_bench.cc): the constants of its phases, the endpoint
// it delivers to (Hook), the publisher served in process (Served), the request builders and the
// load loop; the daemon's memory phases (4 and 5) are in publisher_bench_memory.cc.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "bench_endpoint.h"
#include "http_load.h"
#include "webhooks/clock.h"
#include "webhooks/http_server.h"
#include "webhooks/publisher/options.h"
#include "webhooks/publisher/publisher.h"
#include "webhooks/publisher/store.h"
#include "webhooks/secret.h"
#include "webhooks/uuid.h"

namespace publisher_bench {

using namespace webhooks;
using namespace webhooks::publisher;
using Steady = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr int kConnections = 64;     // ingest and ceiling load loops
constexpr int kPerConnection = 500;  // requests per connection per phase
constexpr int kIngestRounds = 3;     // phase 1: rounds of (bare, ingest), each a third of the keys
constexpr auto kPhaseBudget = std::chrono::seconds(6);  // and at most this long per phase
constexpr int kSteadyRate = 1000;                       // events/s in the latency phase
constexpr auto kSteadyFor = std::chrono::seconds(5);
constexpr int kPendingTasks = 1'000'000;
constexpr const char* kToken = "bench-admin-token";
constexpr const char* kMerchant = "m_bench";

double since_ms(Steady::time_point t0, Steady::time_point t1);
std::string load_average();
// Progress on stderr (a profiler can wait for a phase): "[publisher_bench] <phase>".
void progress(const char* phase);
std::string ingest_body(int i);

// --- the endpoint: answers 200 at once; counts deliveries, and when asked records the first
// arrival of each webhook-id ---
struct Hook {
  httplib::Server server;
  int port = 0;
  std::thread thread;
  std::atomic<long> received{0};
  std::atomic<bool> record{false};
  std::mutex mutex;
  std::unordered_map<std::string, Steady::time_point> first_seen;

  explicit Hook(std::size_t threads) {
    server.Post("/hook", [this](const httplib::Request& req, httplib::Response& res) {
      const auto now = Steady::now();
      received.fetch_add(1, std::memory_order_relaxed);
      if (record.load(std::memory_order_relaxed)) {
        std::lock_guard lock(mutex);
        first_seen.emplace(req.get_header_value("webhook-id"), now);
      }
      res.set_content("", "text/plain");
    });
    http::ServerTuning tuning;
    tuning.threads = threads;
    port = http::bind_server(server, "127.0.0.1", 0, tuning);
    thread = std::thread([this] { server.listen_after_bind(); });
  }
  ~Hook() {
    server.stop();
    thread.join();
  }
};

// --- the closed load loop of bench/http_load.h, with this bench's connections and budget ---
using Load = bench::HttpLoad;
using bench::HttpRequest;

Load run_load(int port, const std::vector<HttpRequest>& requests, int expect_status);
void print_load(const char* name, const Load& f, double baseline, const char* unit = "req/s");

// --- the publisher in process, built as webhooks-publisherd builds it: publisher::Publisher
// from default Options, mounted on a server bound with Options::server ---
publisher::Options bench_options(const std::string& path);
// The baseline for the console's indexes (schema/publisher/*/0003_console.sql): drops them and
// puts back the indexes they replaced, so a run with WEBHOOKS_BENCH_WITHOUT_CONSOLE_INDEXES=1
// measures ingest and delivery as before the console. For the bench only.
void drop_console_indexes(db::Database& db);

struct Served {
  publisher::Publisher publisher;
  http::Server server;
  int port = 0;
  std::thread thread;

  explicit Served(const std::string& path) : publisher(bench_options(path)) {
    if (std::getenv("WEBHOOKS_BENCH_WITHOUT_CONSOLE_INDEXES") != nullptr) {
      drop_console_indexes(publisher.database());
    }
    publisher.mount(server);
    port = http::bind_server(server, "127.0.0.1", 0, publisher.options().server);
    thread = std::thread([this] { server.listen_after_bind(); });
  }
  ~Served() {
    http::stop_server(server, port);  // the server first, then the Publisher (publisher.h)
    thread.join();
    publisher.stop();
  }

  void add_endpoint(const std::string& url) {
    publisher.store().create_endpoint(bench::new_endpoint(kMerchant, url));
  }
  std::int64_t count(const char* sql) { return publisher.database().exec(sql).integer(0, 0); }
};

std::vector<HttpRequest> ingest_requests(const std::string& prefix, int count);
// Requests exactly as the dispatcher puts them on the wire (build_delivery), for the ceiling.
std::vector<HttpRequest> delivery_requests(int count);

// Phase 4 (publisher_bench_memory.cc): the daemon's memory on an empty database and on one with
// kPendingTasks parked tasks.
void run_memory(const std::string& dir);
// Phase 5: the daemon's memory with ingest and delivery running together, load_rounds rounds of
// per_round requests (`bench_publisher --memory-under-load [ROUNDS PER_ROUND]` sets them).
extern int load_rounds;
extern int per_round;
void run_memory_under_load(const std::string& dir, Hook& endpoint);

}  // namespace publisher_bench
