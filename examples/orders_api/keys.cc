#include "keys.h"

namespace webhooks::orders {

nlohmann::json key_json(const idempotency::RecordView& view) {
  nlohmann::json out = {{"key", view.key},
                        {"state", idempotency::to_string(view.state)},
                        {"route", nullptr},
                        {"fingerprint", view.fingerprint},
                        {"attempts", view.attempts},
                        {"status", nullptr},
                        {"created_at", rfc3339(view.created_at)},
                        {"updated_at", rfc3339(view.updated_at)},
                        {"expires_at", rfc3339(view.expires_at)},
                        {"resource_id", nullptr},
                        {"replays", view.replays},
                        {"conflicts", view.conflicts},
                        {"mismatches", view.mismatches}};
  if (!view.route.empty()) out["route"] = view.route;
  if (view.status) out["status"] = *view.status;
  if (view.resource_id) out["resource_id"] = *view.resource_id;
  return out;
}

Response lookup_key(idempotency::Store& store, std::string_view merchant, std::string_view key,
                    UnixMillis now) {
  const std::optional<idempotency::RecordView> view =
      store.lookup(merchant_scope(merchant), key, now);
  if (!view) {
    return error_response(404, "not_found",
                          "no idempotency key with this name for this API key (unknown, expired "
                          "or another merchant's)");
  }
  return json_response(200, key_json(*view));
}

}  // namespace webhooks::orders
