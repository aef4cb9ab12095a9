#include "webhooks/publisher/dispatcher.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "webhooks/error.h"
#include "webhooks/log.h"
#include "webhooks/publisher/duration.h"
#include "webhooks/publisher/endpoint_signers.h"
#include "webhooks/rfc3339.h"
#include "webhooks/version.h"
#include "webhooks/wire.h"

namespace webhooks::publisher {

std::string event_body(const Event& event) {
  std::string body = "{\"id\":" + nlohmann::json(event.event_id).dump();
  body += ",\"type\":" + nlohmann::json(event.type).dump();
  body += ",\"timestamp\":\"" + format_rfc3339(event.created_at) + "\"";
  body += ",\"data\":" + (event.payload.empty() ? std::string("{}") : event.payload) + "}";
  return body;
}

namespace {

DeliveryRequest build_signed(const ClaimedTask& task, std::int64_t dispatch_seconds,
                             const std::string& delivery_id, const EndpointSigners& signers) {
  DeliveryRequest out;
  out.url = task.url;
  out.body = event_body(task.event);
  std::string signatures = signers.sign(task.event.event_id, dispatch_seconds, out.body);
  out.headers = {{"content-type", "application/json"},
                 {std::string(kHeaderId), task.event.event_id},
                 {std::string(kHeaderTimestamp), std::to_string(dispatch_seconds)},
                 {std::string(kHeaderSignature), signatures},
                 {std::string(kHeaderDeliveryId), delivery_id},
                 {std::string(kHeaderEventType), task.event.type},
                 {"user-agent", "webhooks-publisher/" + std::string(kVersion)}};
  return out;
}

}  // namespace

DeliveryRequest build_delivery(const ClaimedTask& task, std::int64_t dispatch_seconds,
                               const std::string& delivery_id) {
  return build_signed(task, dispatch_seconds, delivery_id, EndpointSigners(task.secrets));
}

Dispatcher::Dispatcher(Store& store, Transport& transport, const RetryPolicy& policy,
                       const Clock& clock, RandomSource& random, Metrics& metrics,
                       DispatcherOptions options)
    : store_(store),
      transport_(transport),
      policy_(policy),
      clock_(clock),
      random_(random),
      metrics_(metrics),
      options_(std::move(options)),
      ids_(clock) {
  if (options_.instance_id.empty()) options_.instance_id = ids_.next();
}

Dispatcher::~Dispatcher() { stop(); }

Settlement Dispatcher::settle(const ClaimedTask& task, DeliveryAttempt attempt,
                              DeliveryResult result) {
  attempt.status = result.status;
  attempt.latency_ms = result.latency_ms;
  attempt.error = result.error;
  attempt.error_message = std::move(result.error_message);
  attempt.response_snippet = std::move(result.body);
  Settlement record;
  record.attempt = std::move(attempt);
  record.lease_owner = task.lease_owner;
  const DeliveryAttempt& a = record.attempt;
  const AttemptOutcome outcome = classify_attempt(a.status, options_.outcome_rules);
  metrics_.attempt(to_string(outcome), static_cast<double>(a.latency_ms) / 1000.0);
  record.endpoint_failed = outcome != AttemptOutcome::succeeded;
  if (outcome == AttemptOutcome::succeeded) {
    record.next = Settlement::Next::succeeded;
    return record;
  }
  if (outcome == AttemptOutcome::gone) record.disable_reason = "410 Gone";
  if (outcome == AttemptOutcome::permanent) {
    record.next = Settlement::Next::dead;
  } else {
    const UnixMillis now = clock_.now_ms();
    std::optional<std::chrono::milliseconds> retry_after;
    if (result.retry_after) {
      retry_after = parse_retry_after(*result.retry_after, now, options_.retry_after);
    }
    const auto next =
        policy_.next_attempt_at(a.attempt_number, task.task.age_from, now, random_, retry_after);
    record.next = next ? Settlement::Next::retry : Settlement::Next::dead;
    record.next_attempt_at = next.value_or(0);
  }
  const bool dead = record.next == Settlement::Next::dead;
  log_event(dead ? spdlog::level::warn : spdlog::level::info,
            {{"event", dead ? "task_dead" : "attempt_failed"},
             {"event_id", task.event.event_id},
             {"endpoint_id", task.task.endpoint_id},
             {"delivery_id", a.delivery_id},
             {"attempt", a.attempt_number},
             {"status", a.status},
             {"error", error_text(a.error, a.error_message)},
             {"outcome", to_string(outcome)}});
  return record;
}

bool Dispatcher::pause(std::chrono::milliseconds delay) {
  std::unique_lock lock(mutex_);
  stop_cv_.wait_for(lock, delay, [&] { return stopping_; });
  return !stopping_;
}

void Dispatcher::log_health(const RecordedHealth& health) const {
  for (const FailingEndpoint& w : health.warned) {
    log_event(spdlog::level::warn, {{"event", "endpoint_failing"},
                                    {"endpoint_id", w.endpoint_id},
                                    {"failing_since", format_rfc3339(w.failing_since)},
                                    {"disable_after", format_duration(options_.disable_after)}});
  }
  for (const DisabledEndpoint& d : health.disabled) {
    log_event(
        spdlog::level::warn,
        {{"event", "endpoint_disabled"}, {"endpoint_id", d.endpoint_id}, {"reason", d.reason}});
  }
}

bool Dispatcher::record_until_stored(const std::vector<Settlement>& records, UnixMillis done,
                                     const FailingRules& rules) {
  using Steady = std::chrono::steady_clock;
  std::chrono::milliseconds delay = options_.record_retry_first;
  std::optional<Steady::time_point> give_up_at;  // set once stop() was called
  for (int tries = 1;; ++tries) {
    try {
      // Each endpoint this batch warned about or disabled (a 410, or failing for
      // --disable-after), logged once the change is committed.
      log_health(store_.record(records, done, rules));
      if (tries > 1) {
        log_event(spdlog::level::info,
                  {{"event", "record_stored"}, {"tasks", records.size()}, {"tries", tries}});
      }
      return true;
    } catch (const Error& e) {
      if (e.code() != ErrorCode::storage) throw;
      bool stopping = false;
      {
        std::lock_guard lock(mutex_);
        stopping = stopping_;
      }
      const Steady::time_point now = Steady::now();
      if (stopping && !give_up_at) give_up_at = now + options_.record_retry_after_stop;
      if (give_up_at && now + delay > *give_up_at) {
        nlohmann::json ids = nlohmann::json::array();
        for (const Settlement& r : records) ids.push_back(r.attempt.delivery_id);
        log_event(spdlog::level::err, {{"event", "attempt_records_lost"},
                                       {"tasks", records.size()},
                                       {"tries", tries},
                                       {"delivery_ids", ids},
                                       {"error", e.what()}});
        return false;
      }
      log_event(spdlog::level::warn, {{"event", "record_retry"},
                                      {"tasks", records.size()},
                                      {"try", tries},
                                      {"retry_in_ms", delay.count()},
                                      {"error", e.what()}});
      {
        // Sleeps out the delay; a stop() during it ends the sleep once (then the give-up
        // deadline starts), later sleeps run to their end.
        std::unique_lock lock(mutex_);
        const bool was_stopping = stopping_;
        stop_cv_.wait_for(lock, delay, [&] { return stopping_ != was_stopping; });
      }
      delay = std::min(delay * 2, options_.record_retry_max);
    }
  }
}

void Dispatcher::release_after_failed_claim(const std::string& owner,
                                            std::chrono::steady_clock::time_point lease_end) {
  constexpr int kTries = 5;  // then the lease lapses on its own
  std::chrono::milliseconds delay = options_.record_retry_first;
  for (int tries = 1;; ++tries) {
    try {
      const int released = store_.release(owner, clock_.now_ms());
      if (released > 0) {
        log_event(spdlog::level::warn,
                  {{"event", "claim_released"}, {"lease_owner", owner}, {"tasks", released}});
      }
      return;
    } catch (const Error& e) {
      if (e.code() != ErrorCode::storage) throw;
      // Past the lease the tasks are claimable again anyway.
      if (tries == kTries || std::chrono::steady_clock::now() + delay >= lease_end ||
          !pause(delay)) {
        return;
      }
      delay = std::min(delay * 2, options_.record_retry_max);
    }
  }
}

std::vector<DeliveryRequest> Dispatcher::prepare(const std::vector<ClaimedTask>& claimed,
                                                 const std::string& owner, UnixMillis now,
                                                 std::vector<const ClaimedTask*>& sending,
                                                 std::vector<DeliveryAttempt>& attempts,
                                                 std::vector<Settlement>& settled) {
  std::unordered_map<std::string, EndpointSigners> signers;  // by endpoint, for this batch
  std::vector<DeliveryRequest> batch;
  for (const ClaimedTask& task : claimed) {
    if (policy_.expired(task.task.age_from, now)) {  // e.g. waited out a disabled endpoint
      Settlement dead;
      dead.attempt.task_id = task.task.id;
      dead.attempt.endpoint_id = task.task.endpoint_id;
      dead.attempt.error_message = "age limit reached";
      dead.lease_owner = owner;
      dead.next = Settlement::Next::dead;
      settled.push_back(std::move(dead));
      continue;
    }
    DeliveryAttempt attempt;
    attempt.delivery_id = ids_.next();
    attempt.task_id = task.task.id;
    attempt.event_id = task.event.event_id;
    attempt.endpoint_id = task.task.endpoint_id;
    attempt.attempt_number = task.task.attempts + 1;
    attempt.trigger = task.task.next_trigger;
    attempt.started_at = clock_.now_ms();
    auto endpoint_signers = signers.find(task.task.endpoint_id);
    if (endpoint_signers == signers.end()) {
      endpoint_signers =
          signers.emplace(task.task.endpoint_id, EndpointSigners(task.secrets)).first;
    }
    batch.push_back(build_signed(task, attempt.started_at / 1000, attempt.delivery_id,
                                 endpoint_signers->second));
    attempts.push_back(std::move(attempt));
    sending.push_back(&task);
  }
  return batch;
}

int Dispatcher::run_once() {
  const UnixMillis now = clock_.now_ms();
  const std::string owner =
      options_.instance_id + "/" + std::to_string(batch_seq_.fetch_add(1) + 1);
  const auto lease_end = std::chrono::steady_clock::now() + options_.lease;
  std::vector<ClaimedTask> claimed;
  try {
    claimed = store_.claim(owner, options_.batch_size, now, now + options_.lease.count());
  } catch (const Error& e) {
    // The claim's COMMIT may have been applied with its answer lost (the connection broke):
    // tasks leased to `owner` would then wait out the whole lease. Put them back.
    if (e.code() == ErrorCode::storage) release_after_failed_claim(owner, lease_end);
    throw;
  }
  if (claimed.empty()) return 0;

  std::vector<Settlement> records;
  std::vector<const ClaimedTask*> sending;
  std::vector<DeliveryAttempt> attempts;
  const std::vector<DeliveryRequest> batch =
      prepare(claimed, owner, now, sending, attempts, records);
  std::vector<DeliveryResult> results =
      batch.empty() ? std::vector<DeliveryResult>{} : transport_.send(batch);
  for (std::size_t i = 0; i < sending.size(); ++i) {
    DeliveryResult result;
    if (i < results.size()) {
      result = std::move(results[i]);
    } else {
      result.error = TransportError::other;
      result.error_message = "no response from transport";
    }
    records.push_back(settle(*sending[i], std::move(attempts[i]), std::move(result)));
  }
  const UnixMillis done = clock_.now_ms();
  FailingRules rules;
  if (const std::int64_t after = options_.disable_after.count(); after > 0) {
    rules.disable_before = done - after;
    rules.warn_before = done - after / 2;
  }
  rules.ops_merchant_id = options_.ops_merchant_id;
  if (!record_until_stored(records, done, rules)) {
    throw Error(ErrorCode::storage, "gave up recording " + std::to_string(records.size()) +
                                        " attempts while stopping: the database kept failing");
  }
  return static_cast<int>(records.size());
}

int Dispatcher::run_until_idle() {
  int total = 0;
  while (const int n = run_once()) total += n;
  return total;
}

void Dispatcher::start() {
  std::lock_guard lock(mutex_);
  stopping_ = false;
  for (int i = 0; i < options_.workers; ++i) threads_.emplace_back([this] { work(); });
}

void Dispatcher::wake() {
  {
    std::lock_guard lock(mutex_);
    ++wake_seq_;
  }
  // One idle worker is enough for new work; a worker that claims a full batch wakes the next
  // (work()), so a backlog still gets every worker without a herd on each ingest.
  wake_cv_.notify_one();
}

void Dispatcher::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_cv_.notify_all();
  stop_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

void Dispatcher::work() {
  std::uint64_t seen = 0;
  for (;;) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      seen = wake_seq_;
    }
    int settled = 0;
    try {
      settled = run_once();
    } catch (const std::exception& e) {
      log_event(spdlog::level::err, {{"event", "dispatch_failed"}, {"error", e.what()}});
    }
    if (settled >= options_.batch_size) wake();  // more may be due: bring in a peer
    if (settled > 0) continue;
    std::unique_lock lock(mutex_);
    wake_cv_.wait_for(lock, options_.poll_interval, [&] { return stopping_ || wake_seq_ != seen; });
  }
}

}  // namespace webhooks::publisher
