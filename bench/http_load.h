// A closed HTTP load loop for the benchmarks: `connections` client threads on 127.0.0.1, each with
// one keep-alive connection (TCP_NODELAY), POST their slice of the requests one after another,
// bounded by the request count and a time budget.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.h"

namespace bench {

struct HttpRequest {
  std::string path, body;
  httplib::Headers headers;
};

struct HttpLoad {
  double per_second = 0;          // requests answered (any way) per second of wall time
  double p50_ms = 0, p99_ms = 0;  // request latency, milliseconds
  long done = 0;                  // requests sent
  long failed = 0;                // no answer, or a status other than expect_status
};

// Sends requests[i] on connection i % connections, until all are sent or `budget` has passed.
inline HttpLoad http_load(int port, const std::vector<HttpRequest>& requests, int connections,
                          std::chrono::milliseconds budget, int expect_status) {
  using Clock = std::chrono::steady_clock;
  const auto ms = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  std::vector<std::vector<double>> latencies(static_cast<std::size_t>(connections));
  std::atomic<long> failed{0};
  std::vector<std::thread> threads;
  const auto start = Clock::now();
  const auto deadline = start + budget;
  for (int c = 0; c < connections; ++c) {
    threads.emplace_back([&, c] {
      httplib::Client client("127.0.0.1", port);
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);
      for (std::size_t i = static_cast<std::size_t>(c);
           i < requests.size() && Clock::now() < deadline;
           i += static_cast<std::size_t>(connections)) {
        const HttpRequest& r = requests[i];
        const auto t0 = Clock::now();
        auto res = client.Post(r.path.c_str(), r.headers, r.body, "application/json");
        latencies[static_cast<std::size_t>(c)].push_back(ms(t0, Clock::now()));
        if (!res || res->status != expect_status) ++failed;
      }
    });
  }
  for (auto& t : threads) t.join();
  const double seconds = ms(start, Clock::now()) / 1000;
  std::vector<double> all;
  for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  return {static_cast<double>(all.size()) / seconds, quantile(all, 0.5), quantile(all, 0.99),
          static_cast<long>(all.size()), failed.load()};
}

// Rounds of one load: the median rate, p50 and p99 (each the median over the rounds); requests
// and failures summed.
inline HttpLoad median_load(const std::vector<HttpLoad>& rounds) {
  std::vector<double> rate, p50, p99;
  HttpLoad out;
  for (const HttpLoad& l : rounds) {
    rate.push_back(l.per_second);
    p50.push_back(l.p50_ms);
    p99.push_back(l.p99_ms);
    out.done += l.done;
    out.failed += l.failed;
  }
  if (rounds.empty()) return out;
  out.per_second = median(rate);
  out.p50_ms = median(p50);
  out.p99_ms = median(p99);
  return out;
}

}  // namespace bench
