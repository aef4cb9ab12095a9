// orders-api `POST /orders`, every request a new Idempotency-Key (the idempotency record, the
// order and its outbox row in one grouped transaction), over 64 keep-alive connections on
// loopback, beside a bare cpp-httplib server with the same settings answering 201 with a body of
// the same size, in the same run. orders-api runs as a child process (build/bin/orders-api) on a
// SQLite file in a temporary directory (synchronous=NORMAL, its default); also on PostgreSQL when
// WEBHOOKS_BENCH_POSTGRES_URL is set (scripts/bench sets it). Rounds alternate the servers so drift
// of a shared machine hits both alike; each phase is bounded in requests and time. Then the bytes
// per idempotency record of 20,000 orders (orders_bench_size.cc); `bench_orders size [N]` runs
// only that part, with N orders.
#include "orders_bench.h"

#include <httplib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>

#include "bench_util.h"
#include "http_load.h"
#include "webhooks/http_server.h"
#include "webhooks/launcher/child_process.h"

namespace orders_bench {

std::unique_ptr<webhooks::launcher::ChildProcess> start_orders_api(const std::string& db,
                                                                   const std::string& dir,
                                                                   const std::string& label) {
  webhooks::launcher::Options options;
  options.label = label;
  auto api = std::make_unique<webhooks::launcher::ChildProcess>(
      "orders-api",
      std::vector<std::string>{"--listen", "127.0.0.1:0", "--db", db, "--api-key", "bench:m1",
                               "--log-level", "warn"},
      dir, options);
  api->wait_listening();
  return api;
}

std::string order_body(int i) {
  return R"({"amount":)" + std::to_string(1000 + i) + R"(,"currency":"EUR","reference":"inv-)" +
         std::to_string(i) + "\"}";
}

