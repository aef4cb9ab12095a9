// Operational events: the publisher tells the platform's operators, by webhook, about endpoints
// that are about to be disabled or were disabled (docs/operations.md, "Warnings before an
// endpoint is disabled"). They are ordinary events of a reserved merchant, kOpsMerchantId, so
// they are stored, signed, retried and recorded like any delivery; Store::record writes them in
// the transaction that warns or disables (FailingRules::ops_merchant_id), so none is lost or
// doubled. Their body is the usual {"id","type","timestamp","data"}, data:
//   {"endpoint_id","merchant_id","url","failing_since" (RFC 3339, null once cleared),"reason"}
// `reason` is the last failure ("HTTP 500", "timeout: …") for endpoint.failing, the disable
// reason ("failing continuously", "410 Gone") for endpoint.disabled.
#pragma once

#include <string>
#include <string_view>

#include "webhooks/clock.h"

namespace webhooks::publisher {

class Store;

// The merchant the ops events belong to, and the endpoint --ops-url configures for it. Other
// endpoints may be added to this merchant through the admin API: they receive the ops events too.
inline constexpr std::string_view kOpsMerchantId = "webhooks-ops";
inline constexpr std::string_view kOpsEndpointId = "ep_webhooks_ops";
// The ops event types.
inline constexpr std::string_view kOpsEndpointFailing = "endpoint.failing";
inline constexpr std::string_view kOpsEndpointDisabled = "endpoint.disabled";

// Makes the ops endpoint (kOpsEndpointId) deliver to `url`, signed with `secret` ("whsec_…"):
// creates it, or updates its URL, adds `secret` when it is not its newest (the others stop
// signing at once) and enables it. Several daemons starting together on one database may all
// call it. Throws Error(storage).
void configure_ops_endpoint(Store& store, const std::string& url, const std::string& secret,
                            UnixMillis now);

}  // namespace webhooks::publisher
