// The publisher's HTTP API on a cpp-httplib server (docs/operations.md, "The API in one page"):
// endpoints, events, attempts, replay, recovery, replay-missing, an endpoint's stats, the
// overview, ingest, the audit log, /healthz and /metrics.
//
//   AdminApi api(store, ingest, guard, metrics, clock, overview, options);
//   api.mount(server);   // then bind and listen
//
// Every route but /healthz, /metrics and the console needs `Authorization: Bearer <a token>`
// or the console's session cookie (401 `unauthorized` otherwise; without tokens every such route
// answers 401); with the cookie, a POST, PUT, PATCH or DELETE also needs the session's
// `X-CSRF-Token` (403 `csrf_failed` otherwise). A viewer's token or session may only GET and HEAD
// (403 `forbidden` otherwise). After 10 failed authentications of a client address in a minute,
// 429 `too_many_failures` with Retry-After until the minute ends (webhooks/console/throttle.h). The
// console (docs/console.md) is served at /console: its pages redirect to /console/login without a
// session, signed in with a token; GET / redirects to it. Bodies over `body_limit` answer
// 413 `payload_too_large`. Errors are {"error":{"code","message"}} with stable codes: unauthorized,
// csrf_failed, forbidden (a viewer's change: 403), too_many_failures (429), not_found,
// invalid_json, invalid_request, invalid_secret, invalid_key (a bad "signing_key"),
// url_not_allowed, replay_too_old, payload_too_large, unsupported_media_type (a POST or PATCH whose
// Content-Type is present and not JSON: 415), internal_error, and the idempotency guard's. Times in
// answers are RFC 3339; secrets appear only in the answers that create them (create,
// rotate-secret); Ed25519 signing keys ("signing": "v1a" or "both") never appear, only their
// "whpk_" public keys (docs/publisher-delivery.md, "Signing"). Every change of an endpoint, every
// replay, recovery and replay-missing, and every console sign-in and sign-out is recorded in the
// audit log with its caller and outcome (GET /v1/audit, /console/audit; docs/security.md, "The
// audit log").
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "api/ingest.h"
#include "console/overview_snapshot.h"
#include "network/ssrf_guard.h"
#include "ops/metrics.h"
#include "webhooks/clock.h"
#include "webhooks/console/session.h"
#include "webhooks/http_server.h"
#include "webhooks/idempotency/guard.h"
#include "webhooks/publisher/principals.h"
#include "webhooks/publisher/store.h"

namespace webhooks::publisher {

class AuditLog;
class AuditBudget;
struct AuditEntry;

// The longest grace `POST /v1/endpoints/{id}/rotate-secret` takes in "grace_seconds": 10 years,
// the bound of the daemon's number flags (app::kMaxFlagDuration). Longer is surely a mistake,
// and the bound keeps now + grace, in milliseconds, far from overflowing.
inline constexpr std::int64_t kMaxGraceSeconds = std::int64_t{10} * 365 * 24 * 3600;

struct AdminOptions {
  // The token named "admin" (role admin), when not empty; with `tokens`, who may use every route
  // but /healthz and /metrics (principals.h).
  std::string admin_token;
  std::vector<Principal> tokens;  // named admin and viewer tokens, names and tokens unique
  // A TLS proxy is in front: the console's cookie is Secure, its forms expect an https:// origin.
  bool behind_tls_proxy = false;
  SsrfOptions ssrf;  // endpoint URLs are checked at creation and on PATCH
  // How long a rotated-out secret keeps signing (so receivers can switch over). Default 24 h.
  std::chrono::milliseconds rotation_grace{std::chrono::hours(24)};
  // Replay refuses events older than this (the receivers' dedup window), replay-missing a
  // `since` further back. Default 7 days.
  std::chrono::milliseconds replay_max_age{std::chrono::hours(24 * 7)};
  // Largest request body accepted; larger ones answer 413. Default 1 MiB.
  std::size_t body_limit = 1 << 20;
};

class AdminApi {
 public:
  // All references must outlive the AdminApi and the server it is mounted on. `overview` answers
  // GET /v1/overview and the console's overview page. `wake` (optional) is called when tasks
  // became due (replay, recovery, enable), to wake the dispatcher. Throws Error(invalid_argument)
  // for a bad or duplicate token name, or one token under two names (principals.h).
  AdminApi(Store& store, Ingest& ingest, idempotency::Guard& guard, Metrics& metrics,
           const Clock& clock, OverviewSnapshot& overview, AdminOptions options,
           std::function<void()> wake = {});
  ~AdminApi();

  // Registers the routes, the authentication check, the body limit and the JSON error handler.
  void mount(http::Server& server);

 private:
  // The pre-routing check of every request (admin_api.cc).
  httplib::Server::HandlerResponse authenticate(const httplib::Request& req,
                                                httplib::Response& res);
  void mount_endpoints(http::Server& server);
  void mount_events(http::Server& server);
  void mount_console(http::Server& server);        // replay-missing, stats, overview
  void mount_console_pages(http::Server& server);  // console_routes.cc: the HTML pages
  void mount_console_events(http::Server& server);
  void mount_audit(http::Server& server);  // admin_audit.cc: GET /v1/audit, /console/audit
  // `handler` for a state-changing route, recording its action (audit_action_of: the one table of
  // audited routes) in the audit log once it answered or threw: its caller, the target (the
  // path's id, or the created endpoint's id) and outcome.
  httplib::Server::Handler audited(httplib::Server::Handler handler);
  // Records `entry` with the request's time, client address, outcome and the actor's role; an
  // entry without an actor only within kUnauthenticatedEntriesPerMinute. A failure to write is
  // logged (audit_write_failed, with the entry) and not thrown.
  void record_audit(const httplib::Request& req, AuditEntry entry);
  // The principal of the request's bearer token or console session, or null.
  const Principal* principal_of(const httplib::Request& req) const;
  // Whether the session's principal may change things (an admin): its pages show the actions.
  bool can_act(const console::Session& session) const;

  Store& store_;
  Ingest& ingest_;
  idempotency::Guard& guard_;
  Metrics& metrics_;
  const Clock& clock_;
  OverviewSnapshot& overview_;
  AdminOptions options_;
  std::function<void()> wake_;
  Principals principals_;                // admin_token as "admin", and tokens
  console::SqlRevocations revocations_;  // publisher_revoked_sessions
  console::Sessions sessions_;           // principal: the token's name, signed with the token
  std::unique_ptr<AuditLog> audit_log_;  // publisher_audit_log
  // Entries without an actor (wrong tokens, another origin) recorded a minute.
  std::unique_ptr<AuditBudget> unauthenticated_budget_;
};

}  // namespace webhooks::publisher
