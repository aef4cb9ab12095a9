#include "api/admin_api.h"

#include <httplib.h>

#include "api/admin_json.h"
#include "api/audit_log.h"
#include "webhooks/error.h"
#include "webhooks/http_server.h"
#include "webhooks/idempotency/http.h"
#include "webhooks/log.h"

namespace webhooks::publisher {
namespace {

// Routes that answer without the admin token: the probes, and the console's pages (each checks
// its session itself, redirecting to the sign-in page) and its sign-in routes and assets.
bool open_route(const std::string& path) {
  return path == "/healthz" || path == "/metrics" || path == "/" || path == "/console" ||
         path.starts_with("/console/") || path == "/favicon.ico";  // browsers ask for it: 404
}

// An audit entry of a request refused before any route ran.
AuditEntry refused(std::string actor, std::string action, std::string target, int status,
                   std::string detail) {
  AuditEntry entry;
  entry.actor = std::move(actor);
  entry.action = std::move(action);
  entry.target = std::move(target);
  entry.status = status;
  entry.detail = std::move(detail);
  return entry;
}

// options.admin_token as "admin", then options.tokens.
Principals all_principals(const AdminOptions& options) {
  std::vector<Principal> all;
  if (!options.admin_token.empty()) all.push_back({"admin", options.admin_token, Role::admin});
  all.insert(all.end(), options.tokens.begin(), options.tokens.end());
  return Principals(std::move(all));
}

}  // namespace

AdminApi::AdminApi(Store& store, Ingest& ingest, idempotency::Guard& guard, Metrics& metrics,
                   const Clock& clock, OverviewSnapshot& overview, AdminOptions options,
                   std::function<void()> wake)
    : store_(store),
      ingest_(ingest),
      guard_(guard),
      metrics_(metrics),
      clock_(clock),
      overview_(overview),
      options_(std::move(options)),
      wake_(std::move(wake)),
      principals_(all_principals(options_)),
      revocations_(store_.database(), "publisher_revoked_sessions", clock_),
      sessions_(
          [this](std::string_view name) -> std::optional<std::string> {
            const Principal* p = principals_.by_name(name);
            if (p == nullptr) return std::nullopt;
            return p->token;
          },
          [this](std::string_view token) -> std::optional<std::string> {
            const Principal* p = principals_.by_token(token);
            if (p == nullptr) return std::nullopt;
            return p->name;
          },
          clock_),
      audit_log_(std::make_unique<AuditLog>(store_.database())),
      unauthenticated_budget_(std::make_unique<AuditBudget>(kUnauthenticatedEntriesPerMinute)) {
  sessions_.use_revocations(revocations_);
  sessions_.use_tls(options_.behind_tls_proxy);
  sessions_.use_audit([this](const httplib::Request& req, const console::SessionAction& done) {
    AuditEntry entry;
    entry.actor = done.principal;
    entry.action = "console." + std::string(done.action);
    entry.status = done.status;
    entry.detail = std::string(done.detail);
    record_audit(req, std::move(entry));
  });
}

// The pre-routing check: an open route, a token or a console session (with its CSRF token on a
// state-changing request; a viewer's only on GET and HEAD) goes on to the routes; anything else
// is answered here: 403 for a viewer's change (recorded in the audit log), 429 while the client's
// address is throttled (every attempt, the right token too), else 401 counted as a failure of that
// address (recorded as api.authenticate, within the unauthenticated entries' budget).
httplib::Server::HandlerResponse AdminApi::authenticate(const httplib::Request& req,
                                                        httplib::Response& res) {
  using Outcome = httplib::Server::HandlerResponse;
  if (open_route(req.path)) return Outcome::Unhandled;
  console::FailureThrottle& throttle = sessions_.throttle();
  if (const auto message = console::throttled(throttle, req, res)) {
    detail::fail(res, 429, "too_many_failures", *message);
    return Outcome::Handled;
  }
  const std::string_view token = http::bearer_token(req);
  const Principal* principal = principals_.by_token(token);
  std::string session_principal;
  if (principal == nullptr) {
    switch (sessions_.authorize_api(req, &session_principal)) {
      case console::ApiSession::ok:
        principal = principals_.by_name(session_principal);
        break;
      case console::ApiSession::csrf_failed:
        detail::fail(res, 403, "csrf_failed",
                     "a request signed in with the console's cookie must carry the page's "
                     "X-CSRF-Token header");
        return Outcome::Handled;
      case console::ApiSession::none:
        break;
    }
  }
  if (principal != nullptr) {
    if (principal->role == Role::viewer && req.method != "GET" && req.method != "HEAD") {
      detail::fail(res, 403, "forbidden",
                   "the viewer token " + principal->name + " may only read (GET and HEAD)");
      const std::string action = audit_action_of(req.method, req.path);
      if (!action.empty()) {
        record_audit(req,
                     refused(principal->name, action, audit_target_of(req.path), 403, "forbidden"));
      }
      return Outcome::Handled;
    }
    return Outcome::Unhandled;
  }
  throttle.record_failure(req.remote_addr);
  detail::fail(res, 401, "unauthorized",
               principals_.empty() ? "the daemon was started without an admin token"
                                   : "a valid Authorization: Bearer <token> header is required");
  if (req.path.starts_with("/v1/")) {  // the API's routes; not a scanner's guesses elsewhere
    record_audit(
        req, refused("", "api.authenticate", "", 401, token.empty() ? "no_token" : "wrong_token"));
  }
  return Outcome::Handled;
}

void AdminApi::mount(http::Server& server) {
  http::limit_request_bodies(
      server, options_.body_limit,
      [this](const httplib::Request& req, httplib::Response& res) {
        return authenticate(req, res);
      },
      http::Bodies::json);
  server.set_exception_handler(idempotency::answer_exception);
  // Healthy when the database answers SELECT 1 within kHealthTimeout: 503 storage_unavailable
  // saying it is unreachable when not.
  server.Get("/healthz", [this](const httplib::Request&, httplib::Response& res) {
    if (idempotency::database_reachable(store_.database(), res)) {
      detail::answer(res, 200, {{"status", "ok"}});
    }
  });
  server.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(
        metrics_.render(store_.count_tasks(), store_.count_disabled_endpoints()) +
            metrics_.render_endpoint_health(store_.failing_endpoints(), clock_.now_ms()),
        "text/plain; version=0.0.4");
  });
  mount_endpoints(server);
  mount_events(server);
  mount_console(server);
  mount_console_pages(server);
}

}  // namespace webhooks::publisher
