// The same-origin check of the console's form posts (sign-in, sign-out): a browser names the page
// a POST comes from in `Origin` (RFC 6454 section 7; Fetch), or at least in `Referer` (RFC 9110
// section 10.1.3). A post from a page of another origin (login CSRF: signing a victim into the
// attacker's session) is refused.
#pragma once

#include <optional>
#include <string>

#include "webhooks/http_server.h"

namespace webhooks::console {

// The origin the console is served on: "https://" (when `https`: TLS, or a TLS proxy in front)
// or "http://", followed by the request's Host header as sent (ASCII letters lower-cased).
std::string own_origin(const httplib::Request& req, bool https);

// The origin a request names when it is not `own_origin(req, https)`: its `Origin` header (an
// opaque "null" too), or when that is absent the scheme://host[:port] of its `Referer`, or
// "(unreadable)" for a Referer that is no absolute http(s) URL. std::nullopt when it names this
// origin or neither header is present (a client that is no browser). Compared ASCII
// case-insensitively. Throws nothing.
std::optional<std::string> foreign_origin(const httplib::Request& req, bool https);

}  // namespace webhooks::console
