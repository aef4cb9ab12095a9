// orders-api's migrated tables: the migrations component "orders_api" (schema/orders_api/), which
// creates `reconciliations` (`orders-api reconcile --resolve`). orders and payouts predate it and
// are created by prepare_database (storage.h).
#pragma once

#include "webhooks/db.h"

namespace webhooks::orders {

// The component, its migrations compiled in (cmake/EmbedSchema.cmake). Throws nothing.
const db::Component& schema();

}  // namespace webhooks::orders
