// Stateless console sessions (docs/console.md, "Sessions and CSRF"): nothing is stored on the
// server, so every daemon that shares the secret accepts a session, and changing the secret signs
// everyone out.
//
//   Sessions sessions = Sessions::single_token(admin_token, clock);   // the publisher
//   Sessions sessions(secret_of_merchant, sign_in_with_api_key, clock); // orders-api
//   sessions.mount(server, "Publisher console");  // GET/POST /console/login, POST /console/logout
//   server.Get("/console", [&](const auto& req, auto& res) {
//     const auto session = sessions.require(req, res);  // else 303 to /console/login
//     if (!session) return;
//     ... render_page({..., .csrf_token = session->csrf_token, ...}) ...
//   });
//
// The cookie `webhooks_console` (HttpOnly, SameSite=Strict, Path=/; Secure with use_tls) holds
//   <expires, Unix s>.<nonce, 32 hex>.<HMAC-SHA256 hex>                   (principal "")
//   <expires, Unix s>.<nonce, 32 hex>.<principal, hex>.<HMAC-SHA256 hex>  (otherwise)
// The HMAC covers everything before its dot, keyed by HMAC-SHA256(secret, "webhooks-console-v1")
// where `secret` is the principal's (the admin token; a merchant's API key). The CSRF token of a
// session is hex HMAC(key, "csrf:" + cookie value). Comparisons are constant-time.
//
// Sign-in failures are throttled per client address (throttle.h): the 11th wrong token of an
// address within a minute, and every sign-in of that address until the minute ends, answers 429
// with Retry-After. throttle() is shared by the copies of a Sessions, so a daemon counts its API's
// bearer failures in the same table.
//
// Immutable after construction, but for the throttle's table; thread-safe (the callbacks must be
// too).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "webhooks/clock.h"
#include "webhooks/console/revocations.h"
#include "webhooks/console/throttle.h"
#include "webhooks/http_server.h"

namespace webhooks::console {

// The session cookie's name by default (the publisher's console). Another console on the same
// host names its own (orders-api: "orders_console"): cookies ignore the port, so one name would
// sign each console out of the other and send one's session to the other.
inline constexpr std::string_view kCookieName = "webhooks_console";
// A session's lifetime: 12 hours from sign-in.
inline constexpr std::chrono::seconds kSessionLifetime = std::chrono::hours(12);

// A verified session.
struct Session {
  std::string principal;    // who signed in ("" for the publisher's admin)
  std::string id;           // the nonce, 32 hex digits: what sign-out revokes (revocations.h)
  std::string value;        // the cookie value
  std::int64_t expires_at;  // Unix seconds
  std::string csrf_token;   // what state-changing requests must carry (X-CSRF-Token, or `csrf`)
};

// How the admin API treats a request's session cookie (Sessions::authorize_api).
enum class ApiSession {
  none,         // no valid session cookie: authenticate otherwise (Bearer) or 401
  ok,           // a valid session, and for POST/PUT/PATCH/DELETE a matching X-CSRF-Token
  csrf_failed,  // a valid session on a state-changing request without the right X-CSRF-Token
};

// What a sign-in route did, for an audit log (Sessions::use_audit).
struct SessionAction {
  std::string_view action;  // "sign_in" or "sign_out"
  std::string principal;    // who signed in or out; "" for a wrong token
  int status = 0;           // the HTTP status answered: 303, 401, 403
  std::string_view detail;  // "" on success, else "wrong_token", "csrf_failed", "cross_origin"
};

class Sessions {
 public:
  // The secret that signs `principal`'s sessions, or std::nullopt when there is none (the
  // principal was removed: its sessions are invalid).
  using SecretOf = std::function<std::optional<std::string>(std::string_view principal)>;
  // The principal a sign-in token (the form's `token`) belongs to, or std::nullopt when it is
  // wrong. Compare tokens in constant time.
  using SignIn = std::function<std::optional<std::string>(std::string_view token)>;

