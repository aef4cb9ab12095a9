// The request parser of the event loop under webhooks::http::Server (detail/request_framing.h):
// RFC 9112 sections 2.2 (message parsing), 3 (request line), 3.2 (Host), 5 (field syntax,
// obs-fold), 6 (message body length); RFC 9110 section 5.5 (field values).
#include <algorithm>
#include <array>
#include <iterator>

#include "detail/request_framing.h"

namespace webhooks::http::detail {
namespace {

// Byte classes, one table lookup a byte.
enum : std::uint8_t {
  kToken = 1,   // tchar (RFC 9110, section 5.6.2): a method or field name
  kValue = 2,   // field-vchar, SP or HTAB (RFC 9110, section 5.5): anything but controls
  kTarget = 4,  // a request-target byte: visible ASCII but '#'
  kHost = 8,    // reg-name: unreserved, sub-delims, '%' (RFC 3986, section 3.2.2)
};

constexpr std::array<std::uint8_t, 256> make_classes() {
  std::array<std::uint8_t, 256> t{};
  for (int c = 0; c < 256; ++c) {
    std::uint8_t k = 0;
    const bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (alnum ||
        std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos) {
      k |= kToken;
    }
    if (c == '\t' || (c >= 0x20 && c != 0x7F)) k |= kValue;
    if (c > 0x20 && c < 0x7F && c != '#') k |= kTarget;
    if (alnum ||
        std::string_view("-._~!$&'()*+,;=%").find(static_cast<char>(c)) != std::string_view::npos) {
      k |= kHost;
    }
    t[static_cast<std::size_t>(c)] = k;
  }
  return t;
}
constexpr std::array<std::uint8_t, 256> kClasses = make_classes();

bool all_of(std::string_view text, std::uint8_t cls) {
  return std::all_of(text.begin(), text.end(), [cls](char c) {
    return (kClasses[static_cast<unsigned char>(c)] & cls) != 0;
  });
}

constexpr std::string_view kSingleHeaders[] = {"Content-Length",
                                               "Host",
                                               "Authorization",
                                               "Content-Type",
                                               "Idempotency-Key",
                                               "X-Idempotency-Key",
                                               "webhook-id",
                                               "webhook-timestamp",
                                               "webhook-signature",
                                               "svix-id",
                                               "svix-timestamp",
                                               "svix-signature",
                                               "Stripe-Signature",
                                               "X-Hub-Signature-256",
                                               "X-GitHub-Delivery",
                                               "X-Shopify-Hmac-Sha256",
                                               "X-Shopify-Webhook-Id",
                                               "shopify-hmac-sha256",
                                               "shopify-webhook-id",
                                               "X-Slack-Signature",
                                               "X-Slack-Request-Timestamp",
                                               "X-CSRF-Token"};
static_assert(std::size(kSingleHeaders) <= 32, "RequestFraming::singletons has 32 bits");

// The index of `name` in kSingleHeaders, or -1.
int single_index(std::string_view name) {
  for (std::size_t i = 0; i < std::size(kSingleHeaders); ++i) {
    if (ascii_iequals(name, kSingleHeaders[i])) return static_cast<int>(i);
  }
  return -1;
}

constexpr std::string_view kMethods[] = {"GET",     "HEAD",    "POST",  "PUT",   "DELETE",
                                         "CONNECT", "OPTIONS", "TRACE", "PATCH", "PRI"};

FrameResult refusal(int status, const char* code, std::string message, const char* header = "") {
  return {Framing::refuse, status, code, std::move(message), header};
}
FrameResult bad_request(std::string message) {
  return refusal(400, "bad_request", std::move(message));
}

// "host[:port]" (RFC 9110, section 7.2; RFC 3986, section 3.2.2): a reg-name or IPv4 address, or
// an IP-literal in brackets, then an optional port of digits. An empty value is allowed.
bool valid_host(std::string_view host) {
  std::size_t end = 0;
  if (!host.empty() && host[0] == '[') {
    end = host.find(']');
    if (end == std::string_view::npos || end < 2) return false;
    const std::string_view literal = host.substr(1, end - 1);
    if (!std::all_of(literal.begin(), literal.end(), [](char c) {
          return c == ':' || (kClasses[static_cast<unsigned char>(c)] & kHost) != 0;
        })) {
      return false;
    }
    ++end;
  } else {
    end = std::min(host.find(':'), host.size());
    if (!all_of(host.substr(0, end), kHost)) return false;
  }
  if (end == host.size()) return true;
  const std::string_view port = host.substr(end);
  return port[0] == ':' && port.find_first_not_of("0123456789", 1) == std::string_view::npos;
}

// Parses the request line (without its CRLF) into `s`; a refusal, or need_more when it is good.
FrameResult parse_request_line(std::string_view line, RequestFraming& s) {
  const std::size_t sp1 = line.find(' ');
  const std::size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    return bad_request("the request line must be: method, one space, target, one space, version");
  }
  const std::string_view method = line.substr(0, sp1);
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (method.empty() || !all_of(method, kToken)) {
    return bad_request("the request method is not a token");
  }
  if (target.empty() || !all_of(target, kTarget)) {
    return bad_request(
        "the request target must be visible ASCII without '#' (percent-encode other bytes)");
  }
  if (version.size() != 8 || !version.starts_with("HTTP/") || version[6] != '.' ||
      version[5] < '0' || version[5] > '9' || version[7] < '0' || version[7] > '9') {
    return bad_request("the request line does not end with an HTTP version (HTTP/1.1)");
  }
  if (version != "HTTP/1.1" && version != "HTTP/1.0") {
    return refusal(505, "http_version_not_supported",
                   "the version " + std::string(version) + " is not served; send HTTP/1.1");
  }
  if (std::find(std::begin(kMethods), std::end(kMethods), method) == std::end(kMethods)) {
    return refusal(501, "not_implemented",
                   "the method " + std::string(method.substr(0, 32)) + " is not served");
  }
  const bool origin = target[0] == '/';
  const bool asterisk = target == "*" && method == "OPTIONS";
  const bool absolute = target.find("://") != std::string_view::npos &&
                        (ascii_iequals(target.substr(0, 7), "http://") ||
                         ascii_iequals(target.substr(0, 8), "https://"));
  if (!origin && !asterisk && !absolute && method != "CONNECT") {
    return bad_request("the request target must start with '/'");
  }
  s.method = std::string(method);
  s.http10 = version == "HTTP/1.0";
  s.head_method = method == "HEAD";
  s.body_method = method == "POST" || method == "PUT" || method == "PATCH" || method == "DELETE" ||
                  method == "PRI";
  return {};
}

// Parses one field line (without its CRLF) into `s`; a refusal, or need_more when it is good.
FrameResult parse_field_line(std::string_view line, RequestFraming& s) {
  if (line[0] == ' ' || line[0] == '\t') {
    return bad_request(
        "a header line starts with whitespace: folded header lines (obs-fold) "
        "are not accepted (RFC 9112, section 5.2)");
  }
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos) return bad_request("a header line has no ':'");
  const std::string_view name = line.substr(0, colon);
  if (name.empty()) return bad_request("a header line has an empty name");
  if (!all_of(name, kToken)) {
    return bad_request(name.find_first_of(" \t") != std::string_view::npos
                           ? "a header name has whitespace before its ':'"
                           : "a header name holds a character that is not allowed");
  }
  std::size_t v = colon + 1, e = line.size();
  while (v < e && (line[v] == ' ' || line[v] == '\t')) ++v;
  while (e > v && (line[e - 1] == ' ' || line[e - 1] == '\t')) --e;
  const std::string_view value = line.substr(v, e - v);
  if (!all_of(value, kValue)) {
    return bad_request("the value of header " + std::string(name.substr(0, 64)) +
                       " holds a control character (CR, LF, NUL, ...)");
  }
  if (value.find('%') != std::string_view::npos) s.percent = true;
  if (const int single = single_index(name); single >= 0) {
    const std::uint32_t bit = 1u << single;
    if (s.singletons & bit) {
      return bad_request("send one " + std::string(kSingleHeaders[single]) + " header");
    }
    s.singletons |= bit;
  }
  if (ascii_iequals(name, "content-length")) {
    ++s.length_headers;
    s.length_valid = s.length_valid && !value.empty() && value.size() <= 19 &&
                     value.find_first_not_of("0123456789") == std::string_view::npos;
    if (s.length_valid) s.length = std::stoull(std::string(value));
  } else if (ascii_iequals(name, "host")) {
    ++s.host_headers;
    if (!valid_host(value)) return bad_request("the Host header is not host[:port]");
  } else if (ascii_iequals(name, "transfer-encoding")) {
    s.chunked = true;
  } else if (ascii_iequals(name, "content-encoding")) {
    if (!ascii_iequals(value, "identity")) s.encoded = true;
  } else if (ascii_iequals(name, "expect") && value == "100-continue") {
    s.expect_continue = true;
  }
  return {};
}

