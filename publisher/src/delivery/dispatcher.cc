#include "delivery/dispatcher.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "delivery/endpoint_signers.h"
#include "delivery/trace_context.h"
#include "webhooks/duration.h"
#include "webhooks/error.h"
#include "webhooks/log.h"
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
                             const std::string& delivery_id, const EndpointSigners& signers,
                             const std::string& traceparent) {
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
  if (!traceparent.empty()) {
    out.headers.emplace_back("traceparent", traceparent);
    if (!task.event.tracestate.empty())
      out.headers.emplace_back("tracestate", task.event.tracestate);
  }
  const DeliveryControl& control = task.control;
  if (const std::string authorization = authorization_value(control.auth); !authorization.empty()) {
    out.headers.emplace_back("authorization", authorization);
  }
  for (const auto& header : control.headers) out.headers.push_back(header);
  out.client_certificate = control.client_certificate;
  out.client_key = control.client_key;
  return out;
}

// The traceparent of one attempt of `task`: a child of its event's (a new trace for an event
// stored without one).
std::string attempt_traceparent(const ClaimedTask& task) {
  return valid_traceparent(task.event.traceparent) ? child_traceparent(task.event.traceparent)
                                                   : new_traceparent();
}

// An endpoint's response body as text every database stores: bytes that are not UTF-8, and NUL
// bytes, become U+FFFD (PostgreSQL refuses both in text, and a hostile endpoint's answer must not
// fail the recording of its attempt). ASCII without NUL, the usual answer, is kept as it is.
std::string storable_text(std::string body) {
  if (std::all_of(body.begin(), body.end(), [](char c) { return c > 0; })) return body;
  std::string text =
      nlohmann::json::parse(nlohmann::json(std::move(body))
                                .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
          .get<std::string>();
  constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
  for (std::size_t at = text.find('\0'); at != std::string::npos; at = text.find('\0', at)) {
    text.replace(at, 1, kReplacement);
  }
  return text;
}

}  // namespace

DeliveryRequest build_delivery(const ClaimedTask& task, std::int64_t dispatch_seconds,
                               const std::string& delivery_id) {
  return build_signed(task, dispatch_seconds, delivery_id, EndpointSigners(task.secrets),
                      attempt_traceparent(task));
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
  attempt.response_snippet = storable_text(std::move(result.body));
  Settlement record;
  record.attempt = std::move(attempt);
  record.lease_owner = task.lease_owner;
  const DeliveryAttempt& a = record.attempt;
  const AttemptOutcome outcome = classify_attempt(a.status, options_.outcome_rules);
  metrics_.attempt(to_string(outcome), static_cast<double>(a.latency_ms) / 1000.0);
  record.endpoint_failed = outcome != AttemptOutcome::succeeded;
  record.sequence_key = task.sequence_key;
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
             {"trace_id", trace_id_of(a.traceparent)},
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
  std::optional<Steady::time_point> give_up_at;  // set once stop() was called
  for (int tries = 1;; ++tries) {
    const std::chrono::milliseconds delay = record_backoff().delay(tries);
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
    }
  }
}

void Dispatcher::release_after_failed_claim(const std::string& owner,
                                            std::chrono::steady_clock::time_point lease_end) {
  constexpr int kTries = 5;  // then the lease lapses on its own
  for (int tries = 1;; ++tries) {
    const std::chrono::milliseconds delay = record_backoff().delay(tries);
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
      dead.sequence_key = task.sequence_key;
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
    attempt.traceparent = attempt_traceparent(task);
    auto endpoint_signers = signers.find(task.task.endpoint_id);
    if (endpoint_signers == signers.end()) {
      endpoint_signers =
          signers.emplace(task.task.endpoint_id, EndpointSigners(task.secrets)).first;
    }
    batch.push_back(build_signed(task, attempt.started_at / 1000, attempt.delivery_id,
                                 endpoint_signers->second, attempt.traceparent));
    attempts.push_back(std::move(attempt));
    sending.push_back(&task);
  }
  return batch;
}

std::string Dispatcher::next_lease_owner() {
  return options_.instance_id + "/" + std::to_string(batch_seq_.fetch_add(1) + 1);
}

void Dispatcher::claim_starts() {
  std::lock_guard lock(mutex_);
  claim_promised_ = false;
}

std::vector<ClaimedTask> Dispatcher::claim(int limit, const ClaimLimits& limits) {
  claim_starts();
  const UnixMillis now = clock_.now_ms();
  const std::string owner = next_lease_owner();
  const auto lease_end = std::chrono::steady_clock::now() + options_.lease;
  try {
    return store_.claim(owner, limit, now, now + options_.lease.count(), limits);
  } catch (const Error& e) {
    // The claim's COMMIT may have been applied with its answer lost (the connection broke):
    // tasks leased to `owner` would then wait out the whole lease. Put them back.
    if (e.code() == ErrorCode::storage) release_after_failed_claim(owner, lease_end);
    throw;
  }
}

