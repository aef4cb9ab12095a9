// The idempotency core's tables: the migrations component "idempotency" (schema/idempotency/),
// which creates idempotency_records and nothing else. Every user of the core (a receiver, the
// publisher's ingest, orders-api) migrates it:
//   db.migrate({idempotency::schema()}, clock.now_ms());
#pragma once

#include "webhooks/db.h"

namespace webhooks::idempotency {

// The component, its migrations compiled in (cmake/EmbedSchema.cmake). Throws nothing.
const db::Component& schema();

}  // namespace webhooks::idempotency
