// GET /v1/idempotency-keys/{key}: what orders-api knows of one of the caller's idempotency keys
// (docs/orders-api.md, "Idempotency keys"). Scoped to the merchant of the API key: another
// merchant's key, an unknown or an expired one is 404 not_found.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "http.h"
#include "webhooks/idempotency/store.h"

namespace webhooks::orders {

// The idempotency scope of a merchant's requests to orders-api: "orders-api:<merchant>"
// (idempotency::component_scope), so the publisher's ingest on the same database keeps its own
// keys. Every record orders-api begins, finds or lists is under it.
inline std::string merchant_scope(std::string_view merchant) {
  return idempotency::component_scope("orders-api", merchant);
}

// The record as the API shows it: key, state, route, fingerprint, attempts, status (null when
// none), created_at, updated_at, expires_at (RFC 3339, UTC, milliseconds), resource_id (null when
// none), replays, conflicts (409s), mismatches (422s).
nlohmann::json key_json(const idempotency::RecordView& view);

// The answer to GET /v1/idempotency-keys/{key} for `merchant` at `now` (Unix ms): 200 with
// key_json, or 404 not_found. Throws Error(storage) when the database fails.
Response lookup_key(idempotency::Store& store, std::string_view merchant, std::string_view key,
                    UnixMillis now);

}  // namespace webhooks::orders
