// The outbox's table: the migrations component "outbox" (schema/outbox/), which creates `outbox`
// and nothing else. An application with an outbox migrates it beside its other components:
//   db.migrate({idempotency::schema(), outbox::schema()}, clock.now_ms());
#pragma once

#include "webhooks/db.h"

namespace webhooks::outbox {

// The component, its migrations compiled in (cmake/EmbedSchema.cmake). Throws nothing.
const db::Component& schema();

}  // namespace webhooks::outbox
