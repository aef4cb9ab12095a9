#include "webhooks/publisher/metrics.h"

#include <cstdio>

namespace webhooks::publisher {

void Metrics::attempt(std::string_view outcome, double seconds) {
  for (std::size_t i = 0; i < kOutcomes.size(); ++i) {
    if (kOutcomes[i] == outcome) attempts_[i].fetch_add(1, std::memory_order_relaxed);
  }
  std::size_t bucket = 0;
  while (bucket < kBuckets.size() && seconds > kBuckets[bucket]) ++bucket;
  buckets_[bucket].fetch_add(1, std::memory_order_relaxed);
  duration_micros_.fetch_add(static_cast<std::uint64_t>(seconds * 1e6), std::memory_order_relaxed);
}

std::uint64_t Metrics::attempts(std::string_view outcome) const {
  for (std::size_t i = 0; i < kOutcomes.size(); ++i) {
    if (kOutcomes[i] == outcome) return attempts_[i].load();
  }
  return 0;
}

std::string Metrics::render(const std::map<TaskState, std::int64_t>& tasks,
                            std::int64_t endpoints_disabled) const {
  std::string out;
  auto line = [&](const std::string& text) { out += text + "\n"; };
  line("# HELP webhooks_events_accepted_total Events accepted by ingest.");
  line("# TYPE webhooks_events_accepted_total counter");
  line("webhooks_events_accepted_total " + std::to_string(events_accepted_.load()));
  line("# HELP webhooks_attempts_total Delivery attempts by outcome.");
  line("# TYPE webhooks_attempts_total counter");
  for (std::size_t i = 0; i < kOutcomes.size(); ++i) {
    line("webhooks_attempts_total{outcome=\"" + std::string(kOutcomes[i]) + "\"} " +
         std::to_string(attempts_[i].load()));
  }
  line("# HELP webhooks_tasks Delivery tasks by state.");
  line("# TYPE webhooks_tasks gauge");
  for (const auto& [state, count] : tasks) {
    line("webhooks_tasks{state=\"" + std::string(to_string(state)) + "\"} " +
         std::to_string(count));
  }
  line("# HELP webhooks_attempt_duration_seconds Latency of delivery attempts.");
  line("# TYPE webhooks_attempt_duration_seconds histogram");
  std::uint64_t cumulative = 0;
  char le[32];
  for (std::size_t i = 0; i < kBuckets.size(); ++i) {
    cumulative += buckets_[i].load();
    std::snprintf(le, sizeof le, "%g", kBuckets[i]);
    line("webhooks_attempt_duration_seconds_bucket{le=\"" + std::string(le) + "\"} " +
         std::to_string(cumulative));
  }
  cumulative += buckets_[kBuckets.size()].load();
  line("webhooks_attempt_duration_seconds_bucket{le=\"+Inf\"} " + std::to_string(cumulative));
  char sum[64];
  std::snprintf(sum, sizeof sum, "%.6f", static_cast<double>(duration_micros_.load()) / 1e6);
  line("webhooks_attempt_duration_seconds_sum " + std::string(sum));
  line("webhooks_attempt_duration_seconds_count " + std::to_string(cumulative));
  line("# HELP webhooks_endpoints_disabled Endpoints currently disabled.");
  line("# TYPE webhooks_endpoints_disabled gauge");
  line("webhooks_endpoints_disabled " + std::to_string(endpoints_disabled));
  return out;
}

}  // namespace webhooks::publisher
