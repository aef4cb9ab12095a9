#include "ops/ops_events.h"

#include <nlohmann/json.hpp>

#include "ops/ops_notice.h"
#include "store/store_sql.h"
#include "webhooks/error.h"
#include "webhooks/publisher/store.h"
#include "webhooks/rfc3339.h"

namespace webhooks::publisher {
namespace detail {

OpsNotice ops_notice(db::Transaction& tx, const std::string& endpoint_id) {
  OpsNotice notice;
  notice.endpoint_id = endpoint_id;
  const db::Rows rows = tx.exec(sql::kSelectEndpointHealth, {endpoint_id});
  if (rows.empty()) return notice;
  notice.merchant_id = rows.text(0, 0);
  notice.url = rows.text(0, 1);
  if (!rows.is_null(0, 2)) notice.failing_since = rows.integer(0, 2);
  return notice;
}

void insert_ops_event(Store& store, db::Transaction& tx, const std::string& ops_merchant_id,
                      std::string_view type, const OpsNotice& notice, std::string_view reason,
                      UnixMillis now) {
  if (ops_merchant_id.empty() || notice.merchant_id == ops_merchant_id) return;
  const nlohmann::json data = {
      {"endpoint_id", notice.endpoint_id},
      {"merchant_id", notice.merchant_id},
      {"url", notice.url},
      {"failing_since", notice.failing_since > 0
                            ? nlohmann::json(format_rfc3339(notice.failing_since))
                            : nlohmann::json()},
      {"reason", reason}};
  Event event;
  event.event_id =
      "ops." + std::string(type) + "." + notice.endpoint_id + "." + std::to_string(now);
  event.merchant_id = ops_merchant_id;
  event.type = type;
  event.payload = data.dump();
  event.created_at = now;
  store.insert_event(tx, event, now);
}

}  // namespace detail

void configure_ops_endpoint(Store& store, const std::string& url, const std::string& secret,
                            UnixMillis now) {
  const std::string id(kOpsEndpointId);
  std::optional<Endpoint> existing = store.find_endpoint(id);
  if (!existing) {
    Endpoint e;
    e.id = id;
    e.merchant_id = kOpsMerchantId;
    e.url = url;
    e.description = "operational webhook (--ops-url)";
    e.secrets.push_back({secret, now, std::nullopt});
    e.created_at = e.updated_at = now;
    try {
      store.create_endpoint(e);
      return;
    } catch (const Error&) {
      existing = store.find_endpoint(id);  // another daemon created it first
      if (!existing) throw;
    }
  }
  if (existing->url != url) {
    existing->url = url;
    store.update_endpoint(*existing, now);
  }
  if (existing->secrets.empty() || existing->secrets.front().secret != secret) {
    store.rotate_secret(id, secret, now, now);
  }
  if (!existing->enabled) store.set_enabled(id, true, "", now);
}

}  // namespace webhooks::publisher
