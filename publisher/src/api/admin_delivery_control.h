// The delivery-control fields of POST /v1/endpoints and PATCH /v1/endpoints/{id}
// (docs/operations.md, "Admin API"): rate_limit, ordering, headers, auth, client_certificate and
// client_key.
#pragma once

#include <httplib.h>

#include <nlohmann/json.hpp>
#include <string>

#include "webhooks/publisher/model.h"

namespace webhooks::publisher::detail {

// Reads each field present in `body` into `control` (absent fields keep their value; null clears
// one: no rate limit, no auth, no client certificate; "headers" replaces the whole set). `url`
// is the endpoint's URL after the change (a client certificate needs https://). False after
// answering 400 invalid_request naming the field.
bool read_delivery_control(const nlohmann::json& body, const std::string& url,
                           DeliveryControl& control, httplib::Response& res);

// The fields as the admin API shows them: "rate_limit" (null: unlimited), "ordering", "headers"
// (an object), "auth" ({"type"} without the credential, or null), "client_certificate" (PEM or
// null; the key is never shown).
nlohmann::json delivery_control_json(const DeliveryControl& control);

}  // namespace webhooks::publisher::detail
