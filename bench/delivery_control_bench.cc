// Delivery control per endpoint (issue 26), a publisher::Publisher in process with the daemon's
// default Options (4 workers, batch 32, 32 connections per endpoint, 15 s timeout) on SQLite,
// endpoints on 127.0.0.1, every figure beside its baseline measured in the same run:
//   1. isolation: a healthy endpoint's delay from ingest to arrival at a steady 200 events/s
//      (sample orders), alone, then beside an endpoint that accepts connections and never answers
//      holding 5,000 due tasks (target: p99 under 1 s);
//   2. rate limit: deliveries/s to three unlimited endpoints draining 2,000 tasks each, alone, then
//      beside a fourth endpoint limited to 50/s holding 1,000 tasks (target: no drop for the
//      unlimited ones; the limited one never over 50 in any second).
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "api/ingest.h"
#include "bench_endpoint.h"
#include "bench_util.h"
#include "sample_order.h"
#include "webhooks/http_server.h"
#include "webhooks/log.h"
#include "webhooks/publisher/publisher.h"
#include "webhooks/publisher/store.h"
#include "webhooks/secret.h"
#include "webhooks/uuid.h"

namespace {

using namespace webhooks;
using Steady = std::chrono::steady_clock;
using std::chrono::milliseconds;

double ms_between(Steady::time_point a, Steady::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// An endpoint that answers 200 at once and notes when each webhook-id first arrived.
struct Hook {
  httplib::Server server;
  int port = 0;
  std::thread thread;
  std::mutex mutex;
  std::unordered_map<std::string, Steady::time_point> first_seen;
  std::vector<Steady::time_point> arrivals;

  Hook() {
    server.Post("/hook", [this](const httplib::Request& req, httplib::Response& res) {
      const auto now = Steady::now();
      {
        std::lock_guard lock(mutex);
        first_seen.emplace(req.get_header_value("webhook-id"), now);
        arrivals.push_back(now);
      }
      res.set_content("", "text/plain");
    });
    port = http::bind_server(server, "127.0.0.1", 0);
    thread = std::thread([this] { server.listen_after_bind(); });
  }
  ~Hook() {
    server.stop();
    thread.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port) + "/hook"; }
  std::size_t count() {
    std::lock_guard lock(mutex);
    return arrivals.size();
  }
};

// Accepts connections (the kernel's backlog) and never answers; closing it resets them.
struct Hanging {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int port = 0;
  Hanging() {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t n = sizeof a;
    if (bind(fd, reinterpret_cast<sockaddr*>(&a), n) != 0 || listen(fd, SOMAXCONN) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n) != 0) {
      std::perror("hanging endpoint");
      std::exit(1);
    }
    port = ntohs(a.sin_port);
  }
  ~Hanging() { close(fd); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port) + "/hook"; }
};

