// Writing an event into the outbox: one row of the `outbox` table (schema/outbox/, migrated with
// outbox::schema()), inserted in the same transaction as the change the event describes, so the
// event exists if and only if the change committed. The relay (relay.h) posts it later.
#pragma once

#include <string>
#include <string_view>

#include "webhooks/clock.h"
#include "webhooks/db.h"
#include "webhooks/uuid.h"

namespace webhooks::outbox {

// Inserts an outbox row inside the caller's transaction `tx`: `payload_json` (a JSON object, the
// event's `data`, stored as given) for `merchant_id`, of type `event_type` (e.g. "order.created"),
// due at once. Returns the row id (a UUIDv7 from `ids`), which becomes the ingest's
// Idempotency-Key. `now` is Unix ms. Throws Error(storage) when the insert fails (the caller's
// transaction then rolls back).
std::string enqueue(db::Transaction& tx, UuidV7Generator& ids, std::string_view merchant_id,
                    std::string_view event_type, std::string_view payload_json, UnixMillis now);

// What a row carries besides its data, each empty for none: the event's FIFO ordering key (posted
// as "ordering_key"; the relay posts a key's rows in the order they were enqueued) and a W3C
// traceparent / tracestate (posted as those headers; the publisher continues the trace).
struct EventContext {
  std::string ordering_key;
  std::string traceparent;
  std::string tracestate;
};

// enqueue() with `context`.
std::string enqueue(db::Transaction& tx, UuidV7Generator& ids, std::string_view merchant_id,
                    std::string_view event_type, std::string_view payload_json, UnixMillis now,
                    const EventContext& context);

}  // namespace webhooks::outbox
