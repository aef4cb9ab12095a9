// The publisher on SQLite, measured against the issue's targets (issue 4, item 10), every figure
// beside a baseline measured in the same run, talking only to 127.0.0.1:
//   1. ingest: POST /v1/events with Idempotency-Key through a publisher::Publisher on a
//      webhooks::http::Server tuned as the daemon's (64 keep-alive connections), beside a bare
//      server with the same tuning answering 202 to the same requests, in 3 alternating rounds
//      (medians, median ratio);
//   2. delivery: the Publisher's workers (Dispatcher over HttpTransport, libcurl multi), with the
//      daemon's default workers, batch, in-flight and per-endpoint settings (Options), draining the
//      tasks ingest made, to an endpoint on loopback that answers 200 at once, beside that
//      endpoint's own ceiling (a plain load loop of 64 keep-alive cpp-httplib clients sending the
//      same signed requests);
//   3. latency from ingest to the first delivery attempt at a steady 1,000 events/s, beside the
//      ingest request's own round trip;
//   4. resident memory of the real webhooks-publisherd process while it polls a database holding
//      1,000,000 pending tasks (of a disabled endpoint), beside the same daemon on an empty one;
//   5. its resident memory while it ingests and delivers at once, round after round, with glibc's
//      default malloc arenas beside the daemons' cap (app::tune_malloc);
//      `bench_publisher --memory-under-load` runs this phase alone.
// `bench_publisher --ingest` runs phase 1 alone (with its baseline) and prints its lines.
// Phases 1 to 3 run the library in this process: a publisher::Publisher built from default
#include "publisher_bench.h"

#include <httplib.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.h"
#include "webhooks/log.h"

