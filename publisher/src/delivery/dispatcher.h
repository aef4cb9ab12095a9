// The delivery workers: claim due tasks in batches with a lease, sign and send each one, record
// every attempt, and move each task to succeeded, a later retry, or dead (docs/operations.md,
// "What happens to a delivery"; docs/publisher-delivery.md).
//
//   Dispatcher dispatcher(store, transport, policy, clock, random, metrics, options);
//   dispatcher.start();          // options.workers threads
//   ...
//   dispatcher.stop();           // stop claiming, finish in-flight attempts, join
//
// Tests drive it without threads: `run_once()` claims one batch, delivers it and records it, with
// every time (lease, dispatch timestamp, backoff, age limit) taken from the injected Clock and the
// jitter from the injected RandomSource.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "delivery/http_delivery.h"
#include "delivery/retry_after.h"
#include "ops/metrics.h"
#include "webhooks/backoff.h"
#include "webhooks/clock.h"
#include "webhooks/publisher/retry_policy.h"
#include "webhooks/publisher/store.h"
#include "webhooks/random.h"
#include "webhooks/signer.h"
#include "webhooks/uuid.h"

namespace webhooks::publisher {

// One attempt's shapes, in order: the ClaimedTask (store.h) becomes a DeliveryRequest (signed,
// as it goes on the wire: build_delivery), the transport answers a DeliveryResult (status, or a
// typed TransportError with its message; http_delivery.h), and the two become the recorded
// DeliveryAttempt (model.h), written back inside a Settlement (store.h) with the task's next
// state.

// One worker's own way to the transport: requests submitted one by one, their results collected
// as they finish, in any order (the pipeline of Dispatcher::start()). One thread at a time may
// call submit and poll; wakeup() may be called from any thread.
class DeliveryChannel {
 public:
  using Ticket = std::uint64_t;
  struct Completion {
    Ticket ticket;
    DeliveryResult result;
  };
  virtual ~DeliveryChannel() = default;
  // Queues a request; never blocks. Returns its ticket, unique on this channel.
  virtual Ticket submit(DeliveryRequest request) = 0;
  // Waits up to `wait` (milliseconds) for finished requests, returning as soon as one has
  // finished (with all finished by then), when nothing is in flight, or on wakeup(). Each ticket
  // is returned exactly once; may return none.
  virtual std::vector<Completion> poll(std::chrono::milliseconds wait) = 0;
  // Makes a waiting poll(), or the next one, return at once.
  virtual void wakeup() = 0;
};

// Sends webhook requests. Must never follow redirects. Thread-safe: several workers use it at
// once.
class Transport {
 public:
  virtual ~Transport() = default;
  // Sends a batch concurrently and returns one result per request, in order (run_once()).
  virtual std::vector<DeliveryResult> send(const std::vector<DeliveryRequest>& batch) = 0;
  // A new channel for one worker (its own connections).
  virtual std::unique_ptr<DeliveryChannel> open_channel() = 0;
};

// The body every attempt of `event` carries: {"id","type","timestamp" (RFC 3339 creation
// time),"data"}.
std::string event_body(const Event& event);

// The request for one attempt of `task`: DESIGN's wire format, signed at `dispatch_seconds` (Unix
// seconds) with one entry per active key (v1 for a "whsec_" secret, v1a for a "whsk_" signing key:
// endpoint_signers.h), with `delivery_id` as webhook-delivery-id. Keys that fail to parse are
// skipped (they were validated when configured).
DeliveryRequest build_delivery(const ClaimedTask& task, std::int64_t dispatch_seconds,
                               const std::string& delivery_id);

struct DispatcherOptions {
  // Prefix of every lease owner; identifies this daemon in the database. Default: a new UUIDv7.
  std::string instance_id;
  // Worker threads started by start(); each claims and sends its own batches.
  int workers = 4;
  // The most attempts a worker has in flight (and the most tasks run_once() claims). The
  // defaults here are Options' (options.h), which a Publisher passes on.
  int batch_size = 32;
  // Isolation (ClaimLimits, store.h): attempts to one endpoint in flight at once, all workers
  // and daemons together, and per worker; 0: no limit. A hanging endpoint holds at most this
  // many of the workers' slots.
  int endpoint_in_flight = 32;
  int endpoint_in_flight_per_worker = 8;
  // A worker claims at most this often when woken (each ingest wakes one), so a stream of
  // events is claimed in groups, not one transaction per event. Real time.
  std::chrono::milliseconds claim_spacing{std::chrono::milliseconds(5)};
  // Finished attempts wait at most this long (real time) to be recorded together with others;
  // half a batch, or nothing left in flight, records at once.
  std::chrono::milliseconds record_delay{std::chrono::milliseconds(10)};
  // How long a claim holds its tasks. Must exceed the transport's total timeout, or another
  // daemon may take the task over while it is still being sent. Default 2 min.
  std::chrono::milliseconds lease{std::chrono::minutes(2)};
  // Real time a worker waits when nothing was due (wake() cuts it short).
  std::chrono::milliseconds poll_interval{std::chrono::milliseconds(250)};
  // An endpoint failing continuously for this long is disabled; 0 never. Default 5 days. At half
  // of it the streak is warned about, once (log line endpoint_failing, FailingRules).
  std::chrono::milliseconds disable_after{std::chrono::hours(24 * 5)};
  // Non-empty: warnings and disables also become events of this merchant (ops_events.h).
  std::string ops_merchant_id;
  RetryAfterBounds retry_after;
  OutcomeRules outcome_rules;
  // Writing a batch's attempts back (Store::record) after they were sent is retried until it is
  // stored, waiting `record_retry_first`, then twice as long each time up to `record_retry_max`;
  // each failure is logged (`record_retry`). Once stop() was called it goes on for at most
  // `record_retry_after_stop` more, then gives up and logs `attempt_records_lost` (the tasks are
  // delivered again when their lease lapses).
  std::chrono::milliseconds record_retry_first{std::chrono::milliseconds(50)};
  std::chrono::milliseconds record_retry_max{std::chrono::seconds(5)};
  std::chrono::milliseconds record_retry_after_stop{std::chrono::seconds(10)};
};

class Dispatcher {
 public:
  // All references must outlive the Dispatcher.
  Dispatcher(Store& store, Transport& transport, const RetryPolicy& policy, const Clock& clock,
             RandomSource& random, Metrics& metrics, DispatcherOptions options = {});
  ~Dispatcher();  // stop()
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  // Claims one batch of due tasks, delivers and records it. Returns how many tasks it settled
  // (0: nothing was due). Throws Error(storage) when the claim fails (after trying to release
  // what it may have claimed all the same, its COMMIT's answer lost), or when recording failed
  // until it gave up (DispatcherOptions::record_retry_after_stop). A database failure while
  // recording is retried: the attempts were sent, so their records must not be lost.
  int run_once();
  // Runs run_once until nothing is due; returns the total. For tests.
  int run_until_idle();

