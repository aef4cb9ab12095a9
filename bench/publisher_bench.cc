// The publisher on SQLite, measured against the issue's targets (issue 4, item 10), every figure
// beside a baseline measured in the same run, talking only to 127.0.0.1:
//   1. ingest: POST /v1/events with Idempotency-Key through the real AdminApi/Ingest/Guard on a
//      cpp-httplib server tuned as the daemon's (64 keep-alive connections), beside a bare server
//      with the same tuning answering 202 to the same requests, in 3 alternating rounds (medians,
//      median ratio);
//   2. delivery: the real Dispatcher over HttpTransport (libcurl multi), with the daemon's default
//      workers, batch and in-flight settings, draining the tasks ingest made, to an endpoint on
//      loopback that answers 200 at once, beside that endpoint's own ceiling (a plain load loop of
//      64 keep-alive cpp-httplib clients sending the same signed requests);
//   3. latency from ingest to the first delivery attempt at a steady 1,000 events/s, beside the
//      ingest request's own round trip;
//   4. resident memory of the real webhooks-publisherd process while it polls a database holding
//      1,000,000 pending tasks (of a disabled endpoint), beside the same daemon on an empty one;
//   5. its resident memory while it ingests and delivers at once, round after round, with glibc's
//      default malloc arenas beside the daemons' cap (app::limit_malloc_arenas);
//      `bench_publisher --memory-under-load` runs this phase alone.
// `bench_publisher --ingest` runs phase 1 alone (with its baseline) and prints its lines.
// Phases 1 to 3 run the library in this process, wired as publisher/daemon/main.cc wires it.
#include <fcntl.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "bench_util.h"
#include "http_load.h"
#include "sample_order.h"
#include "webhooks/clock.h"
#include "webhooks/db.h"
#include "webhooks/http_server.h"
#include "webhooks/idempotency/guard.h"
#include "webhooks/idempotency/lease_keeper.h"
#include "webhooks/idempotency/schema.h"
#include "webhooks/idempotency/store.h"
#include "webhooks/log.h"
#include "webhooks/publisher/admin_api.h"
#include "webhooks/publisher/dispatcher.h"
#include "webhooks/publisher/http_transport.h"
#include "webhooks/publisher/ingest.h"
#include "webhooks/publisher/schema.h"
#include "webhooks/random.h"
#include "webhooks/secret.h"
#include "webhooks/uuid.h"

namespace {

using namespace webhooks;
using namespace webhooks::publisher;
using Steady = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr int kConnections = 64;                        // ingest and ceiling load loops
constexpr int kPerConnection = 500;                     // requests per connection per phase
constexpr int kIngestRounds = 3;  // phase 1: rounds of (bare, ingest), each a third of the keys
constexpr auto kPhaseBudget = std::chrono::seconds(6);  // and at most this long per phase
constexpr int kSteadyRate = 1000;                       // events/s in the latency phase
constexpr auto kSteadyFor = std::chrono::seconds(5);
constexpr int kPendingTasks = 1'000'000;
constexpr const char* kToken = "bench-admin-token";
constexpr const char* kMerchant = "m_bench";

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

Load run_load(int port, const std::vector<HttpRequest>& requests, int expect_status) {
  return bench::http_load(port, requests, kConnections, kPhaseBudget, expect_status);
}

void print_load(const char* name, const Load& f, double baseline, const char* unit = "req/s") {
  std::printf("  %-44s %8.0f %s  p50 %6.2f ms  p99 %6.2f ms  (%ld requests, %ld failed)", name,
              f.per_second, unit, f.p50_ms, f.p99_ms, f.done, f.failed);
  if (baseline > 0) std::printf("  %.2fx baseline", f.per_second / baseline);
  std::printf("\n");
}

// --- the publisher in process, wired as webhooks-publisherd wires it ---
struct Publisher {
  std::shared_ptr<db::Database> db;
  idempotency::Store records;
  idempotency::LeaseKeeper keeper;
  idempotency::Guard guard;
  Store store;
  Metrics metrics;
  RetryPolicy policy;  // the default schedule
  SecureRandom random;
  HttpTransport transport;
  DispatcherOptions dispatch;  // the daemon's defaults: 4 workers, batch 64, lease 2 min
  Dispatcher dispatcher;
  Ingest ingest;
  AdminApi api;
  http::Server server;
  int port = 0;
  std::thread thread;

