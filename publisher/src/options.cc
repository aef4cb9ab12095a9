#include "webhooks/publisher/options.h"

#include <algorithm>
#include <thread>

#include "webhooks/error.h"
#include "webhooks/secret.h"

namespace webhooks::publisher {
namespace {

void require(bool ok, const std::string& message) {
  if (!ok) throw Error(ErrorCode::invalid_argument, "publisher options: " + message);
}

void require_count(int value, int low, int high, const char* name) {
  require(value >= low && value <= high, std::string(name) + " must be from " +
                                             std::to_string(low) + " to " + std::to_string(high) +
                                             ", not " + std::to_string(value));
}

void require_positive(std::chrono::milliseconds value, const char* name) {
  require(value.count() > 0, std::string(name) + " must be greater than 0 ms, not " +
                                 std::to_string(value.count()) + " ms");
}

void require_not_negative(std::chrono::milliseconds value, const char* name) {
  require(value.count() >= 0, std::string(name) + " must not be negative, not " +
                                  std::to_string(value.count()) + " ms");
}

// A bound of db::Options (int milliseconds): 0 (none) to 24 hours.
void require_database_wait(std::chrono::milliseconds value, const char* name) {
  require_not_negative(value, name);
  require(value <= std::chrono::hours(24), std::string(name) + " must be at most 24 h, not " +
                                               std::to_string(value.count()) + " ms");
}

}  // namespace

http::ServerTuning default_server_tuning() {
  http::ServerTuning tuning;
  tuning.fiber_threads = std::max(1u, std::thread::hardware_concurrency());
  return tuning;
}

int endpoint_connections_per_worker(const Options& options) {
  return std::max(1, options.max_endpoint_connections / std::max(1, options.workers));
}

int batch_rounds(const Options& options) {
  const int window =
      std::max(1, std::min(options.max_in_flight, endpoint_connections_per_worker(options)));
  return (options.batch_size + window - 1) / window;
}

void validate(const Options& o) {
  require_count(o.workers, 1, 256, "workers");
  require_count(o.max_in_flight, 1, 10'000, "max_in_flight");
  require_count(o.batch_size, 1, 10'000, "batch_size");
  require_count(o.max_endpoint_connections, 1, 100'000, "max_endpoint_connections");
  require(o.database_pool_size >= 0, "database_pool_size must not be negative");
  require_database_wait(o.database_statement_timeout, "database_statement_timeout");
  require_database_wait(o.database_pool_wait, "database_pool_wait");
  require(o.body_limit >= 1, "body_limit must be at least 1 byte");
  require_positive(o.connect_timeout, "connect_timeout");
  require_positive(o.timeout, "timeout");
  require_positive(o.delivery_lease, "delivery_lease");
  require_positive(o.poll_interval, "poll_interval");
  require_positive(o.maintenance_interval, "maintenance_interval");
  require_positive(o.ingest_lease, "ingest_lease");
  require_positive(o.ingest_ttl, "ingest_ttl");
  require_positive(o.replay_max_age, "replay_max_age");
  require_not_negative(o.rotation_grace, "rotation_grace");
  require_not_negative(o.disable_after, "disable_after");
  require_not_negative(o.retention, "retention");
  require_not_negative(o.retention_pause, "retention_pause");
  require_not_negative(o.overview_budget, "overview_budget");
  require_positive(o.overview_refresh, "overview_refresh");
  require_count(o.retention_batch, 1, 100'000, "retention_batch");
  if (!o.ops_url.empty()) {
    require(o.ops_url.starts_with("http://") || o.ops_url.starts_with("https://"),
            "ops_url must start with http:// or https://");
    try {
      (void)Secret::parse(o.ops_secret);
    } catch (const Error& e) {
      require(false, std::string("ops_secret (required with ops_url): ") + e.what());
    }
  }
  for (const int status : o.permanent_statuses) {
    require(classify_attempt(status, OutcomeRules{{status}}) == AttemptOutcome::permanent,
            "permanent_statuses: " + std::to_string(status) +
                " cannot be permanent (only 4xx but 408, 410, 425 and 429)");
  }
  const int rounds = batch_rounds(o);
  require(o.delivery_lease > o.timeout * rounds,
          "delivery_lease (" + std::to_string(o.delivery_lease.count()) +
              " ms) must be longer than timeout (" + std::to_string(o.timeout.count()) +
              " ms) times the " + std::to_string(rounds) + " round(s) a batch may need");
}

}  // namespace webhooks::publisher
