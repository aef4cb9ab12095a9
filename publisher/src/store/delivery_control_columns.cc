#include "store/delivery_control_columns.h"

#include <nlohmann/json.hpp>

#include "webhooks/json_parse.h"

namespace webhooks::publisher::detail {
namespace {

std::string auth_json(const EndpointAuth& auth) {
  switch (auth.type) {
    case EndpointAuth::Type::bearer:
      return nlohmann::json{{"type", "bearer"}, {"token", auth.token}}.dump();
    case EndpointAuth::Type::basic:
      return nlohmann::json{
          {"type", "basic"}, {"username", auth.username}, {"password", auth.password}}
          .dump();
    case EndpointAuth::Type::none:
      break;
  }
  return {};
}

EndpointAuth parse_auth(const std::string& text) {
  EndpointAuth auth;
  const nlohmann::json j = parse_json_or_discarded(text);
  if (!j.is_object()) return auth;
  const std::string type = j.value("type", "");
  if (type == "bearer") {
    auth.type = EndpointAuth::Type::bearer;
    auth.token = j.value("token", "");
  } else if (type == "basic") {
    auth.type = EndpointAuth::Type::basic;
    auth.username = j.value("username", "");
    auth.password = j.value("password", "");
  }
  return auth;
}

}  // namespace

ControlColumns::ControlColumns(const DeliveryControl& c)
    : control_(c), ordering_(to_string(c.ordering)), auth_(auth_json(c.auth)) {
  nlohmann::json headers = nlohmann::json::object();
  for (const auto& [name, value] : c.headers) headers[name] = value;
  headers_ = headers.dump();
}

std::array<db::Param, kControlColumns> ControlColumns::params() const {
  const DeliveryControl& c = control_;
  return {c.rate_limit ? db::Param(std::int64_t{*c.rate_limit}) : db::Param(nullptr),
          db::Param(std::string_view(ordering_)),
          db::Param(std::string_view(headers_)),
          db::text_or_null(auth_),
          db::text_or_null(c.client_certificate),
          db::text_or_null(c.client_key)};
}

DeliveryControl control_from(const db::Rows& rows, std::size_t r, std::size_t first) {
  DeliveryControl c;
  if (!rows.is_null(r, first)) c.rate_limit = static_cast<int>(rows.integer(r, first));
  c.ordering = parse_ordering(rows.text(r, first + 1)).value_or(Ordering::none);
  const nlohmann::json headers = parse_json_or_discarded(rows.text(r, first + 2));
  if (headers.is_object()) {
    for (const auto& [name, value] : headers.items()) {
      if (value.is_string()) c.headers.emplace_back(name, value.get<std::string>());
    }
  }
  c.auth = parse_auth(rows.text(r, first + 3));
  c.client_certificate = rows.text(r, first + 4);
  c.client_key = rows.text(r, first + 5);
  return c;
}

}  // namespace webhooks::publisher::detail
