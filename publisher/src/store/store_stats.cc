// The console's figures: an endpoint's last attempts summed up, and the overview.
#include <algorithm>
#include <cmath>
#include <vector>

#include "store/store_console_sql.h"
#include "webhooks/publisher/store.h"

namespace webhooks::publisher {
namespace sql = detail::sql;
namespace {

constexpr UnixMillis kMinute = 60'000;
constexpr int kMinutes = 60;

// The nearest-rank percentile `p` (0..100] of sorted `values` (not empty).
std::int64_t percentile(const std::vector<std::int64_t>& sorted, int p) {
  const auto rank = static_cast<std::size_t>(
      std::ceil(static_cast<double>(p) / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::max<std::size_t>(rank, 1) - 1];
}

std::vector<MinuteBucket> minutes(db::Database& db, UnixMillis now) {
  const UnixMillis end = (now / kMinute + 1) * kMinute;
  const UnixMillis start = end - kMinutes * kMinute;
  std::vector<MinuteBucket> buckets(kMinutes);
  for (int i = 0; i < kMinutes; ++i)
    buckets[static_cast<std::size_t>(i)].start = start + i * kMinute;
  const db::Rows rows = db.read(sql::kSelectMinutes, {std::int64_t{start}, std::int64_t{end}});
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const std::int64_t i = rows.integer(r, 0);
    if (i < 0 || i >= kMinutes) continue;
    buckets[static_cast<std::size_t>(i)].attempts = rows.integer(r, 1);
    buckets[static_cast<std::size_t>(i)].failures = rows.integer(r, 2);
  }
  return buckets;
}

std::vector<EndpointAttention> attention(db::Database& db) {
  const db::Rows rows = db.read(sql::kSelectAttention);
  std::vector<EndpointAttention> out;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    EndpointAttention a;
    a.endpoint_id = rows.text(r, 0);
    a.merchant_id = rows.text(r, 1);
    a.enabled = rows.integer(r, 2) != 0;
    if (!a.enabled) a.reason = rows.text(r, 3);
    if (!rows.is_null(r, 4)) a.failing_since = rows.integer(r, 4);
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace

EndpointStats Store::endpoint_stats(const std::string& endpoint_id) {
  EndpointStats stats;
  stats.endpoint_id = endpoint_id;
  const db::Rows rows =
      db_->read(sql::kSelectEndpointWindow, {endpoint_id, std::int64_t{kStatsWindow}});
  if (rows.empty()) return stats;
  std::vector<std::int64_t> latencies;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const std::int64_t status = rows.integer(r, 0);
    if (status >= 200 && status < 300) ++stats.succeeded;
    latencies.push_back(rows.integer(r, 1));
  }
  std::sort(latencies.begin(), latencies.end());
  stats.attempts = static_cast<int>(rows.size());
  stats.success_rate = static_cast<double>(stats.succeeded) / stats.attempts;
  stats.p50_ms = percentile(latencies, 50);
  stats.p99_ms = percentile(latencies, 99);
  stats.last_status = static_cast<int>(rows.integer(0, 0));
  stats.last_attempt_at = rows.integer(0, 2);
  return stats;
}

Overview Store::overview(UnixMillis now) {
  Overview o;
  o.minutes = minutes(*db_, now);
  o.tasks = {{TaskState::pending, 0},
             {TaskState::delivering, 0},
             {TaskState::succeeded, 0},
             {TaskState::dead, 0}};
  o.succeeded_since = o.minutes.front().start;
  const db::Rows counts = db_->read(sql::kCountTasksByState, {std::int64_t{o.succeeded_since}});
  o.tasks[TaskState::pending] = counts.integer(0, 0);
  o.tasks[TaskState::delivering] = counts.integer(0, 1);
  o.tasks[TaskState::dead] = counts.integer(0, 2);
  o.tasks[TaskState::succeeded] = counts.integer(0, 3);
  const db::Rows oldest = db_->read(sql::kSelectOldestPending);
  if (!oldest.empty() && !oldest.is_null(0, 0)) o.oldest_pending_since = oldest.integer(0, 0);
  o.attention = attention(*db_);
  return o;
}

}  // namespace webhooks::publisher