// A Publisher with the daemon's defaults on a fresh SQLite file.
std::unique_ptr<publisher::Publisher> make_publisher(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("bench-control-" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  publisher::Options o;
  o.database = (dir / "publisher.db").string();
  o.allow_private_networks = true;
  return std::make_unique<publisher::Publisher>(o);
}

void add_endpoint(publisher::Publisher& p, const std::string& merchant, const std::string& url,
                  std::optional<int> rate_limit = std::nullopt) {
  publisher::Endpoint e = bench::new_endpoint(merchant, url);
  e.control.rate_limit = rate_limit;
  p.store().create_endpoint(e);
}

std::int64_t delivering(publisher::Publisher& p) {
  return p.database()
      .exec("SELECT COUNT(*) FROM publisher_tasks WHERE state = 'delivering'")
      .integer(0, 0);
}

// --- 1. isolation ---
struct Latency {
  double p50 = 0, p99 = 0;
  long missing = 0;
};

Latency healthy_latency(bool beside_hanging) {
  constexpr int kRate = 200, kSeconds = 5, kBacklog = 5'000;
  Hook healthy;
  auto p = make_publisher(beside_hanging ? "isolation-beside" : "isolation-alone");
  Hanging hanging;
  add_endpoint(*p, "m_ok", healthy.url());
  if (beside_hanging) {
    add_endpoint(*p, "m_hang", hanging.url());
    for (int i = 0; i < kBacklog; ++i) {
      p->ingest().publish("m_hang", "order.created", bench::sample_order(i).dump());
    }
  }
  p->start();
  // Let the hanging endpoint take its share first (32 attempts in flight), as in production.
  const auto deadline = Steady::now() + std::chrono::seconds(10);
  while (beside_hanging && delivering(*p) < 32 && Steady::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  const int total = kRate * kSeconds;
  std::vector<std::pair<std::string, Steady::time_point>> published;
  published.reserve(total);
  const auto start = Steady::now();
  for (int i = 0; i < total; ++i) {
    std::this_thread::sleep_until(start + std::chrono::microseconds(1'000'000LL * i / kRate));
    const auto accepted =
        p->ingest().publish("m_ok", "order.created", bench::sample_order(i).dump());
    published.emplace_back(accepted.event_id, Steady::now());
  }
  const auto wait_until = Steady::now() + std::chrono::seconds(5);
  while (healthy.count() < static_cast<std::size_t>(total) && Steady::now() < wait_until) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  Latency out;
  std::vector<double> ms;
  {
    std::lock_guard lock(healthy.mutex);
    for (const auto& [id, at] : published) {
      const auto it = healthy.first_seen.find(id);
      if (it == healthy.first_seen.end()) {
        ++out.missing;
      } else {
        ms.push_back(ms_between(at, it->second));
      }
    }
  }
  out.p50 = bench::quantile(ms, 0.50);
  out.p99 = bench::quantile(ms, 0.99);
  return out;  // `hanging` closes first: its connections reset and the workers stop at once
}

// --- 2. rate limit beside unlimited endpoints ---
struct Drain {
  double unlimited_rate = 0;  // deliveries/s to the three unlimited endpoints
  std::size_t limited = 0;    // deliveries to the limited one over the same time
  double seconds = 0;
  std::size_t limited_max_per_second = 0;
};

Drain drain(bool with_limited) {
  constexpr int kPerEndpoint = 2'000, kLimitedTasks = 1'000, kLimit = 50;
  Hook fast, limited;
  auto p = make_publisher(with_limited ? "rate-beside" : "rate-alone");
  for (int e = 0; e < 3; ++e) add_endpoint(*p, "u" + std::to_string(e), fast.url());
  if (with_limited) add_endpoint(*p, "m_limited", limited.url(), kLimit);
  for (int i = 0; i < kPerEndpoint; ++i) {
    for (int e = 0; e < 3; ++e) {
      p->ingest().publish("u" + std::to_string(e), "order.created", bench::sample_order(i).dump());
    }
    if (with_limited && i < kLimitedTasks) {
      p->ingest().publish("m_limited", "order.created", bench::sample_order(i).dump());
    }
  }
  const auto start = Steady::now();
  p->start();
  const auto deadline = start + std::chrono::seconds(60);
  while (fast.count() < 3 * kPerEndpoint && Steady::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  const auto end = Steady::now();
  const double seconds = ms_between(start, end) / 1000;
  Drain out;
  out.unlimited_rate = static_cast<double>(fast.count()) / seconds;
  std::lock_guard lock(limited.mutex);
  std::size_t in_window = 0;
  for (std::size_t i = 0, j = 0; i < limited.arrivals.size(); ++i) {
    if (limited.arrivals[i] > end) break;
    ++in_window;
    while (limited.arrivals[i] - limited.arrivals[j] >= std::chrono::seconds(1)) ++j;
    out.limited_max_per_second = std::max(out.limited_max_per_second, i - j + 1);
  }
  out.limited = in_window;
  out.seconds = seconds;
  return out;
}

}  // namespace

int main() {
  spdlog::set_level(spdlog::level::err);
  std::printf("== delivery control (issue 26): publisher in process, default Options, SQLite ==\n");
  std::vector<double> alone_p99, beside_p99, alone_p50, beside_p50;
  long missing = 0;
  for (int round = 0; round < 2; ++round) {  // alternated: the machine is shared
    const Latency a = healthy_latency(false), b = healthy_latency(true);
    alone_p50.push_back(a.p50), alone_p99.push_back(a.p99);
    beside_p50.push_back(b.p50), beside_p99.push_back(b.p99);
    missing += a.missing + b.missing;
  }
  std::printf(
      "isolation: healthy endpoint, ingest to arrival at 200 events/s (medians of 2 rounds)\n"
      "  alone:                                    p50 %7.1f ms  p99 %7.1f ms\n"
      "  beside a hanging endpoint (5,000 tasks):  p50 %7.1f ms  p99 %7.1f ms   (target: p99 < "
      "1000 ms) %s\n",
      bench::median(alone_p50), bench::median(alone_p99), bench::median(beside_p50),
      bench::median(beside_p99),
      bench::median(beside_p99) < 1000 && missing == 0 ? "met" : "NOT MET");
  if (missing > 0) std::printf("  %ld healthy events not delivered within 5 s\n", missing);

  std::vector<double> alone_rate, beside_rate, ratio;
  std::size_t max_per_second = 0, limited = 0;
  double limited_seconds = 0;
  for (int round = 0; round < 4; ++round) {
    // Alternated ABBA: each order as often, so a machine getting busier or quieter over the run
    // weighs on both sides alike.
    Drain a, b;
    if (round % 2 == 0) {
      a = drain(false);
      b = drain(true);
    } else {
      b = drain(true);
      a = drain(false);
    }
    alone_rate.push_back(a.unlimited_rate);
    beside_rate.push_back(b.unlimited_rate);
    ratio.push_back(b.unlimited_rate / a.unlimited_rate);
    max_per_second = std::max(max_per_second, b.limited_max_per_second);
    limited = b.limited;
    limited_seconds = b.seconds;
  }
  std::printf(
      "rate limit: 3 unlimited endpoints draining 2,000 tasks each (medians of 4 rounds, "
      "ABBA)\n"
      "  alone:                                    %8.0f deliveries/s\n"
      "  beside an endpoint limited to 50/s:       %8.0f deliveries/s  (median ratio %.2fx; "
      "target: "
      "no drop)\n"
      "  the limited endpoint meanwhile:           %zu deliveries in %.1f s, at most %zu in any "
      "second (limit 50) %s\n",
      bench::median(alone_rate), bench::median(beside_rate), bench::median(ratio), limited,
      limited_seconds, max_per_second, max_per_second <= 50 ? "kept" : "NOT KEPT");
  return 0;
}
