#include "http.h"

#include <cmath>
#include <ctime>
#include <limits>

#include "webhooks/error.h"
#include "webhooks/http_server.h"
#include "webhooks/idempotency/guard.h"
#include "webhooks/json_parse.h"

namespace webhooks::orders {

Response json_response(int status, const nlohmann::json& body) {
  return Response{status, {}, body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)};
}

Response error_response(int status, std::string_view code, std::string_view message) {
  return Response{status, {}, idempotency::error_body(code, message)};
}

void write(Response response, httplib::Response& res) {
  res.status = response.status;
  for (const auto& [name, value] : response.headers) res.set_header(name, value);
  http::set_json_body(res, std::move(response.body));
}

std::string rfc3339(UnixMillis ms) {
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[40];
  const std::size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(text + n, sizeof text - n, ".%03dZ", static_cast<int>(ms % 1000));
  return text;
}

std::optional<std::int64_t> read_amount(const nlohmann::json& body, std::string& error) {
  error =
      "amount must be an exact integer number of minor units from 1 to 9223372036854775807 "
      "(written with a fraction or an exponent, at most 9007199254740992)";
  const auto it = body.find("amount");
  if (it == body.end()) return std::nullopt;
  if (it->is_number_unsigned()) {
    const auto value = it->get<std::uint64_t>();
    if (value == 0 ||
        value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return std::nullopt;
    }
    return static_cast<std::int64_t>(value);
  }
  if (it->is_number_integer()) {
    const auto value = it->get<std::int64_t>();
    return value > 0 ? std::optional(value) : std::nullopt;
  }
  // A float here is a number that is not exactly an integer of at most 2^53 (parse_object reads
  // 1000.0 and 1e3 as integers): 1000.00000000000001 or 9007199254740993.0, which a double would
  // silently turn into another amount. Refused, never rounded.
  return std::nullopt;
}

std::optional<std::string> read_currency(const nlohmann::json& body, std::string& error) {
  error = "currency must be three uppercase letters, e.g. \"EUR\"";
  const auto it = body.find("currency");
  if (it == body.end() || !it->is_string()) return std::nullopt;
  const std::string value = it->get<std::string>();
  if (value.size() != 3) return std::nullopt;
  for (char c : value) {
    if (c < 'A' || c > 'Z') return std::nullopt;
  }
  return value;
}

std::optional<std::string> read_text(const nlohmann::json& body, const char* field,
                                     std::string& error) {
  error = std::string(field) +
          " must be a non-empty string of at most 255 bytes without NUL characters";
  const auto it = body.find(field);
  if (it == body.end() || !it->is_string()) return std::nullopt;
  std::string value = it->get<std::string>();
  // PostgreSQL's text parameters end at a NUL: "a\u0000b" was answered 201 and stored as "a".
  if (value.empty() || value.size() > 255 || value.find('\0') != std::string::npos) {
    return std::nullopt;
  }
  return value;
}

std::optional<nlohmann::json> parse_object(std::string_view body, Response& error) {
  nlohmann::json parsed;
  try {
    parsed = parse_json(body, JsonParseOptions{.integral_floats_as_integers = true});
  } catch (const Error& e) {
    error = error_response(400, "invalid_json", e.what());
    return std::nullopt;
  }
  if (!parsed.is_object()) {
    error = error_response(400, "invalid_request", "the body must be a JSON object");
    return std::nullopt;
  }
  return parsed;
}

}  // namespace webhooks::orders
