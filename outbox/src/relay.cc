#include "webhooks/outbox/relay.h"

#include <httplib.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <unordered_set>

#include "webhooks/backoff.h"
#include "webhooks/error.h"
#include "webhooks/json_compact.h"
#include "webhooks/log.h"

namespace webhooks::outbox {
namespace {

// A row with an ordering key waits while an earlier unsent row has the same key (its post failed
// and waits for its retry), so the publisher accepts a key's events in the order they were made.
constexpr std::string_view kDue =
    "SELECT id, merchant_id, event_type, payload, attempts, ordering_key, traceparent, tracestate "
    "FROM outbox WHERE sent_at IS NULL AND next_attempt_at <= $1 AND (ordering_key IS NULL OR "
    "NOT EXISTS (SELECT 1 FROM outbox e WHERE e.ordering_key = outbox.ordering_key "
    "AND e.sent_at IS NULL AND (e.created_at < outbox.created_at OR (e.created_at = "
    "outbox.created_at AND e.id < outbox.id)) AND e.next_attempt_at > $1)) "
    "ORDER BY created_at, id LIMIT $2";
constexpr std::string_view kMarkSent = "UPDATE outbox SET sent_at = $2 WHERE id = $1";
constexpr std::string_view kReschedule =
    "UPDATE outbox SET attempts = attempts + 1, next_attempt_at = $2, last_error = $3 WHERE id = "
    "$1";

// PostgreSQL has no DELETE … LIMIT: the batch is chosen by a subquery (from the outbox_sent index).
constexpr std::string_view kPurgeSent =
    "DELETE FROM outbox WHERE id IN (SELECT id FROM outbox WHERE sent_at IS NOT NULL "
    "AND sent_at < $1 ORDER BY sent_at LIMIT $2)";

}  // namespace

struct Relay::Impl {
  std::shared_ptr<db::Database> db;
  const Clock& clock;
  RandomSource& random;
  RelayOptions options;
  httplib::Client client;

  Impl(std::shared_ptr<db::Database> d, const Clock& c, RandomSource& r, RelayOptions o)
      : db(std::move(d)),
        clock(c),
        random(r),
        options(std::move(o)),
        client(options.publisher_url) {
    const std::string& url = options.publisher_url;
    if (!client.is_valid() || !(url.starts_with("http://") || url.starts_with("https://"))) {
      throw Error(ErrorCode::invalid_argument, "unusable publisher URL '" + options.publisher_url +
                                                   "'; expected http://HOST:PORT");
    }
    client.set_connection_timeout(options.connect_timeout);
    client.set_read_timeout(options.read_timeout);
    client.set_keep_alive(true);
    client.set_tcp_nodelay(
        true);  // header and body go out in separate writes (DESIGN: library traps)
    if (!options.publisher_token.empty()) client.set_bearer_token_auth(options.publisher_token);
  }

  // The wait after the post that failed with `attempts` earlier failures (RelayOptions).
  UnixMillis backoff(std::int64_t attempts) const {
    const Backoff backoff{
        .first = options.initial_backoff, .max = options.max_backoff, .jitter = 0.2};
    return backoff.delay(static_cast<int>(std::min<std::int64_t>(attempts, 1000)) + 1, &random)
        .count();
  }

  // Posts one row; returns an empty string on success, else the reason.
  std::string post(const db::Rows& rows, std::size_t i) {
    // The payload goes out as stored, number tokens byte for byte (no tree in between).
    std::string data;
    try {
      data = compact_json(rows.text(i, 3));
    } catch (const Error&) {
      return "payload is not JSON";
    }
    std::string body = "{\"merchant_id\":" + nlohmann::json(rows.text(i, 1)).dump() +
                       ",\"type\":" + nlohmann::json(rows.text(i, 2)).dump();
    if (!rows.is_null(i, 5)) body += ",\"ordering_key\":" + nlohmann::json(rows.text(i, 5)).dump();
    body += ",\"data\":" + data + "}";
    httplib::Headers headers = {{"Idempotency-Key", rows.text(i, 0)}};
    if (!rows.is_null(i, 6)) headers.emplace("traceparent", rows.text(i, 6));
    if (!rows.is_null(i, 7)) headers.emplace("tracestate", rows.text(i, 7));
    const auto res = client.Post("/v1/events", headers, body, "application/json");
    if (!res) return "no answer from the publisher: " + httplib::to_string(res.error());
    if (res->status >= 200 && res->status < 300) return {};
    return "publisher answered " + std::to_string(res->status) + ": " + res->body.substr(0, 200);
  }
};

Relay::Relay(std::shared_ptr<db::Database> db, const Clock& clock, RandomSource& random,
             RelayOptions options)
    : impl_(std::make_unique<Impl>(std::move(db), clock, random, std::move(options))),
      task_("outbox_relay_failed", [this] { return pass(); },
            {.after_failure = impl_->options.poll_interval}) {}

Relay::~Relay() { stop(); }

Relay::PassResult Relay::relay_once() {
  PassResult result;
  const db::Rows due =
      impl_->db->exec(kDue, {impl_->clock.now_ms(), std::int64_t{impl_->options.batch_size}});
  std::unordered_set<std::string> held_keys;  // keys whose earlier row failed in this pass
  for (std::size_t i = 0; i < due.size(); ++i) {
    if (!due.is_null(i, 5) && held_keys.contains(due.text(i, 5))) continue;
    const std::string error = impl_->post(due, i);
    if (!error.empty() && !due.is_null(i, 5)) held_keys.insert(due.text(i, 5));
    const UnixMillis now = impl_->clock.now_ms();
    if (error.empty()) {
      impl_->db->exec(kMarkSent, {due.text(i, 0), now});
      ++result.sent;
      continue;
    }
    ++result.failed;
    const std::int64_t attempts = due.integer(i, 4);
    impl_->db->exec(kReschedule, {due.text(i, 0), now + impl_->backoff(attempts), error});
    log_event(spdlog::level::warn, {{"event", "outbox_post_failed"},
                                    {"outbox_id", due.text(i, 0)},
                                    {"attempts", attempts + 1},
                                    {"error", error}});
  }
  return result;
}

std::int64_t Relay::purge_sent() {
  const std::chrono::milliseconds keep = impl_->options.sent_retention;
  if (keep.count() <= 0) return 0;
  const UnixMillis before = impl_->clock.now_ms() - keep.count();
  const std::int64_t batch = std::max(1, impl_->options.purge_batch);
  std::int64_t total = 0;
  for (;;) {
    const std::int64_t n = impl_->db->exec(kPurgeSent, {before, batch}).affected();
    total += n;
    if (n < batch) break;
  }
  if (total > 0) log_event(spdlog::level::info, {{"event", "outbox_purged"}, {"rows", total}});
  return total;
}

std::chrono::milliseconds Relay::pass() {
  const PassResult result = relay_once();
  if (impl_->clock.now_ms() >= next_purge_) {
    next_purge_ = impl_->clock.now_ms() + impl_->options.purge_interval.count();
    purge_sent();
  }
  return result.sent == 0 || result.failed > 0 ? impl_->options.poll_interval
                                               : std::chrono::milliseconds(0);
}

void Relay::start() { task_.start(); }

void Relay::stop() { task_.stop(); }

}  // namespace webhooks::outbox
