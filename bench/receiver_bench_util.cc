// bench_receiver's shared helpers (receiver_bench.h): signed requests, the load loop, the rounds
// beside the bare server and their lines.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "bench_util.h"
#include "receiver_bench.h"
#include "sample_order.h"
#include "webhooks/clock.h"
#include "webhooks/signer.h"

namespace receiver_bench {

namespace {

// Median over the rounds of ours / bare.
double ratio_of(const std::vector<Figures>& ours, const std::vector<Figures>& bare) {
  std::vector<double> r;
  for (std::size_t i = 0; i < ours.size() && i < bare.size(); ++i) {
    r.push_back(ours[i].per_second / bare[i].per_second);
  }
  return r.empty() ? 0 : bench::median(r);
}

void print(const std::string& name, const Figures& f, double ratio) {
  std::printf("  %-52s %7.0f req/s  p50 %6.2f ms  p99 %6.2f ms  (%ld requests, %ld not 200)",
              name.c_str(), f.per_second, f.p50_ms, f.p99_ms, f.done, f.failed);
  if (ratio > 0) std::printf("  %.2fx bare", ratio);
  std::printf("\n");
}

// "    target: <what> -> met" (or MISSED); returns whether it was met.
bool target(const std::string& what, bool met) {
  std::printf("    target: %-60s -> %s\n", what.c_str(), met ? "met" : "MISSED");
  return met;
}

}  // namespace

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

Figures load(int port, const std::vector<Request>& requests) {
  return bench::http_load(port, requests, kConnections, kPhaseBudget, 200);
}

Rounds measure(int bare_port, int port, const std::string& prefix, bool duplicates) {
  Rounds out;
  for (int r = 0; r < kRounds; ++r) {
    const auto requests =
        make_requests(prefix + std::to_string(r) + "_", kConnections * kPerConnection);
    out.bare.push_back(load(bare_port, requests));
    out.fresh.push_back(load(port, requests));
    if (duplicates) out.dup.push_back(load(port, requests));
  }
  return out;
}

void report(const std::string& name, const Rounds& m, bool targets) {
  print("bare cpp-httplib server, its rounds (baseline)", bench::median_load(m.bare), 0);
  const Figures fresh = bench::median_load(m.fresh), dup = bench::median_load(m.dup);
  const double fresh_ratio = ratio_of(m.fresh, m.bare), dup_ratio = ratio_of(m.dup, m.bare);
  print(name + ", new events", fresh, fresh_ratio);
  if (!m.dup.empty()) print(name + ", duplicates", dup, dup_ratio);
  if (!targets) return;
  target("new events >= 0.6x bare, all 200", fresh_ratio >= 0.6 && fresh.failed == 0);
  target("new events p99 < 10 ms", fresh.p99_ms < 10);
  target("duplicates >= 0.7x bare, all 200", dup_ratio >= 0.7 && dup.failed == 0);
}

void progress(const char* phase) {
  std::fprintf(stderr, "[receiver_bench] %s\n", phase);
  std::fflush(stderr);
}

}  // namespace receiver_bench
