#include "ops/metrics.h"

#include <algorithm>
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

void Metrics::purged(const PurgeCounts& counts) {
  purged_[0].fetch_add(counts.events, std::memory_order_relaxed);
  purged_[1].fetch_add(counts.tasks, std::memory_order_relaxed);
  purged_[2].fetch_add(counts.attempts, std::memory_order_relaxed);
  purged_[3].fetch_add(counts.audit, std::memory_order_relaxed);
}

PurgeCounts Metrics::purged() const {
  return {purged_[0].load(), purged_[1].load(), purged_[2].load(), purged_[3].load()};
}

namespace {

// A label value as the text format writes it: backslash, double quote and newline escaped.
std::string label_value(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

std::string Metrics::render_endpoint_health(const std::vector<FailingEndpoint>& failing,
                                            UnixMillis now) const {
  std::string out;
  auto line = [&](const std::string& text) { out += text + "\n"; };
  line(
      "# HELP webhooks_endpoint_failing_seconds Seconds since an enabled endpoint started "
      "failing.");
  line("# TYPE webhooks_endpoint_failing_seconds gauge");
  char seconds[32];
  for (const FailingEndpoint& f : failing) {
    std::snprintf(seconds, sizeof seconds, "%.3f",
                  static_cast<double>(std::max<UnixMillis>(0, now - f.failing_since)) / 1000.0);
    line("webhooks_endpoint_failing_seconds{endpoint=\"" + label_value(f.endpoint_id) + "\"} " +
         seconds);
  }
  line("# HELP webhooks_retention_purged_total Rows deleted by retention (--retention).");
  line("# TYPE webhooks_retention_purged_total counter");
  const PurgeCounts p = purged();
  line("webhooks_retention_purged_total{table=\"events\"} " + std::to_string(p.events));
  line("webhooks_retention_purged_total{table=\"tasks\"} " + std::to_string(p.tasks));
  line("webhooks_retention_purged_total{table=\"attempts\"} " + std::to_string(p.attempts));
  line("webhooks_retention_purged_total{table=\"audit\"} " + std::to_string(p.audit));
  return out;
}

}  // namespace webhooks::publisher
