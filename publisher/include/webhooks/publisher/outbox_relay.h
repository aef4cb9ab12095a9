// The transactional outbox and its relay. An application writes each event into its `outbox`
// table (schema/*/0002_outbox.sql) in the same transaction as the change the event describes
// (`enqueue`); the relay posts every unsent row to the publisher's `POST /v1/events` with
// `Idempotency-Key` = the row's id and marks it sent only after a 2xx (202, or a replay of one).
// A row is therefore relayed at least once, and the publisher's idempotency guard turns every
// repeat — a relay killed after posting, two relays on one database — into the same event.
// Source: README.md, "Running the publisher"; docs/orders-api.md (the orders API runs one).
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "webhooks/clock.h"
#include "webhooks/db.h"
#include "webhooks/random.h"
#include "webhooks/uuid.h"

namespace webhooks::publisher {

// Inserts an outbox row inside the caller's transaction `tx`: `payload_json` (a JSON object, the
// event's `data`) for `merchant_id`, of type `event_type` (e.g. "order.created"). Returns the row
// id (a UUIDv7 from `ids`), which becomes the ingest's Idempotency-Key. `now` is Unix ms.
// Throws Error(storage) when the insert fails (the caller's transaction then rolls back).
std::string enqueue_outbox_event(db::Transaction& tx, UuidV7Generator& ids,
                                 std::string_view merchant_id, std::string_view event_type,
                                 std::string_view payload_json, UnixMillis now);

struct OutboxRelayOptions {
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
};

class OutboxRelay {
 public:
  // `db` holds the outbox table (migrated). `clock` decides backoff and `sent_at`; `random` the
  // jitter. All must outlive the relay. Throws Error(invalid_argument) for an unusable URL.
  OutboxRelay(std::shared_ptr<db::Database> db, const Clock& clock, RandomSource& random,
              OutboxRelayOptions options);
  ~OutboxRelay();  // stops the background thread if started
  OutboxRelay(const OutboxRelay&) = delete;
  OutboxRelay& operator=(const OutboxRelay&) = delete;

  struct PassResult {
    int sent = 0;    // rows the publisher accepted (now marked sent)
    int failed = 0;  // rows whose post failed (rescheduled with backoff)
  };
  // One pass over the rows due now, in creation order. Database errors throw Error(storage);
  // a failed post never throws (the row is rescheduled and the error recorded in last_error).
  PassResult relay_once();

  // Runs relay_once in a background thread until stop() or destruction; errors are logged.
  void start();
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace webhooks::publisher
