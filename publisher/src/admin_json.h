// JSON views of the model for the admin API, and small request helpers.
#pragma once

#include <httplib.h>

#include <nlohmann/json.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "webhooks/publisher/model.h"

namespace webhooks::publisher::detail {

// The endpoint without its secrets' values (each secret as {"created_at","expires_at"}).
nlohmann::json endpoint_json(const Endpoint& endpoint);
// {"event_id","merchant_id","type","created_at","data"}.
nlohmann::json event_json(const Event& event);
nlohmann::json task_json(const Task& task);
nlohmann::json attempt_json(const DeliveryAttempt& attempt);

void answer(httplib::Response& res, int status, const nlohmann::json& body);
void fail(httplib::Response& res, int status, std::string_view code, std::string_view message);
// `text` as an integer in [min, max] when it is nothing but decimal digits (no sign, space,
// exponent, fraction or trailing text); std::nullopt otherwise. For numeric query parameters.
std::optional<std::int64_t> parse_decimal(std::string_view text, std::int64_t min, std::int64_t max);
// The body as a JSON object (an empty body is {}); std::nullopt after answering 400 invalid_json.
std::optional<nlohmann::json> json_body(const httplib::Request& req, httplib::Response& res);

}  // namespace webhooks::publisher::detail
