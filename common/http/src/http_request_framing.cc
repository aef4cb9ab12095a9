// Request framing for the event loop under webhooks::http::Server (detail/request_framing.h).
#include <algorithm>
#include <cctype>
#include <iterator>

#include "detail/request_framing.h"

namespace webhooks::http::detail {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != b[i]) return false;
  }
  return true;
}

// Whether cpp-httplib can parse this request line (with its CRLF): a known method, a target, and
// HTTP/1.0 or HTTP/1.1. Those it cannot it answers 400 at once, without reading further.
bool request_line_parses(std::string_view line) {
  static constexpr std::string_view kMethods[] = {"GET",     "HEAD",    "POST",  "PUT",   "DELETE",
                                                  "CONNECT", "OPTIONS", "TRACE", "PATCH", "PRI"};
  const std::size_t space = line.find(' ');
  if (space == std::string_view::npos) return false;
  const std::string_view method = line.substr(0, space);
  if (std::find(std::begin(kMethods), std::end(kMethods), method) == std::end(kMethods)) {
    return false;
  }
  return line.ends_with(" HTTP/1.1\r\n") || line.ends_with(" HTTP/1.0\r\n");
}

bool decimal(const std::string& text) {
  return !text.empty() && text.size() <= 19 &&
         text.find_first_not_of("0123456789") == std::string::npos;
}

// Records the method's framing: HEAD (an answer without a body), or one whose body httplib reads.
void note_method(std::string_view in, RequestFraming& c) {
  c.head_method = in.starts_with("HEAD ");
  c.body_method = in.starts_with("POST ") || in.starts_with("PUT ") || in.starts_with("PATCH ") ||
                  in.starts_with("DELETE ") || in.starts_with("PRI ");
}

// Records what framing needs from one header field line (without its LF): Content-Length,
// Transfer-Encoding, Expect: 100-continue. A line without a colon is left to httplib.
void note_header_field(std::string_view line, RequestFraming& c) {
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos) return;
  const std::string_view name = line.substr(0, colon);
  std::size_t v = colon + 1, e = line.size();
  while (v < e && (line[v] == ' ' || line[v] == '\t')) ++v;
  while (e > v && (line[e - 1] == ' ' || line[e - 1] == '\t' || line[e - 1] == '\r')) --e;
  const std::string_view value = line.substr(v, e - v);
  if (iequals(name, "content-length")) {
    ++c.length_headers;
    c.length_value = std::string(value);
  } else if (iequals(name, "transfer-encoding")) {
    c.chunked = true;
  } else if (iequals(name, "expect") && value == "100-continue") {
    c.expect_continue = true;
  }
}

}  // namespace

FrameResult frame_request(std::string_view in, const FramingLimits& limits, RequestFraming& c) {
  const auto ready = [] { return FrameResult{Framing::ready, 0, "", {}}; };
  const auto too_large = [&](std::string message) {
    return FrameResult{Framing::refuse, 431, "headers_too_large", std::move(message)};
  };
  const auto head_too_large = [&] {
    return too_large("the request head is larger than " + std::to_string(limits.max_header_bytes) +
                     " bytes");
  };
  if (c.head_end == 0) {
    while (true) {
      const std::size_t nl = in.find('\n', c.scanned);
      if (nl == std::string_view::npos) {
        c.scanned = in.size();
        // A request line httplib will answer 414 (it reads the rest of the head itself).
        if (c.lines == 0 && in.size() > kRequestLineMax) return ready();
        if (in.size() > limits.max_header_bytes) return head_too_large();
        return {};
      }
      const std::size_t begin = c.line_begin;
      if (c.lines == 0) {
        // httplib answers these itself, 400 and 414, without reading further.
        if (nl == 0 || in[nl - 1] != '\r' || nl + 1 - begin > kRequestLineMax) {
          return ready();
        }
        if (!request_line_parses(in.substr(begin, nl + 1 - begin))) return ready();
        note_method(in, c);
      } else if (nl == begin + 1 && in[begin] == '\r') {
        c.head_end = nl + 1;
        break;
      } else {
        if (nl + 1 - begin > kHeaderLineMax) return ready();  // httplib: 400
        if (c.lines > limits.max_header_count) {
          return too_large("the request has more than " + std::to_string(limits.max_header_count) +
                           " header fields");
        }
        note_header_field(in.substr(begin, nl - begin), c);
      }
      ++c.lines;
      c.line_begin = c.scanned = nl + 1;
      if (c.scanned > limits.max_header_bytes) return head_too_large();
    }
  }
  if (c.head_end > limits.max_header_bytes) return head_too_large();
  if (c.chunked || c.length_headers > 1 || (c.length_headers == 1 && !decimal(c.length_value))) {
    return ready();  // limit_request_bodies refuses it and closes (411, 400)
  }
  c.framed = true;
  c.body = c.length_headers == 1 ? std::stoull(c.length_value) : 0;
  // A body httplib does not read (a GET's: limit_request_bodies refuses it and closes), or one
  // over the limit, is not waited for.
  if ((c.body > 0 && !c.body_method) ||
      c.body > std::min<std::uint64_t>(limits.payload_limit, kBufferedBodyMax)) {
    c.over_limit = true;  // httplib answers 413 unread; the body is then discarded
    return ready();
  }
  if (in.size() >= c.head_end + c.body) return ready();
  return {};
}

}  // namespace webhooks::http::detail
