// The consoles' page layout (docs/console.md): one HTML document with the title, the navigation,
// the CSRF meta tag the script reads, the sign-out button, and the body the caller built (with
// every dynamic value passed through escape_html). Pages link /console/assets/console.css and
// console.js (assets.h) and run no inline script, so the answer's Content-Security-Policy allows
// only the console's own files.
#pragma once

#include <string>
#include <vector>

#include "webhooks/http_server.h"

namespace webhooks::console {

struct NavLink {
  std::string id;     // the <a>'s id, e.g. "nav-events"
  std::string href;   // "/console/events"
  std::string label;  // "Events"
};

struct Page {
  std::string console_title;  // "Publisher console"
  std::string title;          // this page's, e.g. "Event 0190…"
  std::vector<NavLink> nav;
  std::string active_nav;  // the id of the current page's link (marked aria-current)
  std::string csrf_token;  // the session's; empty on the sign-in page (no sign-out button)
  std::string body;        // HTML, already escaped
};

// The whole document. Escapes the titles, links and token itself.
std::string render_page(const Page& page);

// The sign-in page: form#login-form (POST /console/login) with input#token (password) and
// button#sign-in, and p#login-error holding `error` when it is not empty.
std::string render_login(const std::string& console_title, const std::string& error);

// Writes `html` as the answer (text/html; charset=utf-8) with `status` and the headers every
// console page carries: Cache-Control: no-store, Content-Security-Policy (default-src 'self';
// frame-ancestors 'none'), X-Content-Type-Options: nosniff, Referrer-Policy: same-origin (a form
// post then carries its Origin, origin.h).
void send_html(httplib::Response& res, int status, std::string html);

// 303 See Other to `location` (a path on this server).
void redirect(httplib::Response& res, const std::string& location);

}  // namespace webhooks::console
