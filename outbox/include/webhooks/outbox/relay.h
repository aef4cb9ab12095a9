// The outbox relay: posts every unsent row of the `outbox` table (written by outbox::enqueue,
// enqueue.h) to the publisher's `POST /v1/events` with `Idempotency-Key` = the row's id, and marks
// it sent only after a 2xx (202, or a replay of one). A row is therefore relayed at least once, and
// the publisher's idempotency guard turns every repeat — a relay killed after posting, two relays
// on one database — into the same event. The client is cpp-httplib's (no libcurl, nothing of the
// publisher's delivery code). Source: docs/outbox.md; docs/orders-api.md (the orders API runs one).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "webhooks/clock.h"
#include "webhooks/db.h"
#include "webhooks/periodic_task.h"
#include "webhooks/random.h"

namespace webhooks::outbox {

struct RelayOptions {
  // The publisher's base URL, e.g. "http://127.0.0.1:8780". Required.
  std::string publisher_url;
  // Bearer token for the publisher's API (its --admin-token). Empty: no Authorization header.
  std::string publisher_token;
  // Rows read per pass.
  int batch_size = 100;
  // How long the background thread waits between passes when nothing is due (real time).
  std::chrono::milliseconds poll_interval{200};
  // Backoff after a failed post: min(initial * 2^(attempts-1), max), with ±20 % jitter.
  std::chrono::milliseconds initial_backoff{500};
  std::chrono::milliseconds max_backoff{std::chrono::minutes(5)};
  // Connect and read timeouts of each post.
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(2)};
  std::chrono::milliseconds read_timeout{std::chrono::seconds(10)};
  // Sent rows are deleted once sent longer ago than this (purge_sent); 0: kept forever. Default
  // 7 days (the publisher keeps the events themselves, under its own --retention).
  std::chrono::milliseconds sent_retention{std::chrono::hours(24 * 7)};
  // Rows deleted per transaction, and how often (clock time) the background thread purges.
  int purge_batch = 500;
  std::chrono::milliseconds purge_interval{std::chrono::minutes(1)};
};

class Relay {
 public:
  // `db` holds the outbox table (outbox::schema() migrated). `clock` decides backoff and
  // `sent_at`; `random` the jitter. All must outlive the relay. Throws Error(invalid_argument) for
  // an unusable URL.
  Relay(std::shared_ptr<db::Database> db, const Clock& clock, RandomSource& random,
        RelayOptions options);
  ~Relay();  // stops the background thread if started
  Relay(const Relay&) = delete;
  Relay& operator=(const Relay&) = delete;

  struct PassResult {
    int sent = 0;    // rows the publisher accepted (now marked sent)
    int failed = 0;  // rows whose post failed (rescheduled with backoff)
  };
  // One pass over the rows due now, in creation order. Database errors throw Error(storage);
  // a failed post never throws (the row is rescheduled and the error recorded in last_error).
  PassResult relay_once();

  // Deletes rows sent before now - sent_retention, purge_batch rows per transaction until none is
  // left; returns how many. Unsent rows are never deleted. Logs {"event":"outbox_purged",
  // "rows":N} when it deleted some. Throws Error(storage).
  std::int64_t purge_sent();

  // Runs relay_once (and purge_sent every purge_interval) in a background thread until stop() or
  // destruction; errors are logged.
  void start();
  void stop();

 private:
  // The thread's step: one pass, a purge when due; the wait until the next pass (none while
  // rows go out, poll_interval once a pass sent nothing or had a failure).
  std::chrono::milliseconds pass();

  struct Impl;
  std::unique_ptr<Impl> impl_;
  UnixMillis next_purge_ = 0;  // the thread's only: the first pass purges
  PeriodicTask task_;          // pass()
};

}  // namespace webhooks::outbox
