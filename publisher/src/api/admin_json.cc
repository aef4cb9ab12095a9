#include "api/admin_json.h"

#include "api/admin_delivery_control.h"
#include "delivery/endpoint_signers.h"
#include "delivery/trace_context.h"
#include "webhooks/error.h"
#include "webhooks/error_body.h"
#include "webhooks/http_server.h"
#include "webhooks/idempotency/guard.h"
#include "webhooks/json_parse.h"
#include "webhooks/random.h"
#include "webhooks/rfc3339.h"

namespace webhooks::publisher::detail {

nlohmann::json endpoint_json(const Endpoint& e) {
  nlohmann::json secrets = nlohmann::json::array();
  for (const EndpointSecret& s : e.secrets) {
    nlohmann::json entry = {
        {"scheme", s.is_v1a() ? "v1a" : "v1"},
        {"created_at", format_rfc3339(s.created_at)},
        {"expires_at",
         s.expires_at ? nlohmann::json(format_rfc3339(*s.expires_at)) : nlohmann::json()}};
    if (const auto public_key = public_key_of(s.secret)) entry["public_key"] = *public_key;
    secrets.push_back(std::move(entry));
  }
  nlohmann::json out = {
      {"id", e.id},
      {"merchant_id", e.merchant_id},
      {"url", e.url},
      {"event_types", e.event_types},
      {"description", e.description},
      {"enabled", e.enabled},
      {"disabled_reason", e.enabled ? nlohmann::json() : nlohmann::json(e.disabled_reason)},
      {"failing_since",
       e.failing_since ? nlohmann::json(format_rfc3339(*e.failing_since)) : nlohmann::json()},
      {"signing", to_string(e.signing)},
      {"secrets", secrets},
      {"created_at", format_rfc3339(e.created_at)},
      {"updated_at", format_rfc3339(e.updated_at)}};
  out.update(delivery_control_json(e.control));
  return out;
}

RawJson::RawJson() {
  std::uint8_t tag[16];
  secure_random_bytes(tag);
  static constexpr char kHex[] = "0123456789abcdef";
  marker_ = "\"\\u0001";
  for (std::uint8_t b : tag) {
    marker_.push_back(kHex[b >> 4]);
    marker_.push_back(kHex[b & 0xF]);
  }
  marker_.push_back(':');
}

nlohmann::json RawJson::hold(std::string text) {
  // "\u0001" is how dump() writes the placeholder's first character.
  std::string placeholder = "\x01" + marker_.substr(7) + std::to_string(texts_.size());
  texts_.push_back(std::move(text));
  return placeholder;
}

std::string RawJson::splice(const std::string& dumped) const {
  std::string out;
  out.reserve(dumped.size());
  std::size_t from = 0;
  for (std::size_t at; (at = dumped.find(marker_, from)) != std::string::npos;) {
    std::size_t end = at + marker_.size();
    std::size_t index = 0;
    while (end < dumped.size() && dumped[end] >= '0' && dumped[end] <= '9') {
      index = index * 10 + static_cast<std::size_t>(dumped[end++] - '0');
    }
    out.append(dumped, from, at - from);
    out += index < texts_.size() ? texts_[index] : "null";
    from = end + 1;  // past the closing quote
  }
  out.append(dumped, from, std::string::npos);
  return out;
}

nlohmann::json event_json(const Event& e, RawJson& raw) {
  return {
      {"event_id", e.event_id},
      {"merchant_id", e.merchant_id},
      {"type", e.type},
      {"created_at", format_rfc3339(e.created_at)},
      {"idempotency_key",
       e.idempotency_key.empty() ? nlohmann::json() : nlohmann::json(e.idempotency_key)},
      {"ordering_key", e.ordering_key.empty() ? nlohmann::json() : nlohmann::json(e.ordering_key)},
      {"traceparent", e.traceparent.empty() ? nlohmann::json() : nlohmann::json(e.traceparent)},
      {"tracestate", e.tracestate.empty() ? nlohmann::json() : nlohmann::json(e.tracestate)},
      {"data", raw.hold(e.payload.empty() ? std::string("{}") : e.payload)}};
}

nlohmann::json task_json(const Task& t) {
  return {{"id", t.id},
          {"endpoint_id", t.endpoint_id},
          {"state", to_string(t.state)},
          {"parked", t.parked},
          {"waiting", t.waiting},
          {"attempts", t.attempts},
          {"next_attempt_at", format_rfc3339(t.next_attempt_at)},
          {"next_trigger", to_string(t.next_trigger)},
          {"last_status", t.last_status},
          {"last_error", t.last_error.empty() ? nlohmann::json() : nlohmann::json(t.last_error)},
          {"created_at", format_rfc3339(t.created_at)},
          {"updated_at", format_rfc3339(t.updated_at)}};
}

nlohmann::json attempt_json(const DeliveryAttempt& a) {
  const std::string error = error_text(a.error, a.error_message);
  return {{"delivery_id", a.delivery_id},
          {"task_id", a.task_id},
          {"event_id", a.event_id},
          {"endpoint_id", a.endpoint_id},
          {"attempt_number", a.attempt_number},
          {"trigger", to_string(a.trigger)},
          {"started_at", format_rfc3339(a.started_at)},
          {"status", a.status},
          {"latency_ms", a.latency_ms},
          {"error", error.empty() ? nlohmann::json() : nlohmann::json(error)},
          {"response_snippet", a.response_snippet},
          {"traceparent", a.traceparent.empty() ? nlohmann::json() : nlohmann::json(a.traceparent)},
          {"trace_id",
           a.traceparent.empty() ? nlohmann::json() : nlohmann::json(trace_id_of(a.traceparent))}};
}

void answer(httplib::Response& res, int status, const nlohmann::json& body, const RawJson* raw) {
  res.status = status;
  std::string text = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (raw) text = raw->splice(text);
  http::set_json_body(res, std::move(text));
}

void fail(httplib::Response& res, int status, std::string_view code, std::string_view message) {
  res.status = status;
  http::set_json_body(res, error_body(code, message));
}

std::optional<std::int64_t> parse_decimal(std::string_view text, std::int64_t min,
                                          std::int64_t max) {
  if (text.empty() || text.size() > 18) return std::nullopt;  // 18 digits fit in int64
  std::int64_t value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  if (value < min || value > max) return std::nullopt;
  return value;
}

bool time_param(const httplib::Request& req, const char* name, std::optional<UnixMillis>& out,
                httplib::Response& res) {
  if (!req.has_param(name)) return true;
  out = parse_rfc3339(req.get_param_value(name));
  if (out) return true;
  fail(res, 400, "invalid_request", std::string(name) + " must be an RFC 3339 time");
  return false;
}

bool limit_param(const httplib::Request& req, int& out, httplib::Response& res) {
  if (!req.has_param("limit")) return true;
  // The whole value, decimal digits only: "1e3", "2abc", "+5", " 5" and a second limit= are
  // refused, not read as 1, 2 or 5.
  const auto limit = req.get_param_value_count("limit") == 1
                         ? parse_decimal(req.get_param_value("limit"), 1, 1000)
                         : std::nullopt;
  if (!limit) {
    fail(res, 400, "invalid_request",
         "limit must be one integer from 1 to 1000, in decimal digits");
    return false;
  }
  out = static_cast<int>(*limit);
  return true;
}

std::optional<nlohmann::json> json_body(const httplib::Request& req, httplib::Response& res) {
  if (req.body.empty()) return nlohmann::json::object();
  // The parser's own reason (nesting limit, invalid UTF-8, position), as ingest answers it; the
  // object check comes after.
  nlohmann::json doc;
  try {
    doc = parse_json(req.body);
  } catch (const Error& e) {
    fail(res, 400, "invalid_json", e.what());
    return std::nullopt;
  }
  if (!doc.is_object()) {
    fail(res, 400, "invalid_json", "the body must be a JSON object");
    return std::nullopt;
  }
  return doc;
}

std::optional<UnixMillis> since_field(const httplib::Request& req, httplib::Response& res) {
  const auto body = json_body(req, res);
  if (!body) return std::nullopt;
  const auto since = body->find("since");
  std::optional<UnixMillis> parsed;
  if (since != body->end() && since->is_string()) parsed = parse_rfc3339(since->get<std::string>());
  if (!parsed) fail(res, 400, "invalid_request", "since must be an RFC 3339 time");
  return parsed;
}

}  // namespace webhooks::publisher::detail