namespace {

using namespace publisher_bench;

// --- phase 3: steady ingest, latency to the first attempt ---
struct Steady3 {
  std::vector<double> to_attempt_ms, ingest_ms;
  long sent = 0, accepted = 0, missing = 0;
  double achieved_rate = 0;
};

// Waits (at most 3 s) until `endpoint` has seen every event of `event_of` ("" : not accepted).
void wait_for_deliveries(Hook& endpoint, const std::vector<std::string>& event_of) {
  const auto wait_until = Steady::now() + std::chrono::seconds(3);
  for (;;) {
    long seen = 0;
    {
      std::lock_guard lock(endpoint.mutex);
      for (const std::string& id : event_of) seen += !id.empty() && endpoint.first_seen.count(id);
    }
    long accepted = 0;
    for (const std::string& id : event_of) accepted += !id.empty();
    if (seen == accepted || Steady::now() > wait_until) return;
    std::this_thread::sleep_for(milliseconds(20));
  }
}

Steady3 steady_ingest(Served& pub, Hook& endpoint) {
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
  wait_for_deliveries(endpoint, event_of);
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

// The bare ingest server (phase 1's baseline): answers 202 at once, on its own thread.
struct BareServer {
  httplib::Server server;
  int port = 0;
  std::thread thread;
  BareServer() {
    server.Post("/v1/events", [](const httplib::Request&, httplib::Response& res) {
      res.status = 202;
      res.set_content(R"({"event_id":"0190e1c2-7a3b-7c00-8000-000000000000","tasks":1})",
                      "application/json");
    });
    port = http::bind_server(server, "127.0.0.1", 0, http::ServerTuning{});
    thread = std::thread([this] { server.listen_after_bind(); });
  }
  void stop() {
    if (!thread.joinable()) return;
    server.stop();
    thread.join();
  }
  ~BareServer() { stop(); }
};

// What phases 1 to 3 measured.
struct Phases {
  std::vector<Load> bare_rounds, ingest_rounds;
  Load delivered;
  Steady3 steady;
  std::int64_t warm_tasks = 0, events = 0, tasks_pending = 0, attempts_ok = 0, tasks_succeeded = 0;
};

void print_setup() {
  std::printf(
      "publisher on SQLite (WAL, synchronous=NORMAL as the daemon's default), %d cores, "
      "load average %s\n",
      static_cast<int>(std::thread::hardware_concurrency()), load_average().c_str());
  const publisher::Options d;  // the defaults the bench's Publisher is built with
  std::printf(
      "  publisher::Publisher in process from default Options, as webhooks-publisherd builds "
      "it: %d workers, batch %d, %d in flight per worker, %d connections per endpoint per "
      "worker, poll %lld ms; HTTP server on fiber workers (%zu threads, the daemon's default), "
      "tcp_nodelay, keep-alive 100000, backlog 4096\n",
      d.workers, d.batch_size, d.max_in_flight, endpoint_connections_per_worker(d),
      static_cast<long long>(d.poll_interval.count()), d.server.fiber_threads);
}

// 1. Ingest (the workers are not started yet, so the tasks wait for phase 2): kIngestRounds
// rounds of (bare server, publisher) on the same fresh keys, n in all.
void run_ingest(Served& pub, BareServer& bare, int n, Phases& out) {
  run_load(pub.port, ingest_requests("warm-", 1000), 202);
  progress("ingest");
  out.warm_tasks = pub.count("SELECT COUNT(*) FROM publisher_tasks");
  for (int r = 0; r < kIngestRounds; ++r) {
    const auto requests = ingest_requests("bench-" + std::to_string(r) + "-", n / kIngestRounds);
    out.bare_rounds.push_back(run_load(bare.port, requests, 202));
    out.ingest_rounds.push_back(run_load(pub.port, requests, 202));
  }
  bare.stop();
  out.events = pub.count("SELECT COUNT(*) FROM publisher_events") - out.warm_tasks;
  out.tasks_pending = pub.count("SELECT COUNT(*) FROM publisher_tasks WHERE state = 'pending'");
}

// 2. Delivery: start the Publisher and time the drain of every pending task.
void run_delivery(Served& pub, Hook& endpoint, Phases& out) {
  progress("delivery");
  const long before = endpoint.received.load();
  const auto t0 = Steady::now();
  pub.publisher.start();
  const auto deadline = t0 + std::chrono::seconds(20);
  while (endpoint.received.load() - before < out.tasks_pending && Steady::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(2));
  }
  const double seconds = since_ms(t0, Steady::now()) / 1000;
  // The endpoint counts a delivery before its attempt is recorded: wait (at most 10 s) for the
  // records; the workers keep running into phase 3.
  const char* succeeded = "SELECT COUNT(*) FROM publisher_tasks WHERE state = 'succeeded'";
  const auto records_by = Steady::now() + std::chrono::seconds(10);
  while (pub.count(succeeded) < out.tasks_pending && Steady::now() < records_by) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  out.delivered.done = endpoint.received.load() - before;
  out.delivered.per_second = static_cast<double>(out.delivered.done) / seconds;
  out.attempts_ok = pub.count("SELECT COUNT(*) FROM publisher_attempts WHERE status = 200");
  out.tasks_succeeded = pub.count(succeeded);
  out.delivered.failed = out.tasks_pending - out.tasks_succeeded;
}

void print_delivery(const Phases& p, const Load& ceiling) {
  std::printf(
      "\n2. delivery: dispatcher drains the %lld tasks to an endpoint answering 200 at once\n",
      static_cast<long long>(p.tasks_pending));
  print_load("endpoint ceiling: plain load loop (baseline)", ceiling, 0);
  std::printf(
      "  %-44s %8.0f deliveries/s  (%ld received, %ld tasks not succeeded)  %.2fx baseline\n",
      "publisher dispatcher (HttpTransport, SQLite)", p.delivered.per_second, p.delivered.done,
      p.delivered.failed, p.delivered.per_second / ceiling.per_second);
  std::printf("  recorded: %lld attempts with status 200, %lld tasks succeeded\n",
              static_cast<long long>(p.attempts_ok), static_cast<long long>(p.tasks_succeeded));
  std::printf(
      "  target: >= 10000 deliveries/s with every attempt recorded  -> %s\n",
      p.delivered.per_second >= 10000 && p.attempts_ok >= p.tasks_pending ? "met" : "MISSED");
}

void print_latency(const Steady3& steady) {
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
}

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);
  const std::string dir = "/tmp/webhooks-publisher-bench-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  if (argc >= 2 && std::strcmp(argv[1], "--memory-under-load") == 0) {  // phase 5 alone
    if (argc == 4) {
      load_rounds = std::max(1, std::atoi(argv[2]));
      per_round = std::max(1, std::atoi(argv[3]));
    }
    Hook endpoint(320);
    run_memory_under_load(dir, endpoint);
    std::filesystem::remove_all(dir);
    return 0;
  }
  const bool ingest_only = argc >= 2 && std::strcmp(argv[1], "--ingest") == 0;
  const auto bench_start = Steady::now();
  print_setup();
  const int n = kConnections * kPerConnection;
  // The endpoint needs a thread per connection: 4 workers x 8 per endpoint, the load loop's 64.
  Hook endpoint(320);
  const std::string hook = "http://127.0.0.1:" + std::to_string(endpoint.port) + "/hook";
  // Baselines first: the endpoint's ceiling and a bare ingest server, which runs through phase
  // 1, whose rounds alternate it with the publisher.
  Load ceiling;
  if (!ingest_only) {
    const std::vector<HttpRequest> deliveries = delivery_requests(n);
    run_load(endpoint.port, std::vector<HttpRequest>(deliveries.begin(), deliveries.begin() + 2000),
             200);  // warm-up
    ceiling = run_load(endpoint.port, deliveries, 200);
  }
  BareServer bare;
  run_load(bare.port, ingest_requests("warm-", 1000), 202);  // warm-up
  Phases phases;
  {
    Served pub(dir + "/publisher.db");
    pub.add_endpoint(hook);
    run_ingest(pub, bare, n, phases);
    if (!ingest_only) {
      run_delivery(pub, endpoint, phases);
      progress("latency");  // 3. steady 1,000 events/s with the workers running
      phases.steady = steady_ingest(pub, endpoint);
    }
  }
  print_ingest(phases.bare_rounds, phases.ingest_rounds, phases.events, phases.tasks_pending,
               phases.warm_tasks);
  if (ingest_only) {
    std::filesystem::remove_all(dir);
    return 0;
  }
  print_delivery(phases, ceiling);
  print_latency(phases.steady);
  run_memory(dir);
  run_memory_under_load(dir, endpoint);
  std::printf("\n  whole run %.1f s, load average %s\n",
              since_ms(bench_start, Steady::now()) / 1000, load_average().c_str());
  std::filesystem::remove_all(dir);
  return 0;
}