  static HttpDeliveryOptions http_options() {
    HttpDeliveryOptions o;  // 64 in flight per worker, 5 s / 15 s timeouts
    o.allow_private_networks = true;
    return o;
  }
  static AdminOptions admin_options() {
    AdminOptions o;
    o.admin_token = kToken;
    o.ssrf.allow_private_networks = true;
    return o;
  }
  static std::shared_ptr<db::Database> open(const std::string& path) {
    db::Options o;  // synchronous=NORMAL and checkpoints in the background, as the daemon's
    o.pool_size = 8;
    o.sqlite_background_checkpoint = true;
    std::shared_ptr<db::Database> db = db::Database::open(path, o);
    db->migrate({idempotency::schema(), publisher::schema()}, system_clock().now_ms());
    return db;
  }

  explicit Publisher(const std::string& path)
      : db(open(path)),
        records(db, {std::chrono::seconds(30), std::chrono::hours(24)}),
        keeper(records, system_clock()),
        guard(records, keeper, system_clock()),
        store(db),
        transport(http_options()),
        dispatcher(store, transport, policy, system_clock(), random, metrics, dispatch),
        ingest(store, system_clock(), metrics, [this] { dispatcher.wake(); }),
        api(store, ingest, guard, metrics, system_clock(), admin_options(),
            [this] { dispatcher.wake(); }) {
    api.mount(server);
    http::ServerTuning tuning;  // the daemon's default: fiber workers, one thread per core
    tuning.fiber_threads = std::max(1u, std::thread::hardware_concurrency());
    port = http::bind_server(server, "127.0.0.1", 0, tuning);
    thread = std::thread([this] { server.listen_after_bind(); });
  }
  ~Publisher() {
    dispatcher.stop();
    server.stop();
    thread.join();
  }

  void add_endpoint(const std::string& url) {
    publisher::Endpoint e;
    e.id = UuidV7Generator(system_clock()).next();
    e.merchant_id = kMerchant;
    e.url = url;
    e.created_at = e.updated_at = system_clock().now_ms();
    e.secrets.push_back({Secret::generate().to_string(), e.created_at, std::nullopt});
    store.create_endpoint(e);
  }
  std::int64_t count(const char* sql) { return db->exec(sql).integer(0, 0); }
};

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
    task.event =
        Event{ids.next(), kMerchant, "order.captured",
              nlohmann::json::parse(ingest_body(i))["data"].dump(), system_clock().now_ms()};
    const OutgoingDelivery d = build_delivery(task, system_clock().now_seconds(), ids.next());
    HttpRequest r{"/hook", d.body, {}};
    for (const auto& [name, value] : d.headers) {
      if (name != "content-type") r.headers.emplace(name, value);
    }
    out.push_back(std::move(r));
  }
  return out;
}

// --- phase 3: steady ingest, latency to the first attempt ---
struct Steady3 {
  std::vector<double> to_attempt_ms, ingest_ms;
  long sent = 0, accepted = 0, missing = 0;
  double achieved_rate = 0;
};