  Sessions(SecretOf secret_of, SignIn sign_in, const Clock& clock,
           std::chrono::seconds lifetime = kSessionLifetime,
           std::string cookie_name = std::string(kCookieName));
  // One secret, one principal "": signing in takes exactly `token` (none when it is empty).
  static Sessions single_token(std::string token, const Clock& clock,
                               std::chrono::seconds lifetime = kSessionLifetime);

  // The principal of a right token, or std::nullopt.
  std::optional<std::string> sign_in(std::string_view token) const;
  // A new cookie value for `principal`, valid for the lifetime from clock.now. Throws
  // Error(invalid_argument) when `principal` has no secret, Error(crypto) if OpenSSL fails.
  std::string issue(std::string_view principal) const;
  // Marks the cookie `Secure` (RFC 6265 section 4.1.2.5), and expects the sign-in and sign-out
  // posts from an https:// origin (origin.h): for a console served over TLS or behind a TLS proxy
  // (the daemons' --behind-tls-proxy). Call before serving.
  void use_tls(bool tls) { tls_ = tls; }

  // Makes sign-out revoke the session on the server and verify() refuse revoked sessions
  // (revocations.h). Call before serving; `revocations` must outlive the Sessions and its copies.
  void use_revocations(Revocations& revocations);

  // Called after each sign-in with a token checked (right: 303; wrong: 401 "wrong_token"; not
  // while the address is throttled), each sign-out of a valid session (303; 403 "csrf_failed"),
  // and each sign-in or sign-out refused as posted from another origin (403 "cross_origin", the
  // session's principal when a valid cookie came along), on the request's thread, before the
  // answer is sent. It may throw nothing. Call before serving.
  using Audit = std::function<void(const httplib::Request&, const SessionAction&)>;
  void use_audit(Audit audit) { audit_ = std::move(audit); }

  // The session of a cookie value: std::nullopt when malformed, expired (expires <= now), signed
  // with another key, for a principal without a secret, or revoked. Throws Error(storage) when
  // the revocations cannot be read.
  std::optional<Session> verify(std::string_view value) const;
  // Whether `token` is the session's CSRF token (constant-time).
  static bool csrf_matches(const Session& session, std::string_view token);

  // The session of the request's cookie (`cookie_name`), verified.
  std::optional<Session> of_request(const httplib::Request& req) const;
  // For a page: the session, or std::nullopt after answering 303 to /console/login.
  std::optional<Session> require(const httplib::Request& req, httplib::Response& res) const;
  // For the JSON API that accepts the cookie instead of its Bearer token. On `ok`, the session's
  // principal goes to `*principal` when it is not null.
  ApiSession authorize_api(const httplib::Request& req, std::string* principal = nullptr) const;

  // The failed-authentication throttle (10 failures a minute per address, on the Sessions' clock).
  FailureThrottle& throttle() const { return *throttle_; }

  // Registers GET /console/login (the form), POST /console/login (303 to /console with the
  // cookie, 401 with the form and #login-error, 429 with Retry-After and #login-error once
  // the client's address is throttled, 403 with #login-error from a page of another origin:
  // origin.h), POST /console/logout (with the form field
  // `csrf` or X-CSRF-Token: revokes the session when use_revocations was called, clears the
  // cookie, 303 to /console/login; 403 with a wrong token or from another origin) and
  // the assets (assets.h). `title` names the console on the sign-in page.
  void mount(http::Server& server, std::string title) const;

 private:
  std::optional<std::string> key_of(std::string_view principal) const;

  SecretOf secret_of_;
  SignIn sign_in_;
  const Clock& clock_;
  std::chrono::seconds lifetime_;
  std::string cookie_name_;
  std::shared_ptr<FailureThrottle> throttle_;
  Revocations* revocations_ = nullptr;
  bool tls_ = false;
  Audit audit_;
};

// While the request's client address is throttled: sets `Retry-After` (seconds) on `res` and
// returns the message of the 429 to answer ("too many failed authentications from this address:
// retry after N s"); else std::nullopt. The caller writes the body in its own error format.
std::optional<std::string> throttled(const FailureThrottle& throttle, const httplib::Request& req,
                                     httplib::Response& res);

// Constant-time equality of two strings (their lengths may leak, not their content).
bool same_secret(std::string_view a, std::string_view b);

}  // namespace webhooks::console
