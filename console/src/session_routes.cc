// Sessions on HTTP: the cookie, the page guard, the API check, and the sign-in routes.
#include <httplib.h>

#include "webhooks/console/assets.h"
#include "webhooks/console/html.h"
#include "webhooks/console/origin.h"
#include "webhooks/console/page.h"
#include "webhooks/console/session.h"

namespace webhooks::console {
namespace {

// The value of cookie `name` in the request's Cookie header(s), or "".
std::string_view cookie_value(const httplib::Request& req, std::string_view name) {
  const auto range = req.headers.equal_range("Cookie");
  for (auto it = range.first; it != range.second; ++it) {
    std::string_view rest = it->second;
    while (!rest.empty()) {
      const std::size_t semi = rest.find(';');
      std::string_view pair = rest.substr(0, semi);
      rest = semi == std::string_view::npos ? std::string_view() : rest.substr(semi + 1);
      while (!pair.empty() && (pair.front() == ' ' || pair.front() == '\t')) pair.remove_prefix(1);
      if (pair.size() > name.size() && pair.starts_with(name) && pair[name.size()] == '=') {
        return pair.substr(name.size() + 1);
      }
    }
  }
  return {};
}

std::string session_cookie(std::string_view name, std::string_view value, std::int64_t max_age,
                           bool secure) {
  return std::string(name) + "=" + std::string(value) + "; Path=/; HttpOnly; SameSite=Strict" +
         (secure ? "; Secure" : "") + "; Max-Age=" + std::to_string(max_age);
}

// What a form post from another origin is told (403).
std::string cross_origin_message(const std::string& origin, const std::string& own) {
  return "Refused: this form was posted from " + origin + ", not from this console (" + own +
         "). Open the console at " + own + " and sign in there.";
}

bool changes_state(const std::string& method) {
  return method == "POST" || method == "PUT" || method == "PATCH" || method == "DELETE";
}

}  // namespace

std::optional<std::string> throttled(const FailureThrottle& throttle, const httplib::Request& req,
                                     httplib::Response& res) {
  const auto wait = throttle.retry_after(req.remote_addr);
  if (!wait) return std::nullopt;
  res.set_header("Retry-After", std::to_string(wait->count()));
  return "too many failed authentications from this address: retry after " +
         std::to_string(wait->count()) + " s";
}

std::optional<Session> Sessions::of_request(const httplib::Request& req) const {
  const std::string_view value = cookie_value(req, cookie_name_);
  if (value.empty()) return std::nullopt;
  return verify(value);
}

std::optional<Session> Sessions::require(const httplib::Request& req,
                                         httplib::Response& res) const {
  std::optional<Session> session = of_request(req);
  if (!session) redirect(res, "/console/login");
  return session;
}

ApiSession Sessions::authorize_api(const httplib::Request& req, std::string* principal) const {
  const std::optional<Session> session = of_request(req);
  if (!session) return ApiSession::none;
  if (changes_state(req.method) && !csrf_matches(*session, req.get_header_value("X-CSRF-Token"))) {
    return ApiSession::csrf_failed;
  }
  if (principal != nullptr) *principal = session->principal;
  return ApiSession::ok;
}

void Sessions::mount(http::Server& server, std::string title) const {
  server.Get("/console/login", [this, title](const httplib::Request& req, httplib::Response& res) {
    if (of_request(req)) return redirect(res, "/console");
    send_html(res, 200, render_login(title, ""));
  });
  server.Post("/console/login", [this, title](const httplib::Request& req, httplib::Response& res) {
    if (const auto origin = foreign_origin(req, tls_)) {
      if (audit_) audit_(req, {"sign_in", "", 403, "cross_origin"});
      return send_html(res, 403,
                       render_login(title, cross_origin_message(*origin, own_origin(req, tls_))));
    }
    if (const auto wait = throttle_->retry_after(req.remote_addr)) {
      res.set_header("Retry-After", std::to_string(wait->count()));
      return send_html(res, 429,
                       render_login(title,
                                    "Too many failed sign-ins from this address: try "
                                    "again in " +
                                        std::to_string(wait->count()) + " s."));
    }
    const auto fields = parse_form(req.body);
    const auto token = fields.find("token");
    const std::optional<std::string> principal =
        token == fields.end() ? std::nullopt : sign_in(token->second);
    if (!principal) {
      throttle_->record_failure(req.remote_addr);
      if (audit_) audit_(req, {"sign_in", "", 401, "wrong_token"});
      return send_html(res, 401, render_login(title, "That token is not right."));
    }
    res.set_header("Set-Cookie",
                   session_cookie(cookie_name_, issue(*principal), lifetime_.count(), tls_));
    redirect(res, "/console");
    if (audit_) audit_(req, {"sign_in", *principal, 303, ""});
  });
  server.Post("/console/logout", [this](const httplib::Request& req, httplib::Response& res) {
    if (const auto origin = foreign_origin(req, tls_)) {
      if (audit_) {
        const std::optional<Session> session = of_request(req);
        audit_(req, {"sign_out", session ? session->principal : "", 403, "cross_origin"});
      }
      return send_html(res, 403,
                       "<!DOCTYPE html><title>Forbidden</title><p id=\"origin-error\">" +
                           escape_html(cross_origin_message(*origin, own_origin(req, tls_))) +
                           "</p>");
    }
    if (const std::optional<Session> session = of_request(req)) {
      const auto fields = parse_form(req.body);
      const auto field = fields.find("csrf");
      const std::string token =
          field != fields.end() ? field->second : req.get_header_value("X-CSRF-Token");
      if (!csrf_matches(*session, token)) {
        if (audit_) audit_(req, {"sign_out", session->principal, 403, "csrf_failed"});
        return send_html(res, 403, "<!DOCTYPE html><title>Forbidden</title><p>csrf_failed</p>");
      }
      if (revocations_ != nullptr) revocations_->revoke(session->id, session->expires_at);
      if (audit_) audit_(req, {"sign_out", session->principal, 303, ""});
    }
    res.set_header("Set-Cookie", session_cookie(cookie_name_, "", 0, tls_));
    redirect(res, "/console/login");
  });
  mount_assets(server);
}

}  // namespace webhooks::console
