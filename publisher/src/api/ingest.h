// Accepting events: the in-process library call and the handler of `POST /v1/events`.
//
//   Ingest ingest(store, clock, metrics);
//   auto accepted = ingest.publish("m_1", "order.captured", R"({"order_id":"o_1"})");
//   // accepted.event_id, accepted.tasks
//
// An event and its delivery tasks (one per enabled endpoint of the same merchant whose filter
// matches the type) are written in one transaction. Over HTTP the ingest runs at most once per
// (merchant_id, Idempotency-Key): a retried ingest answers the same 202 with the same event_id
// and makes no second event. Thread-safe.
//
// One commit per group of ingests: over HTTP each ingest's idempotency record, event and tasks
// are one caller's work in the guard's group commit (idempotency::Guard::run_in_transaction,
// idempotency/group_commit.h): concurrent ingests share one transaction, each in its own
// savepoint, the record is inserted already completed with the 202, and nobody is answered before
// the transaction holding their event has committed.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ops/metrics.h"
#include "webhooks/clock.h"
#include "webhooks/db.h"
#include "webhooks/idempotency/guard.h"
#include "webhooks/json_body.h"
#include "webhooks/publisher/store.h"
#include "webhooks/uuid.h"

namespace webhooks::publisher {

struct Accepted {
  std::string event_id;
  int tasks = 0;
};

// What an event carries besides its data: its FIFO ordering key and W3C trace context
// (trace_context.h). All optional.
struct EventContext {
  // 1..255 bytes without control characters; empty: none (model.h, Event::ordering_key).
  std::string ordering_key;
  // A traceparent to continue; empty or invalid: the publisher starts a new trace (W3C Trace
  // Context: a receiver of an invalid traceparent restarts the trace).
  std::string traceparent;
  // Kept only with a valid traceparent, and when valid_tracestate() accepts it.
  std::string tracestate;
};

// A validated ingest body: {"merchant_id": non-empty string without NUL, "type": 1..255 printable
// ASCII without spaces, "data": object, "ordering_key": optional string (EventContext)}. Other
// members are ignored.
struct EventInput {
  std::string merchant_id;
  std::string type;
  std::string data;  // the `data` object as compact JSON text: key order and number tokens kept
  std::string idempotency_key;  // kept with the event (Event::idempotency_key); may be empty
  EventContext context;
};

// Empty when `key` may be an ordering key (1..255 bytes, no control characters); else why not.
std::string check_ordering_key(std::string_view key);

// Validates an ingest body read by read_json_body (json_body.h; parse_json's limits: nesting at
// most 128 deep, strict UTF-8), moving its strings out. On failure returns std::nullopt and sets
// `error_code` ("invalid_json" for a body that is not an object, else "invalid_request") and
// `message`.
std::optional<EventInput> parse_event_input(JsonBody& body, std::string& error_code,
                                            std::string& message);

class Ingest {
 public:
  // All must outlive the Ingest. `on_accepted` (optional) is called after each commit that made
  // an event with tasks, e.g. to wake the dispatcher.
  Ingest(Store& store, const Clock& clock, Metrics& metrics,
         std::function<void()> on_accepted = {});

  // Writes the event and its tasks in one new transaction. `data_json` must be a JSON object
  // nested at most 127 deep (json_parse.h); it is stored compact with its number tokens as written.
  // Throws Error(invalid_argument) for bad input, Error(storage) when the database fails.
  // `context`: the event's ordering key and trace context (EventContext); a bad ordering key
  // throws Error(invalid_argument) too.
  Accepted publish(std::string_view merchant_id, std::string_view type, std::string_view data_json,
                   const EventContext& context = {});
  // The same inside the caller's transaction (e.g. together with an idempotency record).
  // REQUIRES: validated input. The caller calls notify() after the commit.
  Accepted publish(db::Transaction& tx, const EventInput& input);
  void notify() const;

  // POST /v1/events: validates the body, then runs the ingest with the idempotency record of
  // (merchant_id, key) in `guard`'s store, in one grouped commit (above), with the guard's
  // answers (answers.h): 202 {"event_id","tasks"}; 400 invalid_json / invalid_request; 400
  // idempotency_key_missing / idempotency_key_invalid; the stored answer with
  // `Idempotent-Replayed: true` for a replay; 409 idempotency_key_in_use (with Retry-After) while
  // another caller holds the key; 422 idempotency_key_reused for another body; 503
  // storage_unavailable (Retry-After: 1) when the database fails (nothing was written).
  // `traceparent` / `tracestate`: the request's W3C headers (EventContext), not part of the
  // request's fingerprint. A bad "ordering_key" answers 400 invalid_request.
  idempotency::Response handle(idempotency::Guard& guard,
                               std::optional<std::string_view> idempotency_key,
                               std::string_view body, std::string_view traceparent = {},
                               std::string_view tracestate = {});

 private:
  Store& store_;
  const Clock& clock_;
  Metrics& metrics_;
  std::function<void()> on_accepted_;
  UuidV7Generator ids_;
};

}  // namespace webhooks::publisher