// Once the head is whole: what the fields together say of the request's framing.
FrameResult check_head(RequestFraming& s) {
  if (s.host_headers == 0 && !s.http10) {
    return bad_request("HTTP/1.1 requests must carry a Host header");
  }
  if (s.chunked) {
    return refusal(411, "length_required",
                   "send the body with a Content-Length header; Transfer-Encoding (chunked) "
                   "bodies are not accepted");
  }
  if (!s.length_valid) {
    return bad_request("Content-Length must be a decimal number of bytes");
  }
  const std::uint64_t body = s.length_headers == 1 ? s.length : 0;
  if (body > 0 && !s.body_method) return bad_request(s.method + " requests take no body");
  if (body > 0 && s.encoded) {
    return refusal(415, "unsupported_media_type",
                   "send the body without Content-Encoding: compressed request bodies are not "
                   "accepted",
                   "Accept-Encoding: identity");
  }
  return {};
}

}  // namespace

std::string_view single_header(std::string_view name) {
  const int i = single_index(name);
  return i < 0 ? std::string_view() : kSingleHeaders[i];
}

FrameResult frame_request(std::string_view in, const FramingLimits& limits, RequestFraming& c) {
  if (c.refusal.kind == Framing::refuse) return c.refusal;
  const auto refuse = [&](FrameResult r) {
    c.refusal = std::move(r);
    return c.refusal;
  };
  const auto too_large = [&](std::string message) {
    return refuse(refusal(431, "headers_too_large", std::move(message)));
  };
  const auto head_too_large = [&] {
    return too_large("the request head is larger than " + std::to_string(limits.max_header_bytes) +
                     " bytes");
  };
  if (c.head_end == 0) {
    while (true) {
      const std::size_t nl = in.find('\n', c.scanned);
      const std::size_t begin = c.line_begin;
      if (nl == std::string_view::npos) {
        c.scanned = in.size();
        if (c.lines == 0 && in.size() - begin > kRequestLineMax + 1) {
          return refuse(refusal(
              414, "uri_too_long",
              "the request line is longer than " + std::to_string(kRequestLineMax) + " bytes"));
        }
        if (c.lines > 0 && in.size() - begin > kHeaderLineMax + 1) {
          return too_large("a header line is longer than " + std::to_string(kHeaderLineMax) +
                           " bytes");
        }
        if (in.size() > limits.max_header_bytes) return head_too_large();
        return {};
      }
      if (nl == begin || in[nl - 1] != '\r') {
        return refuse(bad_request("a line of the request head ends in a bare LF (send CRLF)"));
      }
      const std::string_view line = in.substr(begin, nl - 1 - begin);
      if (c.lines == 0) {
        if (line.size() > kRequestLineMax) {
          return refuse(refusal(
              414, "uri_too_long",
              "the request line is longer than " + std::to_string(kRequestLineMax) + " bytes"));
        }
        if (FrameResult r = parse_request_line(line, c); r.kind == Framing::refuse) {
          return refuse(std::move(r));
        }
      } else if (line.empty()) {
        c.head_end = nl + 1;
        break;
      } else {
        if (line.size() > kHeaderLineMax) {
          return too_large("a header line is longer than " + std::to_string(kHeaderLineMax) +
                           " bytes");
        }
        if (c.lines > limits.max_header_count) {
          return too_large("the request has more than " + std::to_string(limits.max_header_count) +
                           " header fields");
        }
        if (FrameResult r = parse_field_line(line, c); r.kind == Framing::refuse) {
          return refuse(std::move(r));
        }
      }
      ++c.lines;
      c.line_begin = c.scanned = nl + 1;
      if (c.scanned > limits.max_header_bytes) return head_too_large();
    }
    if (c.head_end > limits.max_header_bytes) return head_too_large();
    if (FrameResult r = check_head(c); r.kind == Framing::refuse) return refuse(std::move(r));
    c.framed = true;
    c.body = c.length_headers == 1 ? c.length : 0;
  }
  // A body over the limit is not waited for: httplib answers 413 unread and the loop discards it.
  if (c.body > std::min<std::uint64_t>(limits.payload_limit, kBufferedBodyMax)) {
    c.over_limit = true;
    return {Framing::ready, 0, "", {}, ""};
  }
  if (in.size() >= c.head_end + c.body) return {Framing::ready, 0, "", {}, ""};
  return {};
}

}  // namespace webhooks::http::detail
