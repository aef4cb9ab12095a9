// The receiver over HTTP on loopback (64 keep-alive connections) beside a bare cpp-httplib server
// with the same pool and keep-alive settings answering 200 to the same requests, and
// Receiver::handle in process. SQLite dedup store, synchronous=NORMAL.
#include <httplib.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "bench_util.h"
#include "http_load.h"
#include "sample_order.h"
#include "webhooks/log.h"
#include "webhooks/receiver/http_server.h"
#include "webhooks/secret.h"
#include "webhooks/signer.h"

namespace {

using namespace webhooks;
using namespace webhooks::receiver;
using Clock = std::chrono::steady_clock;

constexpr int kConnections = 64;
constexpr int kPerConnection = 600;                     // requests per connection per phase
constexpr auto kPhaseBudget = std::chrono::seconds(8);  // and at most this long per phase
const std::string kSecretText = Secret::generate().to_string();

using Request = bench::HttpRequest;
using Figures = bench::HttpLoad;

std::vector<Request> make_requests(const std::string& prefix, int count) {
  const Signer signer(Secret::parse(kSecretText));
  const std::int64_t ts = system_clock().now_seconds();
  std::vector<Request> out;
  out.reserve(count);
  for (int i = 0; i < count; ++i) {
    const std::string id = prefix + std::to_string(i);
    Request r;
    r.path = "/webhooks";
    r.body = nlohmann::json{{"id", id},
                            {"type", "order.captured"},
                            {"timestamp", "2026-11-30T21:00:00Z"},
                            {"data", bench::sample_order(i)}}
                 .dump();
    r.headers = {{"webhook-id", id},
                 {"webhook-timestamp", std::to_string(ts)},
                 {"webhook-signature", signer.sign(id, ts, r.body)},
                 {"webhook-delivery-id", "dlv_" + std::to_string(i)}};
    out.push_back(std::move(r));
  }
  return out;
}

// kConnections keep-alive clients, each sending its slice of `requests` (bench/http_load.h).
Figures load(int port, const std::vector<Request>& requests) {
  return bench::http_load(port, requests, kConnections, kPhaseBudget, 200);
}

void print(const char* name, const Figures& f, double bare) {
  std::printf("  %-34s %9.0f req/s  p50 %6.2f ms  p99 %6.2f ms  (%ld requests, %ld not 200)", name,
              f.per_second, f.p50_ms, f.p99_ms, f.done, f.failed);
  if (bare > 0) std::printf("  %.2fx bare", f.per_second / bare);
  std::printf("\n");
}

template <typename S>
struct Served {
  S server;
  int port = 0;
  std::thread thread;
  explicit Served(const ServerTuning& tuning, const std::function<void(S&)>& setup) {
    setup(server);
    port = bind_server(server, "127.0.0.1", 0, tuning);
    thread = std::thread([this] { server.listen_after_bind(); });
  }
  ~Served() {
    server.stop();
    thread.join();
  }
};

// Runs `threads` threads calling handle() on requests[0..limit) (cycling when `cycle`), for at
// most 2 s; returns calls per second and how many calls were made.
std::pair<double, long> drive(Receiver& receiver, const std::vector<Request>& requests,
                              std::size_t limit, bool cycle, int threads) {
  std::atomic<std::size_t> next{0};
  std::atomic<long> done{0};
  const auto start = Clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      while (Clock::now() - start < std::chrono::seconds(2)) {
        std::size_t i = next++;
        if (i >= (cycle ? 4 * limit : limit)) break;
        i %= limit;
        const Headers headers = Headers::view(requests[i].headers);  // as headers_of(request)
        const Answer a =
            receiver.handle(headers, requests[i].body, [](const Event&) { return Reply{}; });
        if (a.status != 200)
          std::fprintf(stderr, "unexpected answer %d %s\n", a.status, a.body.c_str());
        ++done;
      }
    });
  }
  for (auto& t : pool) t.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return {static_cast<double>(done.load()) / seconds, done.load()};
}

