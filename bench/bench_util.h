// Small helpers shared by the benchmarks: bounded timing loops, rounds, medians, printing.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

namespace bench {

// Runs `op` in batches until `budget` has passed (and at most `max_ops` times); returns ops/s.
inline double rate(const std::function<void()>& op, std::chrono::milliseconds budget,
                   long max_ops = 50'000'000) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  long ops = 0;
  while (ops < max_ops) {
    for (int i = 0; i < 256; ++i) op();
    ops += 256;
    if (clock::now() - start >= budget) break;
  }
  const double seconds = std::chrono::duration<double>(clock::now() - start).count();
  return static_cast<double>(ops) / seconds;
}

inline double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// Value at quantile q (0..1) of `values` (nearest rank).
inline double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<std::size_t>(q * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(rank, values.size() - 1)];
}

// Alternates `ours` and `baseline` for `rounds` rounds (A B A B ...) so drift hits both alike;
// returns the medians of their rates and of the per-round ratios.
struct Paired {
  double ours, baseline, ratio;
};
inline Paired paired(const std::function<void()>& ours, const std::function<void()>& baseline,
                     int rounds = 7,
                     std::chrono::milliseconds budget = std::chrono::milliseconds(300)) {
  std::vector<double> a, b, r;
  rate(ours, budget / 3);
  rate(baseline, budget / 3);  // warm-up
  for (int i = 0; i < rounds; ++i) {
    a.push_back(rate(ours, budget));
    b.push_back(rate(baseline, budget));
    r.push_back(a.back() / b.back());
  }
  return {median(a), median(b), median(r)};
}

}  // namespace bench
