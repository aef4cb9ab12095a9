#include "webhooks/outbox/enqueue.h"

namespace webhooks::outbox {
namespace {

constexpr std::string_view kInsert =
    "INSERT INTO outbox (id, merchant_id, event_type, payload, created_at, next_attempt_at, "
    "ordering_key, traceparent, tracestate) VALUES ($1, $2, $3, $4, $5, $5, $6, $7, $8)";

}  // namespace

std::string enqueue(db::Transaction& tx, UuidV7Generator& ids, std::string_view merchant_id,
                    std::string_view event_type, std::string_view payload_json, UnixMillis now) {
  return enqueue(tx, ids, merchant_id, event_type, payload_json, now, EventContext{});
}

std::string enqueue(db::Transaction& tx, UuidV7Generator& ids, std::string_view merchant_id,
                    std::string_view event_type, std::string_view payload_json, UnixMillis now,
                    const EventContext& context) {
  std::string id = ids.next();
  tx.exec(kInsert,
          {id, merchant_id, event_type, payload_json, now, db::text_or_null(context.ordering_key),
           db::text_or_null(context.traceparent), db::text_or_null(context.tracestate)});
  return id;
}

}  // namespace webhooks::outbox