FailingRules Dispatcher::failing_rules(UnixMillis now) const {
  FailingRules rules;
  if (const std::int64_t after = options_.disable_after.count(); after > 0) {
    rules.disable_before = now - after;
    rules.warn_before = now - after / 2;
  }
  rules.ops_merchant_id = options_.ops_merchant_id;
  return rules;
}

bool Dispatcher::record_settled(const std::vector<Settlement>& records) {
  const UnixMillis done = clock_.now_ms();
  return record_until_stored(records, done, failing_rules(done));
}

std::vector<ClaimedTask> Dispatcher::record_and_claim(const std::vector<Settlement>& records,
                                                      int limit, const ClaimLimits& limits) {
  claim_starts();
  const UnixMillis now = clock_.now_ms();
  const std::string owner = next_lease_owner();
  const auto lease_end = std::chrono::steady_clock::now() + options_.lease;
  std::vector<ClaimedTask> claimed;
  try {
    log_health(store_.record_and_claim(records, now, failing_rules(now), owner, limit,
                                       now + options_.lease.count(), limits, claimed));
    return claimed;
  } catch (const Error& e) {
    if (e.code() != ErrorCode::storage) throw;
    // Its COMMIT may have been applied with the answer lost: put back what the claim may hold,
    // then record (again: harmless) with record_settled's retries.
    release_after_failed_claim(owner, lease_end);
    if (!record_settled(records)) {
      throw Error(ErrorCode::storage, "gave up recording " + std::to_string(records.size()) +
                                          " attempts while stopping: the database kept failing");
    }
    return {};
  }
}

int Dispatcher::run_once() {
  ClaimLimits limits;
  limits.per_endpoint = options_.endpoint_in_flight;
  limits.clock = [this] { return clock_.now_ms(); };
  const std::vector<ClaimedTask> claimed = claim(options_.batch_size, limits);
  if (claimed.empty()) return 0;

  std::vector<Settlement> records;
  std::vector<const ClaimedTask*> sending;
  std::vector<DeliveryAttempt> attempts;
  const std::vector<DeliveryRequest> batch =
      prepare(claimed, claimed.front().lease_owner, clock_.now_ms(), sending, attempts, records);
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
  if (!record_settled(records)) {
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
    // One worker is enough for new work: an idle one if any, and one busy with deliveries in
    // flight (its poll returns and it claims; workers take turns). A worker that claims a full
    // batch claims again as slots free up, so a backlog still gets every worker. Channels are
    // woken under the mutex: a worker leaves channels_ under it before its channel is destroyed.
    std::lock_guard lock(mutex_);
    if (claim_promised_) return;
    claim_promised_ = true;
    ++wake_seq_;
    if (!channels_.empty()) channels_[wake_turn_++ % channels_.size()]->wakeup();
  }
  wake_cv_.notify_one();
}

void Dispatcher::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    for (DeliveryChannel* c : channels_) c->wakeup();
  }
  wake_cv_.notify_all();
  stop_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