void in_process(Receiver& receiver, const char* label) {
  for (const int threads : {1, 4}) {
    const auto requests =
        make_requests(std::string(1, label[0]) + std::to_string(threads) + "_", 100'000);
    const auto [fresh, handled] = drive(receiver, requests, requests.size(), false, threads);
    const auto [dups, calls] =
        drive(receiver, requests, static_cast<std::size_t>(handled), true, threads);
    std::printf(
        "  handle() in process, %-18s %d thread%s new events %7.0f /s, duplicates %7.0f /s "
        "(%ld + %ld calls)\n",
        label, threads, threads == 1 ? ": " : "s:", fresh, dups, handled, calls);
  }
}

}  // namespace

int main() {
  spdlog::set_level(spdlog::level::warn);
  const std::string dir = "/tmp/webhooks-receiver-bench-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  Config config;
  config.secrets = {kSecretText};
  config.consumer = "bench";
  config.store = dir + "/dedup.db";  // SQLite, synchronous=NORMAL (db::Options' default)
  config.maintenance_interval = std::chrono::milliseconds(0);
  Receiver receiver(config);

  const ServerTuning tuning;  // the same for both servers
  std::printf(
      "receiver over HTTP: %d keep-alive connections on loopback, %d requests each per "
      "phase (at most %lld s), %d cores\n",
      kConnections, kPerConnection, static_cast<long long>(kPhaseBudget.count()),
      static_cast<int>(std::thread::hardware_concurrency()));
  std::printf(
      "  both servers: tcp_nodelay on, %zu pool threads, keep_alive_max_count %zu, "
      "backlog %d; SQLite synchronous=%s, %s claims\n",
      tuning.threads, tuning.keep_alive_max_count, tuning.backlog,
      config.database.sqlite_synchronous.c_str(), receiver.durable_claims() ? "durable" : "in-process");

  const auto requests = make_requests("evt_", kConnections * kPerConnection);
  Figures bare, loop, fresh, dup;
  {
    Served<httplib::Server> plain(tuning, [](httplib::Server& s) {
      s.Post("/webhooks", [](const httplib::Request&, httplib::Response& res) {
        res.set_content("{\"received\":true}", "application/json");
      });
    });
    load(plain.port, make_requests("warm_", kConnections * 20));  // warm-up
    bare = load(plain.port, requests);
  }
  {
    // The same route on webhooks::http::Server (event loop + workers), body limit included.
    Served<http::Server> same(tuning, [](http::Server& s) {
      http::limit_request_bodies(s, http::kDefaultBodyLimit);
      s.Post("/webhooks", [](const httplib::Request&, httplib::Response& res) {
        res.set_content("{\"received\":true}", "application/json");
      });
    });
    load(same.port, make_requests("warm_", kConnections * 20));
    loop = load(same.port, requests);
  }
  {
    Served<http::Server> ours(tuning, [&](http::Server& s) {
      mount(s, "/webhooks", receiver, [](const Event&) { return Reply{}; });
    });
    load(ours.port, make_requests("warm_", kConnections * 20));
    fresh = load(ours.port, requests);
    dup = load(ours.port, requests);
  }
  print("bare cpp-httplib server (baseline)", bare, 0);
  print("webhooks::http::Server, same route", loop, bare.per_second);
  print("receiver, new events", fresh, bare.per_second);
  print("receiver, duplicates", dup, bare.per_second);
  std::printf("  targets: new events >= 25000/s, duplicates >= 0.5x bare, p99 < 5 ms\n");
  in_process(receiver, "in-process claims,");
  config.claims = Config::Claims::durable;
  config.store = dir + "/dedup-durable.db";
  Receiver durable(config);
  in_process(durable, "durable claims,   ");
  std::filesystem::remove_all(dir);
  return 0;
}
