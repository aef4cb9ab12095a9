#include "webhooks/console/origin.h"

#include <httplib.h>

#include <algorithm>

namespace webhooks::console {
namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : static_cast<char>(c);
  });
  return text;
}

// scheme://authority of an absolute http(s) URL, or std::nullopt.
std::optional<std::string> origin_of_url(const std::string& url) {
  const std::string text = lower(url);
  for (const std::string scheme : {"http://", "https://"}) {
    if (!text.starts_with(scheme)) continue;
    const std::size_t end = text.find_first_of("/?#", scheme.size());
    const std::string origin = text.substr(0, end);
    if (origin.size() == scheme.size()) return std::nullopt;
    return origin;
  }
  return std::nullopt;
}

}  // namespace

std::string own_origin(const httplib::Request& req, bool https) {
  return (https ? "https://" : "http://") + lower(req.get_header_value("Host"));
}

std::optional<std::string> foreign_origin(const httplib::Request& req, bool https) {
  const std::string own = own_origin(req, https);
  if (req.has_header("Origin")) {
    const std::string origin = lower(req.get_header_value("Origin"));
    if (origin == own) return std::nullopt;
    return origin;
  }
  if (!req.has_header("Referer")) return std::nullopt;
  const std::optional<std::string> origin = origin_of_url(req.get_header_value("Referer"));
  if (!origin) return std::string("(unreadable)");
  if (*origin == own) return std::nullopt;
  return origin;
}

}  // namespace webhooks::console