Steady3 steady_ingest(Publisher& pub, Hook& endpoint) {
  constexpr int kSenders = 8;  // each sends every kSenders ms, staggered: 1,000/s in all
  const int total = kSteadyRate * static_cast<int>(kSteadyFor.count());
  std::vector<Steady::time_point> sent_at(total);
  std::vector<std::string> event_of(total);
  std::vector<double> round_trip(total, -1);
  endpoint.record = true;
  const auto start = Steady::now() + milliseconds(50);
  std::vector<std::thread> threads;
  for (int s = 0; s < kSenders; ++s) {
    threads.emplace_back([&, s] {
      httplib::Client client("127.0.0.1", pub.port);
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);
      const httplib::Headers auth{{"Authorization", std::string("Bearer ") + kToken}};
      for (int i = s; i < total; i += kSenders) {
        std::this_thread::sleep_until(start +
                                      std::chrono::microseconds(1'000'000LL * i / kSteadyRate));
        httplib::Headers headers = auth;
        headers.emplace("Idempotency-Key", "steady-" + std::to_string(i));
        const std::string body = ingest_body(i);
        sent_at[i] = Steady::now();
        auto res = client.Post("/v1/events", headers, body, "application/json");
        round_trip[i] = since_ms(sent_at[i], Steady::now());
        if (res && res->status == 202) {
          event_of[i] = nlohmann::json::parse(res->body).value("event_id", "");
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  Steady3 out;
  out.sent = total;
  out.achieved_rate = total / (since_ms(start, Steady::now()) / 1000);
  // Wait (bounded) for the last deliveries.
  const auto wait_until = Steady::now() + std::chrono::seconds(3);
  for (;;) {
    long seen = 0;
    {
      std::lock_guard lock(endpoint.mutex);
      for (const std::string& id : event_of) seen += !id.empty() && endpoint.first_seen.count(id);
    }
    long accepted = 0;
    for (const std::string& id : event_of) accepted += !id.empty();
    if (seen == accepted || Steady::now() > wait_until) break;
    std::this_thread::sleep_for(milliseconds(20));
  }
  endpoint.record = false;
  std::lock_guard lock(endpoint.mutex);
  for (int i = 0; i < total; ++i) {
    out.ingest_ms.push_back(round_trip[i]);
    if (event_of[i].empty()) continue;
    ++out.accepted;
    const auto it = endpoint.first_seen.find(event_of[i]);
    if (it == endpoint.first_seen.end()) {
      ++out.missing;
      continue;
    }
    out.to_attempt_ms.push_back(since_ms(sent_at[i], it->second));
  }
  return out;
}

// --- phase 4: the daemon's memory ---
std::string daemon_path() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const auto path = self.parent_path().parent_path() / "webhooks-publisherd";  // bin/bench/..
  return std::filesystem::exists(path) ? path.string() : std::string();
}

struct Memory {
  long rss_kb = 0, hwm_kb = 0;  // max VmRSS sampled, VmHWM at the end
  double cpu_percent = 0;       // CPU the daemon used while polling
  bool ok = false;
};

long status_kb(pid_t pid, const char* field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field, 0) == 0) return std::atol(line.c_str() + std::strlen(field));
  }
  return 0;
}

