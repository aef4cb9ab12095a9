#include "webhooks/console/assets.h"

#include <httplib.h>

#include <functional>
#include <string>

namespace webhooks::console {
namespace detail {
std::string_view asset_css();
std::string_view asset_js();
}  // namespace detail

namespace {

// FNV-1a 64: stable across runs and builds of the same content.
std::string etag_of(std::string_view content) {
  std::uint64_t hash = 14695981039346656037ULL;
  for (const char c : content) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ULL;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (int shift = 60; shift >= 0; shift -= 4) out += kHex[(hash >> shift) & 15];
  return out + "\"";
}

void serve(http::Server& server, const std::string& path, std::string_view content,
           const char* type) {
  const std::string etag = etag_of(content);
  server.Get(path, [content, type, etag](const httplib::Request& req, httplib::Response& res) {
    res.set_header("Cache-Control", "public, max-age=3600");
    res.set_header("ETag", etag);
    res.set_header("X-Content-Type-Options", "nosniff");
    if (req.get_header_value("If-None-Match") == etag) {
      res.status = 304;
      return;
    }
    res.set_content(std::string(content), type);
  });
}

}  // namespace

std::string_view stylesheet() { return detail::asset_css(); }
std::string_view script() { return detail::asset_js(); }

void mount_assets(http::Server& server) {
  serve(server, "/console/assets/console.css", stylesheet(), "text/css; charset=utf-8");
  serve(server, "/console/assets/console.js", script(), "text/javascript; charset=utf-8");
}

}  // namespace webhooks::console
