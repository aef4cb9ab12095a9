// The publisher's tables: the migrations component "publisher" (schema/publisher/), which
// creates publisher_endpoints, publisher_endpoint_secrets, publisher_events, publisher_tasks and
// publisher_attempts. The daemon migrates it with the idempotency core's (its ingest dedups on
// Idempotency-Key):
//   db.migrate({idempotency::schema(), publisher::schema()}, clock.now_ms());
#pragma once

#include "webhooks/db.h"

namespace webhooks::publisher {

// The component, its migrations compiled in (cmake/EmbedSchema.cmake). Throws nothing.
const db::Component& schema();

}  // namespace webhooks::publisher
