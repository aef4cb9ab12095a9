// JSON views of the model for the admin API, and small request helpers.
#pragma once

#include <httplib.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "webhooks/publisher/model.h"

namespace webhooks::publisher::detail {

// The endpoint with its "signing" scheme and without its keys' values: each key as
// {"scheme": "v1"|"v1a","created_at","expires_at"}, a v1a key with its "public_key" ("whpk_…").
nlohmann::json endpoint_json(const Endpoint& endpoint);
// Event data inside an admin answer exactly as stored, number tokens byte for byte (a tree would
// print 36893488147419103233 as 3.6893488147419103e+19): hold() gives a placeholder string with a
// random 128-bit tag, and splice() swaps each placeholder in the dumped answer for its text.
class RawJson {
 public:
  RawJson();
  nlohmann::json hold(std::string text);
  std::string splice(const std::string& dumped) const;

 private:
  std::string marker_;  // the dumped placeholder's start: "\u0001<tag>:
  std::vector<std::string> texts_;
};

// {"event_id","merchant_id","type","created_at","idempotency_key" (null when none),"data"}; data
// held in `raw`.
nlohmann::json event_json(const Event& event, RawJson& raw);
nlohmann::json task_json(const Task& task);
nlohmann::json attempt_json(const DeliveryAttempt& attempt);

// Dumps `body` (invalid UTF-8 replaced), splicing in what `raw` holds.
void answer(httplib::Response& res, int status, const nlohmann::json& body,
            const RawJson* raw = nullptr);
void fail(httplib::Response& res, int status, std::string_view code, std::string_view message);
// `text` as an integer in [min, max] when it is nothing but decimal digits (no sign, space,
// exponent, fraction or trailing text); std::nullopt otherwise. For numeric query parameters.
std::optional<std::int64_t> parse_decimal(std::string_view text, std::int64_t min,
                                          std::int64_t max);
// The query parameter `name` as an RFC 3339 time into `out` (kept when absent); false after
// answering 400 invalid_request "NAME must be an RFC 3339 time".
bool time_param(const httplib::Request& req, const char* name, std::optional<UnixMillis>& out,
                httplib::Response& res);
// The query parameter `limit` (one, 1 to 1000, decimal digits only) into `out` (kept when
// absent); false after answering 400 invalid_request.
bool limit_param(const httplib::Request& req, int& out, httplib::Response& res);
// The body as a JSON object (an empty body is {}); std::nullopt after answering 400 invalid_json
// with the parser's reason (json_parse.h: nesting limit, invalid UTF-8) or "the body must be a JSON
// object".
std::optional<nlohmann::json> json_body(const httplib::Request& req, httplib::Response& res);
// The body's "since" (RFC 3339) as Unix ms, for recover and replay-missing; std::nullopt after
// answering 400 (json_body's, or invalid_request when "since" is missing or not an RFC 3339 time).
std::optional<UnixMillis> since_field(const httplib::Request& req, httplib::Response& res);

}  // namespace webhooks::publisher::detail
