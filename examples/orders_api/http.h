// Small pieces every orders-api route shares: JSON answers, request validation, time format.
#pragma once

#include <httplib.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "webhooks/clock.h"
#include "webhooks/idempotency/http.h"
#include "webhooks/idempotency/store.h"

namespace webhooks::orders {

using idempotency::error_response;  // `{"error":{"code","message"}}`
using idempotency::Response;
using idempotency::write;  // a Response into httplib's `res` as application/json, body moved

// An answer with a JSON body; `headers` are stored with it when it is an idempotent answer.
Response json_response(int status, const nlohmann::json& body);

// RFC 3339 in UTC with milliseconds, e.g. "2024-05-01T12:00:00.123Z".
std::string rfc3339(UnixMillis ms);

// Validation of request bodies. Each returns the value, or std::nullopt after setting `error`
// to a message naming the field.
//
// An amount is an integer number of minor units > 0. Numbers are read as the fingerprint reads
// them (RFC 8785): 1000, 1000.0 and 1e3 are one number, so an integral float up to 2^53 counts.
std::optional<std::int64_t> read_amount(const nlohmann::json& body, std::string& error);
// A currency is three uppercase ASCII letters (ISO 4217 form; the code itself is not checked).
std::optional<std::string> read_currency(const nlohmann::json& body, std::string& error);
// A non-empty string of at most 255 bytes.
std::optional<std::string> read_text(const nlohmann::json& body, const char* field,
                                     std::string& error);

// The body as a JSON object, or the 400 answer for a body that is not one.
std::optional<nlohmann::json> parse_object(std::string_view body, Response& error);

}  // namespace webhooks::orders