  // Starts the worker threads. Unlike run_once(), a worker does not wait for a whole batch: it
  // keeps up to batch_size attempts in flight, claims as slots free up, and records attempts as
  // they finish (a group per transaction), so one endpoint's slow answers hold only its share.
  void start();
  // Wakes idle workers (new events, replays). Thread-safe. Call it after the new tasks are
  // committed: it signals one worker, unless one was signalled and has not started its claim yet
  // (that claim will see the tasks).
  void wake();
  // Stops claiming, lets in-flight batches finish and be recorded, joins the workers.
  void stop();

  const std::string& instance_id() const { return options_.instance_id; }

 private:
  void work();
  // "<instance_id>/<n>": a lease owner no claim used before.
  std::string next_lease_owner();
  // A claim of up to `limit` tasks under a new lease owner; after a storage failure, puts back
  // what it may have claimed (release_after_failed_claim) and rethrows.
  std::vector<ClaimedTask> claim(int limit, const ClaimLimits& limits);
  // Called as a claim starts (before its transaction): the next wake() signals a worker again.
  void claim_starts();
  // The FailingRules at `now` (DispatcherOptions::disable_after, ops_merchant_id).
  FailingRules failing_rules(UnixMillis now) const;
  // record_until_stored with this moment's FailingRules. False when it gave up.
  bool record_settled(const std::vector<Settlement>& records);
  // Records `records` and claims up to `limit` tasks in one transaction (Store::record_and_claim);
  // after a storage failure, releases what the claim may hold and records alone with
  // record_settled's retries (then claims nothing). Throws Error(storage) when that gave up.
  std::vector<ClaimedTask> record_and_claim(const std::vector<Settlement>& records, int limit,
                                            const ClaimLimits& limits);
  // Store::record, retried as DispatcherOptions describes. False when it gave up.
  bool record_until_stored(const std::vector<Settlement>& records, UnixMillis done,
                           const FailingRules& rules);
  // Logs what Store::record changed in endpoints (endpoint_failing, endpoint_disabled).
  void log_health(const RecordedHealth& health) const;
  // After a failed claim: puts back what `owner` may hold, tried up to 5 times with backoff,
  // never past the lease (then the tasks are claimable anyway) nor after stop().
  void release_after_failed_claim(const std::string& owner,
                                  std::chrono::steady_clock::time_point lease_end);
  // Waits `delay` or until stop() is called. False when stopping.
  bool pause(std::chrono::milliseconds delay);
  // The waits between tries of a record or a release: record_retry_first, doubled each time up to
  // record_retry_max.
  Backoff record_backoff() const {
    return {.first = options_.record_retry_first, .max = options_.record_retry_max};
  }
  // The requests for `claimed`, with their attempts in `attempts` (same order); a task past its
  // age limit is settled dead at once, into `settled`, without a request.
  std::vector<DeliveryRequest> prepare(const std::vector<ClaimedTask>& claimed,
                                       const std::string& owner, UnixMillis now,
                                       std::vector<const ClaimedTask*>& sending,
                                       std::vector<DeliveryAttempt>& attempts,
                                       std::vector<Settlement>& settled);
  Settlement settle(const ClaimedTask& task, DeliveryAttempt attempt, DeliveryResult result);

  Store& store_;
  Transport& transport_;
  const RetryPolicy& policy_;
  const Clock& clock_;
  RandomSource& random_;
  Metrics& metrics_;
  DispatcherOptions options_;
  UuidV7Generator ids_;
  std::atomic<std::uint64_t> batch_seq_{0};
  std::mutex mutex_;
  std::condition_variable wake_cv_;
  std::condition_variable stop_cv_;  // notified by stop(): cuts short a retry's pause
  std::uint64_t wake_seq_ = 0;
  // A wake() was signalled and no claim has started since: a claim to come will see whatever
  // the callers of wake() committed before it, so further wakes need no signal (without this,
  // each ingested event woke a worker that was only waiting for claim_spacing to pass).
  bool claim_promised_ = false;
  std::vector<DeliveryChannel*> channels_;  // the running workers' channels
  std::size_t wake_turn_ = 0;               // the channel the next wake() wakes
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace webhooks::publisher