// One worker: a pipeline instead of batches. It keeps up to batch_size attempts in flight on its
// own channel, claims more as slots free up (each endpoint within its share: ClaimLimits), and
// records attempts as they finish, a group per transaction. A slow or hanging endpoint holds
// only its own share of the slots; it never holds the worker.
void Dispatcher::work() {
  using Steady = std::chrono::steady_clock;
  std::unique_ptr<DeliveryChannel> channel = transport_.open_channel();
  {
    std::lock_guard lock(mutex_);
    channels_.push_back(channel.get());
  }
  struct InFlight {
    ClaimedTask task;
    DeliveryAttempt attempt;
  };
  std::unordered_map<DeliveryChannel::Ticket, InFlight> in_flight;
  std::unordered_map<std::string, int> held;  // in flight per endpoint
  std::vector<Settlement> done;
  ClaimLimits limits;
  limits.per_endpoint = options_.endpoint_in_flight;
  limits.per_endpoint_here = options_.endpoint_in_flight_per_worker;
  limits.held = &held;
  limits.clock = [this] { return clock_.now_ms(); };
  const int batch = options_.batch_size;
  Steady::time_point next_claim = Steady::now(), last_claim = Steady::time_point::min(),
                     record_by = Steady::time_point::max();
  std::uint64_t seen = 0;
  // woken: wake() was called; backlog: the last claim took something (more may be due); freed:
  // attempts finished since the last claim (their endpoints' shares have room again).
  bool woken = true, backlog = false, freed = false;
  // Whether a claim is wanted now that the spacing has passed, with `room` slots free: claims
  // wait for half the slots to be free (or none in flight), so they take groups.
  const auto claim_wanted = [&](int room) {
    const bool slots = room > 0 && (room >= batch / 2 || in_flight.empty());
    return woken || (slots && (backlog || freed));
  };
  // Sends what a claim (made with `room` slots free) took; tasks past their age limit go to
  // `done` without an attempt.
  const auto send = [&](std::vector<ClaimedTask>& claimed, int room) {
    // Anything claimed: more may be due (a claim stops at the room left and at each endpoint's
    // share), so claim again as slots free up; a full claim also brings in a peer.
    backlog = !claimed.empty();
    if (static_cast<int>(claimed.size()) == room) wake();
    std::vector<const ClaimedTask*> sending;
    std::vector<DeliveryAttempt> attempts;
    const std::string owner = claimed.empty() ? std::string() : claimed.front().lease_owner;
    std::vector<DeliveryRequest> requests =
        prepare(claimed, owner, clock_.now_ms(), sending, attempts, done);
    for (std::size_t i = 0; i < requests.size(); ++i) {
      const DeliveryChannel::Ticket ticket = channel->submit(std::move(requests[i]));
      ++held[sending[i]->task.endpoint_id];
      in_flight.emplace(ticket, InFlight{*sending[i], std::move(attempts[i])});
    }
  };
  for (;;) {
    bool stopping = false;
    {
      std::lock_guard lock(mutex_);
      stopping = stopping_;
      if (wake_seq_ != seen) {
        seen = wake_seq_;
        woken = true;
        // With every slot in flight this worker cannot claim soon: the next wake() signals
        // another worker.
        if (static_cast<int>(in_flight.size()) >= batch) claim_promised_ = false;
      }
    }
    if (stopping && in_flight.empty() && done.empty()) break;
    Steady::time_point now = Steady::now();
    const int room = batch - static_cast<int>(in_flight.size());
    const bool claim_due =
        now >= next_claim || (now >= last_claim + options_.claim_spacing && claim_wanted(room));
    if (!stopping && room > 0 && claim_due) {
      woken = false;
      freed = false;
      last_claim = now;
      next_claim = now + options_.poll_interval;
      std::vector<ClaimedTask> claimed;
      try {
        claimed = claim(room, limits);
      } catch (const std::exception& e) {
        log_event(spdlog::level::err, {{"event", "dispatch_failed"}, {"error", e.what()}});
      }
      send(claimed, room);
      now = Steady::now();
    }
    if (!done.empty() && record_by == Steady::time_point::max()) {
      record_by = now + options_.record_delay;
    }
    // When the next claim may run: after the spacing when one is wanted, else at the poll
    // interval.
    const int free_slots = batch - static_cast<int>(in_flight.size());
    const Steady::time_point claim_at =
        !stopping && free_slots > 0 && claim_wanted(free_slots)
            ? std::min(next_claim, last_claim + options_.claim_spacing)
            : next_claim;
    if (!in_flight.empty()) {
      const Steady::time_point until = std::min(claim_at, record_by);
      const auto wait =
          std::max(std::chrono::milliseconds(0),
                   std::chrono::duration_cast<std::chrono::milliseconds>(until - now));
      for (DeliveryChannel::Completion& c : channel->poll(wait)) {
        auto it = in_flight.find(c.ticket);
        if (it == in_flight.end()) continue;
        if (--held[it->second.task.task.endpoint_id] == 0)
          held.erase(it->second.task.task.endpoint_id);
        done.push_back(settle(it->second.task, std::move(it->second.attempt), std::move(c.result)));
        in_flight.erase(it);
        freed = true;
      }
      if (!done.empty() && record_by == Steady::time_point::max()) {
        record_by = Steady::now() + options_.record_delay;
      }
    } else if (done.empty()) {
      std::unique_lock lock(mutex_);
      wake_cv_.wait_until(lock, claim_at, [&] { return stopping_ || wake_seq_ != seen; });
      continue;
    }
    const bool record_now =
        !done.empty() && (in_flight.empty() || stopping ||
                          static_cast<int>(done.size()) >= batch / 2 || Steady::now() >= record_by);
    if (!record_now) continue;
    for (const Settlement& r : done) {
      // A FIFO sequence moved on: its next task is due now.
      if (r.sequence_key && r.next != Settlement::Next::retry) woken = true;
    }
    // Record, and claim in the same transaction when a claim is wanted now: one commit.
    const int room_left = batch - static_cast<int>(in_flight.size());
    const Steady::time_point now_after = Steady::now();
    const bool claim_too = !stopping && room_left > 0 &&
                           now_after >= last_claim + options_.claim_spacing &&
                           claim_wanted(room_left);
    std::vector<Settlement> recording;
    recording.swap(done);
    record_by = Steady::time_point::max();
    try {
      if (claim_too) {
        woken = false;
        freed = false;
        last_claim = now_after;
        next_claim = now_after + options_.poll_interval;
        std::vector<ClaimedTask> claimed = record_and_claim(recording, room_left, limits);
        send(claimed, room_left);
      } else {
        record_settled(recording);
      }
    } catch (const std::exception& e) {
      log_event(spdlog::level::err, {{"event", "dispatch_failed"}, {"error", e.what()}});
    }
  }
  std::lock_guard lock(mutex_);
  std::erase(channels_, channel.get());
}

}  // namespace webhooks::publisher
