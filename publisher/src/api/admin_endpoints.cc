// The /v1/endpoints routes.
#include <httplib.h>

#include "api/admin_api.h"
#include "api/admin_delivery_control.h"
#include "api/admin_json.h"
#include "webhooks/ed25519.h"
#include "webhooks/error.h"
#include "webhooks/log.h"
#include "webhooks/rfc3339.h"
#include "webhooks/secret.h"
#include "webhooks/uuid.h"

namespace webhooks::publisher {
namespace {

using detail::answer;
using detail::fail;
using nlohmann::json;

// Reads "event_types" (an array of non-empty strings) into `out`; false after answering 400.
bool read_types(const json& body, std::vector<std::string>& out, httplib::Response& res) {
  const auto it = body.find("event_types");
  if (it == body.end() || it->is_null()) return true;
  if (!it->is_array()) {
    fail(res, 400, "invalid_request", "event_types must be an array of strings");
    return false;
  }
  out.clear();
  for (const json& entry : *it) {
    if (!entry.is_string() || entry.get<std::string>().empty()) {
      fail(res, 400, "invalid_request", "event_types must be an array of non-empty strings");
      return false;
    }
    out.push_back(entry.get<std::string>());
  }
  return true;
}

// Checks the URL against the SSRF rules; false after answering. A host that does not resolve yet
// is accepted (its DNS may come later; every connect is checked again) with a line in `warnings`.
bool check_url(const json& url, const SsrfOptions& ssrf, std::vector<std::string>& warnings,
               httplib::Response& res) {
  if (!url.is_string()) {
    fail(res, 400, "invalid_request", "url must be a string");
    return false;
  }
  const UrlCheck check = check_endpoint_url(url.get<std::string>(), ssrf);
  if (check) return true;
  if (check.verdict == UrlVerdict::unresolvable) {
    warnings.push_back("url host \"" + check.host +
                       "\" does not resolve yet: deliveries fail until it does");
    return true;
  }
  const bool malformed = check.verdict == UrlVerdict::malformed;
  fail(res, malformed ? 400 : 422, malformed ? "invalid_request" : "url_not_allowed",
       check.message);
  return false;
}

// Logs the endpoint's `warnings` and adds them to its answer as "warnings" (none: no member).
void add_warnings(const std::string& endpoint_id, const std::vector<std::string>& warnings,
                  json& out) {
  for (const std::string& warning : warnings) {
    log_event(spdlog::level::warn, {{"event", "endpoint_url_unresolvable"},
                                    {"endpoint_id", endpoint_id},
                                    {"warning", warning}});
  }
  if (!warnings.empty()) out["warnings"] = warnings;
}

// A secret from the body (validated, canonical form) or a new one; nullopt after answering 400.
std::optional<std::string> read_secret(const json& body, httplib::Response& res) {
  const auto it = body.find("secret");
  if (it == body.end() || it->is_null()) return Secret::generate().to_string();
  if (!it->is_string()) {
    fail(res, 400, "invalid_secret", "secret must be a string");
    return std::nullopt;
  }
  try {
    return Secret::parse(it->get<std::string>()).to_string();
  } catch (const Error& e) {
    fail(res, 400, "invalid_secret", e.what());
    return std::nullopt;
  }
}

// The body's "signing" ("v1", "v1a" or "both"), `fallback` when absent; nullopt after answering
// 400.
std::optional<SigningScheme> read_signing(const json& body, SigningScheme fallback,
                                          httplib::Response& res) {
  const auto it = body.find("signing");
  if (it == body.end() || it->is_null()) return fallback;
  std::optional<SigningScheme> scheme;
  if (it->is_string()) scheme = parse_signing_scheme(it->get<std::string>());
  if (!scheme) fail(res, 400, "invalid_request", R"(signing must be "v1", "v1a" or "both")");
  return scheme;
}

// A signing key from the body's "signing_key" (validated) or a new one; nullopt after answering.
std::optional<Ed25519SigningKey> read_signing_key(const json& body, httplib::Response& res) {
  const auto it = body.find("signing_key");
  if (it == body.end() || it->is_null()) return Ed25519SigningKey::generate();
  try {
    if (it->is_string()) return Ed25519SigningKey::parse(it->get<std::string>());
    fail(res, 400, "invalid_key", "signing_key must be a string");
  } catch (const Error& e) {
    fail(res, 400, "invalid_key", e.what());
  }
  return std::nullopt;
}

// The keys a creation or rotation stores for `scheme` (a whsec_ secret for v1, a whsk_ signing
// key for v1a, both for both) and what its answer shows of them: "secret" (once) and
// "public_key" ("whpk_…"), never the signing key. nullopt after answering 400.
struct NewKeys {
  std::vector<std::string> stored;
  json shown = json::object();
};
std::optional<NewKeys> read_new_keys(const json& body, SigningScheme scheme,
                                     httplib::Response& res) {
  for (const char* name : {"secret", "signing_key"}) {
    const bool wanted = std::string_view(name) == "secret" ? uses_v1(scheme) : uses_v1a(scheme);
    if (!wanted && body.contains(name) && !body.at(name).is_null()) {
      fail(res, 400, "invalid_request",
           std::string(name) + " does not apply to signing \"" + std::string(to_string(scheme)) +
               "\"");
      return std::nullopt;
    }
  }
  NewKeys keys;
  if (uses_v1(scheme)) {
    const std::optional<std::string> secret = read_secret(body, res);
    if (!secret) return std::nullopt;
    keys.stored.push_back(*secret);
    keys.shown["secret"] = *secret;
  }
  if (uses_v1a(scheme)) {
    const std::optional<Ed25519SigningKey> key = read_signing_key(body, res);
    if (!key) return std::nullopt;
    keys.stored.push_back(key->to_string());
    keys.shown["public_key"] = key->public_key().to_string();
  }
  return keys;
}

// POST /v1/endpoints: a new endpoint with its first keys (201); a secret is shown this once, a
// signing key never (its public key instead).
void create_endpoint(Store& store, const Clock& clock, const SsrfOptions& ssrf,
                     const httplib::Request& req, httplib::Response& res) {
  const auto body = detail::json_body(req, res);
  if (!body) return;
  Endpoint e;
  const auto merchant = body->find("merchant_id");
  // PostgreSQL's text parameters end at a NUL: "m1\u0000x" would be stored as merchant m1.
  if (merchant == body->end() || !merchant->is_string() || merchant->get<std::string>().empty() ||
      merchant->get<std::string>().find('\0') != std::string::npos) {
    return fail(res, 400, "invalid_request",
                "merchant_id must be a non-empty string without NUL characters");
  }
  if (!body->contains("url")) return fail(res, 400, "invalid_request", "url is required");
  std::vector<std::string> warnings;
  if (!check_url(body->at("url"), ssrf, warnings, res)) return;
  if (!read_types(*body, e.event_types, res)) return;
  const std::optional<SigningScheme> signing = read_signing(*body, SigningScheme::v1, res);
  if (!signing) return;
  const std::optional<NewKeys> keys = read_new_keys(*body, *signing, res);
  if (!keys) return;
  const UnixMillis now = clock.now_ms();
  UuidV7Generator ids(clock);
  e.id = ids.next();
  e.merchant_id = merchant->get<std::string>();
  e.url = body->at("url").get<std::string>();
  e.description = body->value("description", "");
  if (!detail::read_delivery_control(*body, e.url, e.control, res)) return;
  e.created_at = e.updated_at = now;
  e.signing = *signing;
  for (const std::string& key : keys->stored) e.secrets.push_back({key, now, std::nullopt});
  store.create_endpoint(e);
  log_event(spdlog::level::info,
            {{"event", "endpoint_created"},
             {"endpoint_id", e.id},
             {"merchant_id", e.merchant_id},
             {"url", e.url},
             {"signing", to_string(e.signing)},
             {"rate_limit", e.control.rate_limit ? json(*e.control.rate_limit) : json()},
             {"ordering", to_string(e.control.ordering)}});
  json out = detail::endpoint_json(e);
  out.update(keys->shown);  // the only time a secret is shown
  add_warnings(e.id, warnings, out);
  answer(res, 201, out);
}

// GET /v1/endpoints[?merchant_id=]: the endpoints, without their secrets' values.
void list_endpoints(Store& store, const httplib::Request& req, httplib::Response& res) {
  json list = json::array();
  for (const Endpoint& e : store.list_endpoints(req.get_param_value("merchant_id"))) {
    list.push_back(detail::endpoint_json(e));
  }
  answer(res, 200, {{"endpoints", list}});
}

// GET /v1/endpoints/{id}.
void get_endpoint(Store& store, const httplib::Request& req, httplib::Response& res) {
  const auto e = store.find_endpoint(req.matches[1]);
  if (!e) return fail(res, 404, "not_found", "no such endpoint");
  answer(res, 200, detail::endpoint_json(*e));
}

// PATCH /v1/endpoints/{id}: url, event_types, description and the delivery control
// (admin_delivery_control.h), each when present.
void update_endpoint(Store& store, const Clock& clock, const SsrfOptions& ssrf,
                     const httplib::Request& req, httplib::Response& res) {
  const auto body = detail::json_body(req, res);
  if (!body) return;
  auto e = store.find_endpoint(req.matches[1]);
  if (!e) return fail(res, 404, "not_found", "no such endpoint");
  std::vector<std::string> warnings;
  if (body->contains("url")) {
    if (!check_url(body->at("url"), ssrf, warnings, res)) return;
    e->url = body->at("url").get<std::string>();
  }
  if (!read_types(*body, e->event_types, res)) return;
  if (body->contains("description") && body->at("description").is_string()) {
    e->description = body->at("description").get<std::string>();
  }
  if (!detail::read_delivery_control(*body, e->url, e->control, res)) return;
  store.update_endpoint(*e, clock.now_ms());
  log_event(spdlog::level::info,
            {{"event", "endpoint_updated"},
             {"endpoint_id", e->id},
             {"url", e->url},
             {"rate_limit", e->control.rate_limit ? json(*e->control.rate_limit) : json()},
             {"ordering", to_string(e->control.ordering)},
             {"headers", e->control.headers.size()},
             {"auth", to_string(e->control.auth.type)},
             {"client_certificate", !e->control.client_certificate.empty()}});
  json out = detail::endpoint_json(*store.find_endpoint(e->id));
  add_warnings(e->id, warnings, out);
  answer(res, 200, out);
}

// DELETE /v1/endpoints/{id} (204).
void delete_endpoint(Store& store, const Clock& clock, const httplib::Request& req,
                     httplib::Response& res) {
  if (!store.delete_endpoint(req.matches[1], clock.now_ms())) {
    return fail(res, 404, "not_found", "no such endpoint");
  }
  res.status = 204;
}

// POST /v1/endpoints/{id}/enable and /disable; `wake` (if set) after an enable.
void set_enabled(Store& store, const Clock& clock, const std::function<void()>& wake,
                 const httplib::Request& req, httplib::Response& res) {
  const auto body = detail::json_body(req, res);
  if (!body) return;
  const std::string id = req.matches[1];
  const bool enable = req.matches[2] == "enable";
  const std::string reason = body->value("reason", "disabled by an operator");
  if (!store.set_enabled(id, enable, reason, clock.now_ms())) {
    return fail(res, 404, "not_found", "no such endpoint");
  }
  log_event(spdlog::level::info, {{"event", enable ? "endpoint_enabled" : "endpoint_disabled"},
                                  {"endpoint_id", id},
                                  {"reason", enable ? "" : reason}});
  if (enable && wake) wake();
  answer(res, 200, detail::endpoint_json(*store.find_endpoint(id)));
}

// The body's "grace_seconds" into `grace` (kept when absent); false after answering 400.
bool read_grace(const json& body, std::chrono::milliseconds& grace, httplib::Response& res) {
  if (!body.contains("grace_seconds")) return true;
  // Unbounded, a huge grace overflowed now + grace (in ms). Parsed JSON holds 0 and up as
  // unsigned: compared as such, no value wraps.
  const json& g = body.at("grace_seconds");
  const bool in_range = g.is_number_unsigned()
                            ? g.get<std::uint64_t>() <= static_cast<std::uint64_t>(kMaxGraceSeconds)
                            : g.is_number_integer() && g.get<std::int64_t>() >= 0 &&
                                  g.get<std::int64_t>() <= kMaxGraceSeconds;
  if (!in_range) {
    fail(res, 400, "invalid_request",
         "grace_seconds must be a whole number from 0 to " + std::to_string(kMaxGraceSeconds) +
             " (10 years)");
    return false;
  }
  grace = std::chrono::seconds(g.get<std::int64_t>());
  return true;
}

// POST /v1/endpoints/{id}/rotate-secret: new keys for the body's "signing" (default: the
// endpoint's); the old ones keep signing until the grace ends.
void rotate_secret(Store& store, const Clock& clock, std::chrono::milliseconds default_grace,
                   const httplib::Request& req, httplib::Response& res) {
  const auto body = detail::json_body(req, res);
  if (!body) return;
  const std::string id = req.matches[1];
  const std::optional<Endpoint> endpoint = store.find_endpoint(id);
  if (!endpoint) return fail(res, 404, "not_found", "no such endpoint");
  const std::optional<SigningScheme> signing = read_signing(*body, endpoint->signing, res);
  if (!signing) return;
  const std::optional<NewKeys> keys = read_new_keys(*body, *signing, res);
  if (!keys) return;
  std::chrono::milliseconds grace = default_grace;
  if (!read_grace(*body, grace, res)) return;
  const UnixMillis now = clock.now_ms();
  if (!store.rotate_keys(id, keys->stored, *signing, now + grace.count(), now)) {
    return fail(res, 404, "not_found", "no such endpoint");
  }
  log_event(spdlog::level::info, {{"event", "secret_rotated"},
                                  {"endpoint_id", id},
                                  {"signing", to_string(*signing)},
                                  {"old_secrets_expire_at", format_rfc3339(now + grace.count())}});
  json out = {{"endpoint_id", id},
              {"signing", to_string(*signing)},
              {"old_secrets_expire_at", format_rfc3339(now + grace.count())}};
  out.update(keys->shown);
  answer(res, 200, out);
}

// POST /v1/endpoints/{id}/recover: the endpoint's tasks since a time delivered again (202).
void recover(Store& store, const Clock& clock, const std::function<void()>& wake,
             const httplib::Request& req, httplib::Response& res) {
  const std::optional<UnixMillis> since = detail::since_field(req, res);
  if (!since) return;
  const std::string id = req.matches[1];
  if (!store.find_endpoint(id)) return fail(res, 404, "not_found", "no such endpoint");
  const int tasks = store.recover(id, *since, clock.now_ms());
  log_event(spdlog::level::info,
            {{"event", "endpoint_recovered"}, {"endpoint_id", id}, {"tasks", tasks}});
  if (tasks > 0 && wake) wake();
  answer(res, 202, {{"endpoint_id", id}, {"tasks", tasks}});
}

}  // namespace

void AdminApi::mount_endpoints(http::Server& server) {
  using Request = httplib::Request;
  using Response = httplib::Response;
  server.Post("/v1/endpoints", audited([this](const Request& req, Response& res) {
                create_endpoint(store_, clock_, options_.ssrf, req, res);
              }));
  server.Get("/v1/endpoints",
             [this](const Request& req, Response& res) { list_endpoints(store_, req, res); });
  server.Get(R"(/v1/endpoints/([^/]+))",
             [this](const Request& req, Response& res) { get_endpoint(store_, req, res); });
  server.Patch(R"(/v1/endpoints/([^/]+))", audited([this](const Request& req, Response& res) {
                 update_endpoint(store_, clock_, options_.ssrf, req, res);
               }));
  server.Delete(R"(/v1/endpoints/([^/]+))", audited([this](const Request& req, Response& res) {
                  delete_endpoint(store_, clock_, req, res);
                }));
  for (const std::string verb : {"enable", "disable"}) {
    server.Post(R"(/v1/endpoints/([^/]+)/()" + verb + ")",
                audited([this](const Request& req, Response& res) {
                  set_enabled(store_, clock_, wake_, req, res);
                }));
  }
  server.Post(R"(/v1/endpoints/([^/]+)/rotate-secret)",
              audited([this](const Request& req, Response& res) {
                rotate_secret(store_, clock_, options_.rotation_grace, req, res);
              }));
  server.Post(R"(/v1/endpoints/([^/]+)/recover)",
              audited([this](const Request& req, Response& res) {
                recover(store_, clock_, wake_, req, res);
              }));
}

}  // namespace webhooks::publisher