double cpu_seconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(text.substr(text.rfind(')') + 2));
  std::string f;
  long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> f; ++i) {
    if (i == 14) utime = std::atol(f.c_str());
    if (i == 15) stime = std::atol(f.c_str());
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// Starts the daemon on `db`, waits for its `listening on` line, samples its memory for `watch`
// while it polls, then stops it with SIGTERM.
Memory daemon_memory(const std::string& daemon, const std::string& db, milliseconds watch) {
  int out[2];
  if (pipe(out) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, STDERR_FILENO);
    close(out[0]);
    close(out[1]);
    execl(daemon.c_str(), daemon.c_str(), "--db", db.c_str(), "--listen", "127.0.0.1:0",
          "--admin-token", kToken, "--log-level", "warn", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  Memory m;
  std::string line;
  char c;
  while (read(out[0], &c, 1) == 1 && c != '\n') line += c;
  if (line.rfind("listening on ", 0) == 0) {
    const double cpu0 = cpu_seconds(pid);
    const auto t0 = Steady::now();
    while (Steady::now() - t0 < watch) {
      m.rss_kb = std::max(m.rss_kb, status_kb(pid, "VmRSS:"));
      std::this_thread::sleep_for(milliseconds(50));
    }
    m.hwm_kb = status_kb(pid, "VmHWM:");
    m.cpu_percent = 100 * (cpu_seconds(pid) - cpu0) / (since_ms(t0, Steady::now()) / 1000);
    m.ok = m.rss_kb > 0;
  }
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  close(out[0]);
  return m;
}

// A database holding `count` events with one pending task each, due now, for an endpoint that is
// disabled (so the daemon polls but claims nothing). Bulk SQL in transactions of 100,000 rows, then
// the endpoint is disabled as an operator would (which parks the tasks in one transaction).
double fill_pending(const std::string& path, int count) {
  const auto t0 = Steady::now();
  std::shared_ptr<db::Database> db = Publisher::open(path);
  const UnixMillis now = system_clock().now_ms();
  Store store(db);
  publisher::Endpoint e;
  e.id = "ep_memory";
  e.merchant_id = "m_memory";
  e.url = "http://127.0.0.1:9/hook";
  e.created_at = e.updated_at = now;
  e.secrets.push_back({Secret::generate().to_string(), now, std::nullopt});
  store.create_endpoint(e);
  constexpr int kChunk = 100'000;
  for (int from = 0; from < count; from += kChunk) {
    const std::int64_t to = std::min(count, from + kChunk);
    db->transact([&](db::Transaction& tx) {
      tx.exec(
          "WITH RECURSIVE n(i) AS (SELECT $1 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < $2) "
          "INSERT INTO publisher_events (event_id, merchant_id, event_type, payload, created_at) "
          "SELECT printf('0190e1c2-7a3b-7c00-8000-%012d', i), 'm_memory', 'order.captured', "
          "'{\"order_id\":\"ord_' || i || '\",\"amount\":1000,\"currency\":\"EUR\"}', $3 FROM n",
          {std::int64_t{from}, to, std::int64_t{now}});
      tx.exec(
          "WITH RECURSIVE n(i) AS (SELECT $1 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < $2) "
          "INSERT INTO publisher_tasks (event_id, endpoint_id, state, attempts, next_attempt_at, "
          "next_trigger, age_from, created_at, updated_at) "
          "SELECT printf('0190e1c2-7a3b-7c00-8000-%012d', i), 'ep_memory', 'pending', 0, $3, "
          "'scheduled', $3, $3, $3 FROM n",
          {std::int64_t{from}, to, std::int64_t{now}});
    });
  }
  store.set_enabled(e.id, false, "benchmark: tasks stay pending", now);
  return since_ms(t0, Steady::now()) / 1000;
}

// --- phase 5: the daemon's memory with ingest and delivery running together ---
// Rounds and requests per round; `bench_publisher --memory-under-load [ROUNDS PER_ROUND]` sets
// them for a longer run.
int load_rounds = 8;
int per_round = 10'000;

struct UnderLoad {
  std::vector<double> rss_mb;  // VmRSS before the load, then after each round
  double per_second = 0;       // ingest requests answered per second, all rounds
  long sent = 0, failed = 0;
  bool ok = false;
};

// Runs the daemon on a fresh database with MALLOC_ARENA_MAX=`arena_env` in its environment (none
// when empty: the daemon's own cap applies), an endpoint on `hook`, and load_rounds rounds of
// per_round ingest requests from kConnections connections while it delivers them; samples VmRSS
// before and after each round.
UnderLoad memory_under_load(const std::string& daemon, const std::string& db, const std::string& hook,
                            const std::string& arena_env, const std::string& label) {
  std::vector<std::string> env_text;
  for (char** e = environ; *e; ++e) {
    if (std::strncmp(*e, "MALLOC_ARENA_MAX=", 17) != 0) env_text.emplace_back(*e);
  }
  if (!arena_env.empty()) env_text.push_back("MALLOC_ARENA_MAX=" + arena_env);
  std::vector<char*> envp;
  for (std::string& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  int out[2];
  if (pipe(out) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, STDERR_FILENO);
    close(out[0]);
    close(out[1]);
    execle(daemon.c_str(), daemon.c_str(), "--db", db.c_str(), "--listen", "127.0.0.1:0",
           "--admin-token", kToken, "--allow-private-networks", "--log-level", "warn",
           static_cast<char*>(nullptr), envp.data());
    _exit(127);
  }
  close(out[1]);
  UnderLoad u;
  std::string line;
  char c;
  while (read(out[0], &c, 1) == 1 && c != '\n') line += c;
  if (line.rfind("listening on ", 0) == 0) {
    const int port = std::atoi(line.c_str() + line.rfind(':') + 1);
    httplib::Client admin("127.0.0.1", port);
    const auto created =
        admin.Post("/v1/endpoints", {{"Authorization", std::string("Bearer ") + kToken}},
                   nlohmann::json{{"merchant_id", kMerchant}, {"url", hook}}.dump(),
                   "application/json");
    if (created && created->status == 201) {
      u.rss_mb.push_back(status_kb(pid, "VmRSS:") / 1024.0);
      double busy_ms = 0;
      for (int r = 0; r < load_rounds; ++r) {
        const Load load = bench::http_load(
            port, ingest_requests(label + "-" + std::to_string(r) + "-", per_round), kConnections,
            kPhaseBudget, 202);
        u.sent += load.done;
        u.failed += load.failed;
        busy_ms += load.done / load.per_second * 1000;
        u.rss_mb.push_back(status_kb(pid, "VmRSS:") / 1024.0);
      }
      u.per_second = static_cast<double>(u.sent) / (busy_ms / 1000);
      u.ok = u.failed == 0;
    }
  }
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  close(out[0]);
  return u;
}

void print_under_load(const char* name, const UnderLoad& u, long delivered) {
  std::printf("  %-46s VmRSS MB:", name);
  for (const double mb : u.rss_mb) std::printf(" %5.1f", mb);
  std::printf("  (%.0f req/s, %ld sent, %ld failed, %ld delivered)\n", u.per_second, u.sent,
              u.failed, delivered);
}

void run_memory_under_load(const std::string& dir, Hook& endpoint) {
  std::printf(
      "\n5. memory under load: webhooks-publisherd ingesting (%d connections) and delivering at "
      "once; VmRSS before, then after each of %d rounds of %d requests\n",
      kConnections, load_rounds, per_round);
  progress("memory under load");
  const std::string daemon = daemon_path();
  if (daemon.empty()) {
    std::printf("  skipped: build/bin/webhooks-publisherd not found (build the daemon)\n");
    return;
  }
  const std::string hook = "http://127.0.0.1:" + std::to_string(endpoint.port) + "/hook";
  // glibc's default cap: 8 arenas per core.
  const std::string glibc_default =
      std::to_string(8 * std::max(1u, std::thread::hardware_concurrency()));
  // Each run: its label, MALLOC_ARENA_MAX for the daemon ("" = the daemon's own cap). 64 is
  // glibc's default on an 8-core machine.
  const std::vector<std::pair<std::string, std::string>> runs = {
      {"glibc default here, MALLOC_ARENA_MAX=" + glibc_default, glibc_default},
      {"glibc default on 8 cores, MALLOC_ARENA_MAX=64", "64"},
      {"M_ARENA_MAX=2 (the daemons' default)", ""}};
  std::vector<std::pair<UnderLoad, long>> results;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const long before = endpoint.received.load();
    const UnderLoad u = memory_under_load(daemon, dir + "/load-" + std::to_string(i) + ".db",
                                          hook, runs[i].second, "run" + std::to_string(i));
    results.emplace_back(u, endpoint.received.load() - before);
  }
  for (std::size_t i = 0; i < runs.size(); ++i) {
    print_under_load(runs[i].first.c_str(), results[i].first, results[i].second);
  }
}

// Phase 1's lines: the bare server, the ingest, what is durable, the target.
// Phase 1's lines from its rounds (bare server, then ingest, on the same keys).
void print_ingest(const std::vector<Load>& bare_rounds, const std::vector<Load>& ingest_rounds,
                  std::int64_t events, std::int64_t tasks_pending, std::int64_t warm_tasks) {
  const Load bare = bench::median_load(bare_rounds), ingest = bench::median_load(ingest_rounds);
  std::vector<double> ratios;
  std::string each;
  for (std::size_t r = 0; r < ingest_rounds.size() && r < bare_rounds.size(); ++r) {
    ratios.push_back(ingest_rounds[r].per_second / bare_rounds[r].per_second);
    char text[16];
    std::snprintf(text, sizeof text, "%s%.2fx", r ? " " : "", ratios.back());
    each += text;
  }
  const double ratio = ratios.empty() ? 0 : bench::median(ratios);
  std::printf(
      "\n1. ingest: POST /v1/events + Idempotency-Key, %d keep-alive connections; %d rounds of "
      "(bare server, publisher) on %d fresh keys each (at most %lld s a load); medians\n",
      kConnections, kIngestRounds, kConnections * kPerConnection / kIngestRounds,
      static_cast<long long>(kPhaseBudget.count()));
  print_load("bare cpp-httplib server answering 202 (baseline)", bare, 0);
  print_load("publisher ingest (guard + event + 1 task)", ingest, 0);
  std::printf(
      "  durable: %lld events and %lld pending tasks committed for %ld answers 202 (and "
      "%lld warm-up tasks)\n",
      static_cast<long long>(events), static_cast<long long>(tasks_pending - warm_tasks),
      ingest.done - ingest.failed, static_cast<long long>(warm_tasks));
  std::printf("  ingest / bare: %.2fx (median of the %d rounds' ratios: %s)\n", ratio,
              kIngestRounds, each.c_str());
  std::printf("  target: >= 0.5x the bare server, every answer 202 (issue 13)  -> %s\n",
              ratio >= 0.5 && ingest.failed == 0 ? "met" : "MISSED");
  std::printf("  target: >= 10000 ingests/s  -> %s\n",
              ingest.per_second >= 10000 ? "met" : "MISSED");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "--memory-under-load") == 0) {  // phase 5 alone
    if (argc == 4) {
      load_rounds = std::max(1, std::atoi(argv[2]));
      per_round = std::max(1, std::atoi(argv[3]));
    }
    spdlog::set_level(spdlog::level::warn);
    const std::string dir = "/tmp/webhooks-publisher-bench-" + std::to_string(::getpid());
    std::filesystem::create_directories(dir);
    Hook endpoint(320);
    run_memory_under_load(dir, endpoint);
    std::filesystem::remove_all(dir);
    return 0;
  }
  const bool ingest_only = argc >= 2 && std::strcmp(argv[1], "--ingest") == 0;
  spdlog::set_level(spdlog::level::warn);
  const std::string dir = "/tmp/webhooks-publisher-bench-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const auto bench_start = Steady::now();
  std::printf(
      "publisher on SQLite (WAL, synchronous=NORMAL as the daemon's default), %d cores, "
      "load average %s\n",
      static_cast<int>(std::thread::hardware_concurrency()), load_average().c_str());
  {
    const DispatcherOptions d;
    const HttpDeliveryOptions h;
    std::printf(
        "  library in process, wired as webhooks-publisherd: %d workers, batch %d, "
        "%zu in flight per worker, poll %lld ms; HTTP server on fiber workers (%u threads, the "
        "daemon's default), tcp_nodelay, keep-alive 100000, backlog 4096\n",
        d.workers, d.batch_size, h.max_in_flight, static_cast<long long>(d.poll_interval.count()),
        std::max(1u, std::thread::hardware_concurrency()));
  }

  const int n = kConnections * kPerConnection;
  // The endpoint needs a thread per connection: 4 workers x 64 in flight, plus the load loop.
  Hook endpoint(320);
  const std::string hook = "http://127.0.0.1:" + std::to_string(endpoint.port) + "/hook";

  // Baselines first: the endpoint's ceiling and a bare ingest server.
  const std::vector<HttpRequest> deliveries = delivery_requests(n);
  Load ceiling;
  if (!ingest_only) {
    run_load(endpoint.port,
             std::vector<HttpRequest>(deliveries.begin(), deliveries.begin() + 2000),
             200);  // warm-up
    ceiling = run_load(endpoint.port, deliveries, 200);
  }
  // The bare ingest server runs through phase 1, whose rounds alternate it with the publisher.
  httplib::Server bare_server;
  bare_server.Post("/v1/events", [](const httplib::Request&, httplib::Response& res) {
    res.status = 202;
    res.set_content(R"({"event_id":"0190e1c2-7a3b-7c00-8000-000000000000","tasks":1})",
                    "application/json");
  });
  const int bare_port = http::bind_server(bare_server, "127.0.0.1", 0, http::ServerTuning{});
  std::thread bare_thread([&] { bare_server.listen_after_bind(); });
  run_load(bare_port, ingest_requests("warm-", 1000), 202);  // warm-up

  // 1. Ingest (the dispatcher is not running yet, so the tasks wait for phase 2): kIngestRounds
  // rounds of (bare server, publisher) on the same fresh keys, n in all.
  std::vector<Load> bare_rounds, ingest_rounds;
  Load delivered;
  Steady3 steady;
  std::int64_t warm_tasks = 0, events = 0, tasks_pending = 0, attempts_ok = 0, tasks_succeeded = 0;
  long endpoint_received = 0;
  {
    Publisher pub(dir + "/publisher.db");
    pub.add_endpoint(hook);
    run_load(pub.port, ingest_requests("warm-", 1000), 202);
    progress("ingest");
    warm_tasks = pub.count("SELECT COUNT(*) FROM publisher_tasks");
    for (int r = 0; r < kIngestRounds; ++r) {
      const auto requests =
          ingest_requests("bench-" + std::to_string(r) + "-", n / kIngestRounds);
      bare_rounds.push_back(run_load(bare_port, requests, 202));
      ingest_rounds.push_back(run_load(pub.port, requests, 202));
    }
    bare_server.stop();
    bare_thread.join();
    events = pub.count("SELECT COUNT(*) FROM publisher_events") - warm_tasks;
    tasks_pending = pub.count("SELECT COUNT(*) FROM publisher_tasks WHERE state = 'pending'");
    if (ingest_only) {
      print_ingest(bare_rounds, ingest_rounds, events, tasks_pending, warm_tasks);
      std::filesystem::remove_all(dir);
      return 0;
    }

    // 2. Delivery: start the workers and time the drain of every pending task.
    progress("delivery");
    const long before = endpoint.received.load();
    const auto t0 = Steady::now();
    pub.dispatcher.start();
    const auto deadline = t0 + std::chrono::seconds(20);
    while (endpoint.received.load() - before < tasks_pending && Steady::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(2));
    }
    const double seconds = since_ms(t0, Steady::now()) / 1000;
    pub.dispatcher.stop();  // in-flight batches are recorded before it returns
    endpoint_received = endpoint.received.load() - before;
    delivered.done = endpoint_received;
    delivered.per_second = static_cast<double>(endpoint_received) / seconds;
    attempts_ok = pub.count("SELECT COUNT(*) FROM publisher_attempts WHERE status = 200");
    tasks_succeeded = pub.count("SELECT COUNT(*) FROM publisher_tasks WHERE state = 'succeeded'");
    delivered.failed = tasks_pending - tasks_succeeded;

    // 3. Steady 1,000 events/s with the workers running.
    progress("latency");
    pub.dispatcher.start();
    steady = steady_ingest(pub, endpoint);
    pub.dispatcher.stop();
  }

  print_ingest(bare_rounds, ingest_rounds, events, tasks_pending, warm_tasks);

  std::printf(
      "\n2. delivery: dispatcher drains the %lld tasks to an endpoint answering 200 at once\n",
      static_cast<long long>(tasks_pending));
  print_load("endpoint ceiling: plain load loop (baseline)", ceiling, 0);
  std::printf(
      "  %-44s %8.0f deliveries/s  (%ld received, %ld tasks not succeeded)  %.2fx baseline\n",
      "publisher dispatcher (HttpTransport, SQLite)", delivered.per_second, delivered.done,
      delivered.failed, delivered.per_second / ceiling.per_second);
  std::printf("  recorded: %lld attempts with status 200, %lld tasks succeeded\n",
              static_cast<long long>(attempts_ok), static_cast<long long>(tasks_succeeded));
  std::printf("  target: >= 10000 deliveries/s with every attempt recorded  -> %s\n",
              delivered.per_second >= 10000 && attempts_ok >= tasks_pending ? "met" : "MISSED");

  const double p50 = bench::quantile(steady.to_attempt_ms, 0.5);
  const double p99 = bench::quantile(steady.to_attempt_ms, 0.99);
  std::printf(
      "\n3. latency: %d events/s for %lld s (%.0f/s achieved), ingest sent -> first "
      "attempt at the endpoint\n",
      kSteadyRate, static_cast<long long>(kSteadyFor.count()), steady.achieved_rate);
  std::printf("  %-44s p50 %6.2f ms  p99 %6.2f ms\n", "ingest round trip, 202 (baseline)",
              bench::quantile(steady.ingest_ms, 0.5), bench::quantile(steady.ingest_ms, 0.99));
  std::printf(
      "  %-44s p50 %6.2f ms  p99 %6.2f ms  max %6.2f ms  (%ld accepted, %ld not "
      "delivered)\n",
      "ingest -> first delivery attempt", p50, p99, bench::quantile(steady.to_attempt_ms, 1.0),
      steady.accepted, steady.missing);
  std::printf("  target: p99 < 10 ms  -> %s\n", p99 < 10 && steady.missing == 0 ? "met" : "MISSED");

  std::printf(
      "\n4. memory: webhooks-publisherd polling with %d pending tasks (endpoint disabled)\n",
      kPendingTasks);
  progress("memory");
  const std::string daemon = daemon_path();
  if (daemon.empty()) {
    std::printf("  skipped: build/bin/webhooks-publisherd not found (build the daemon)\n");
  } else {
    const std::string empty_db = dir + "/empty.db";
    Publisher::open(empty_db);
    const Memory idle = daemon_memory(daemon, empty_db, milliseconds(2000));
    const std::string full_db = dir + "/pending.db";
    const double fill_s = fill_pending(full_db, kPendingTasks);
    const Memory full = daemon_memory(daemon, full_db, milliseconds(3000));
    std::printf("  %-44s VmRSS %6.1f MB  VmHWM %6.1f MB  CPU %5.1f %%\n",
                "daemon on an empty database (baseline)", idle.rss_kb / 1024.0,
                idle.hwm_kb / 1024.0, idle.cpu_percent);
    std::printf(
        "  %-44s VmRSS %6.1f MB  VmHWM %6.1f MB  CPU %5.1f %%  (filled in %.1f s, "
        "file %.0f MB)\n",
        "daemon with 1,000,000 pending tasks", full.rss_kb / 1024.0, full.hwm_kb / 1024.0,
        full.cpu_percent, fill_s, static_cast<double>(std::filesystem::file_size(full_db)) / 1e6);
    std::printf("  target: < 100 MB resident  -> %s\n",
                full.ok && full.hwm_kb < 100 * 1024 ? "met" : "MISSED");
  }
  run_memory_under_load(dir, endpoint);
  std::printf("\n  whole run %.1f s, load average %s\n",
              since_ms(bench_start, Steady::now()) / 1000, load_average().c_str());
  std::filesystem::remove_all(dir);
  return 0;
}