std::vector<bench::HttpRequest> orders(const std::string& prefix, int count) {
  std::vector<bench::HttpRequest> out;
  out.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    bench::HttpRequest r;
    r.path = "/orders";
    r.body = order_body(i);
    r.headers = {{"Authorization", "Bearer bench"},
                 {"Idempotency-Key", prefix + std::to_string(i)}};
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace orders_bench

namespace {

using namespace orders_bench;

constexpr int kConnections = 64;
constexpr int kRounds = 3;                              // bare, orders-api, bare, ...
constexpr int kPerConnection = 200;                     // requests per connection per phase
constexpr auto kPhaseBudget = std::chrono::seconds(8);  // and at most this long per phase
constexpr int kWarmUp = 20;                             // requests per connection, not measured
constexpr int kSizeOrders = 20'000;  // orders whose idempotency records are measured

// Medians over the rounds of one server's figures.
struct Summary {
  double per_second = 0, p50_ms = 0, p99_ms = 0, ratio = 0;
  long done = 0, failed = 0;
};

Summary summarise(const std::vector<bench::HttpLoad>& rounds,
                  const std::vector<bench::HttpLoad>& bare) {
  std::vector<double> rate, p50, p99, ratio;
  Summary s;
  for (std::size_t i = 0; i < rounds.size(); ++i) {
    rate.push_back(rounds[i].per_second);
    p50.push_back(rounds[i].p50_ms);
    p99.push_back(rounds[i].p99_ms);
    if (!bare.empty()) ratio.push_back(rounds[i].per_second / bare[i].per_second);
    s.done += rounds[i].done;
    s.failed += rounds[i].failed;
  }
  s.per_second = bench::median(rate);
  s.p50_ms = bench::median(p50);
  s.p99_ms = bench::median(p99);
  s.ratio = ratio.empty() ? 0 : bench::median(ratio);
  return s;
}

void print(const char* name, const Summary& f) {
  std::printf("  %-36s %8.0f req/s  p50 %6.2f ms  p99 %6.2f ms  (%ld requests, %ld not 201)", name,
              f.per_second, f.p50_ms, f.p99_ms, f.done, f.failed);
  if (f.ratio > 0) std::printf("  %.2fx bare", f.ratio);
  std::printf("\n");
}

bench::HttpLoad phase(int port, const std::string& prefix, int per_connection) {
  return bench::http_load(port, orders(prefix, kConnections * per_connection), kConnections,
                          kPhaseBudget, 201);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = "/tmp/webhooks-orders-bench-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  if (argc > 1 && std::string_view(argv[1]) == "size") {
    const int count = argc > 2 ? std::atoi(argv[2]) : kSizeOrders;
    const bool ok = count > 0 && bytes_per_record(dir, count);
    std::filesystem::remove_all(dir);
    return ok ? 0 : 1;
  }
  // Keys new in every run, also against a PostgreSQL database kept between runs.
  const std::string prefix =
      "bench-" + std::to_string(::getpid()) + "-" +
      std::to_string(std::chrono::system_clock::now().time_since_epoch().count()) + "-";
  webhooks::http::ServerTuning tuning;  // the bare server's: 64 threads, the same keep-alive
  std::printf(
      "orders-api POST /orders, every key new: %d keep-alive connections on loopback, %d rounds "
      "of %d requests per connection per server (each at most %lld s), medians; %d cores\n",
      kConnections, kRounds, kPerConnection, static_cast<long long>(kPhaseBudget.count()),
      static_cast<int>(std::thread::hardware_concurrency()));
  std::printf(
      "  both servers: tcp_nodelay on, keep_alive_max_count %zu, backlog %d; the bare one %zu "
      "pool threads, orders-api its default fiber workers (%u threads); orders-api a child "
      "process, SQLite synchronous=NORMAL; rounds alternate bare and orders-api\n",
      tuning.keep_alive_max_count, tuning.backlog, tuning.threads,
      std::max(1u, std::thread::hardware_concurrency()));

  httplib::Server bare_server;
  const std::string answer =
      R"({"amount":1000,"created_at":"2026-12-01T00:00:00.000Z","currency":"EUR",)"
      R"("id":"0193a000-0000-7000-8000-000000000000","merchant_id":"m1","reference":"inv-0",)"
      R"("status":"created"})";
  bare_server.Post("/orders", [&](const httplib::Request&, httplib::Response& res) {
    res.status = 201;
    res.set_content(answer, "application/json");
  });
  const int bare_port = webhooks::http::bind_server(bare_server, "127.0.0.1", 0, tuning);
  std::thread bare_thread([&] { bare_server.listen_after_bind(); });

  std::vector<bench::HttpLoad> bare, sqlite, postgres;
  {
    const auto api = start_orders_api(dir + "/orders.db", dir, "orders-api");
    std::unique_ptr<webhooks::launcher::ChildProcess> pg;
    const char* url = std::getenv("WEBHOOKS_BENCH_POSTGRES_URL");
    if (url && *url) pg = start_orders_api(url, dir, "orders-api-postgres");
    phase(bare_port, "warm-", kWarmUp);
    phase(api->port(), prefix + "warm-", kWarmUp);
    if (pg) phase(pg->port(), prefix + "pg-warm-", kWarmUp);
    for (int round = 0; round < kRounds; ++round) {
      const std::string r = std::to_string(round) + "-";
      bare.push_back(phase(bare_port, "bare-" + r, kPerConnection));
      sqlite.push_back(phase(api->port(), prefix + r, kPerConnection));
      if (pg) postgres.push_back(phase(pg->port(), prefix + "pg-" + r, kPerConnection));
    }
  }
  bare_server.stop();
  bare_thread.join();
  print("bare cpp-httplib server (baseline)", summarise(bare, {}));
  print("orders-api POST /orders, SQLite", summarise(sqlite, bare));
  if (!postgres.empty()) print("orders-api POST /orders, PostgreSQL", summarise(postgres, bare));
  std::printf("  target: orders-api (SQLite) >= 0.5x bare (the ratio: median of the rounds')\n\n");
  const bool ok = bytes_per_record(dir, kSizeOrders);
  std::filesystem::remove_all(dir);
  return ok ? 0 : 1;
}
