// The publisher's counters and their Prometheus text rendering (docs/operations.md, "Metrics"):
//   webhooks_events_accepted_total            events accepted by ingest (replays not counted)
//   webhooks_attempts_total{outcome}          attempts by outcome: succeeded, retryable,
//                                             permanent, gone
//   webhooks_attempt_duration_seconds         histogram of attempt latency
//   webhooks_tasks{state}                     tasks by state (read from the store when rendered)
//   webhooks_endpoints_disabled               disabled endpoints (likewise)
//   webhooks_endpoint_failing_seconds{endpoint} per enabled endpoint with a failing streak, the
//                                             seconds since it started (render_endpoint_health)
//   webhooks_retention_purged_total{table}    rows deleted by retention: events, tasks, attempts,
//   audit
// Counters are per process (Prometheus sums them across daemons); the gauges are the database's.
// Thread-safe.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "webhooks/publisher/model.h"
#include "webhooks/publisher/store.h"

namespace webhooks::publisher {

class Metrics {
 public:
  // Upper bounds of the duration histogram's buckets, in seconds (+Inf is implied).
  static constexpr std::array<double, 12> kBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                      0.5,   1,    2.5,   5,    10,  30};

  void event_accepted() { events_accepted_.fetch_add(1, std::memory_order_relaxed); }
  // `outcome` is to_string(AttemptOutcome); `seconds` the attempt's latency.
  void attempt(std::string_view outcome, double seconds);

  // Rows a retention pass deleted.
  void purged(const PurgeCounts& counts);

  std::uint64_t events_accepted() const { return events_accepted_.load(); }
  PurgeCounts purged() const;
  std::uint64_t attempts(std::string_view outcome) const;

  // The Prometheus text exposition (version 0.0.4) of everything above.
  std::string render(const std::map<TaskState, std::int64_t>& tasks,
                     std::int64_t endpoints_disabled) const;
  // webhooks_endpoint_failing_seconds for `failing` (Store::failing_endpoints) at `now`, and
  // webhooks_retention_purged_total: appended to render()'s text.
  std::string render_endpoint_health(const std::vector<FailingEndpoint>& failing,
                                     UnixMillis now) const;

 private:
  static constexpr std::array<std::string_view, 4> kOutcomes = {"succeeded", "retryable",
                                                                "permanent", "gone"};
  std::atomic<std::uint64_t> events_accepted_{0};
  std::array<std::atomic<std::uint64_t>, 4> attempts_{};
  std::array<std::atomic<std::uint64_t>, kBuckets.size() + 1> buckets_{};  // last: +Inf
  std::atomic<std::uint64_t> duration_micros_{0};
  std::array<std::atomic<std::int64_t>, 4> purged_{};  // events, tasks, attempts, audit
};

}  // namespace webhooks::publisher
