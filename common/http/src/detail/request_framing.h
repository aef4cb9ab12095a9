// The request parser of the event loop under webhooks::http::Server (detail/event_loop.h): the
// one place where every server of the toolkit decides whether the bytes at the start of a
// connection's buffer are a well-formed HTTP/1.1 request head per RFC 9112 (and where its body
// ends), must be refused with a status, or need more bytes. Only a request it calls ready reaches
// cpp-httplib, so cpp-httplib's lenient parsing never decides framing (docs/security.md, "What the
// HTTP edge refuses"; docs/http-server.md, "The request parser"). No I/O, no clock: the answer
// depends only on the buffer, the limits and the progress saved by earlier calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace webhooks::http::detail {

enum class Framing { need_more, ready, refuse };

struct FrameResult {
  Framing kind = Framing::need_more;
  int status = 0;         // refuse: the HTTP status (400, 411, 414, 415, 431, 501, 505; 503)
  const char* code = "";  // refuse: the error.code ("bad_request", ...)
  std::string message;    // refuse: the error message
  // refuse: one more header line of the answer without its CRLF ("Accept-Encoding: identity"
  // after a 415, "Retry-After: 1" after a 503), or "".
  const char* header = "";
};

struct FramingLimits {
  std::size_t max_header_bytes = 64 * 1024;  // request line + header lines + blank line, bytes
  std::size_t max_header_count = 100;        // header fields
  std::uint64_t payload_limit = 0;           // body bytes httplib accepts (Server::payload_limit)
};

// A longer request line is answered 414 (cpp-httplib's CPPHTTPLIB_REQUEST_URI_MAX_LENGTH).
inline constexpr std::size_t kRequestLineMax = 8192;
// A longer header line is answered 431 (cpp-httplib's CPPHTTPLIB_HEADER_MAX_LENGTH).
inline constexpr std::size_t kHeaderLineMax = 8192;
// The most of a body the loop buffers, whatever the payload limit (a server without
// limit_request_bodies has none): a longer body is handed over unread.
inline constexpr std::uint64_t kBufferedBodyMax = 64ull * 1024 * 1024;

// What the parser learned of the request at the start of the buffer so far; a later call with
// more bytes (the same ones first) resumes from it. Value-initialized for each new request.
struct RequestFraming {
  std::size_t scanned = 0;         // bytes of the buffer looked at for line ends
  std::size_t line_begin = 0;      // where the head's next line starts
  std::size_t lines = 0;           // lines of the head seen (the request line first)
  std::size_t head_end = 0;        // 0 until the head's blank line is received; then its end
  std::size_t length_headers = 0;  // Content-Length fields seen
  std::uint64_t length = 0;        // the last Content-Length value, when length_valid
  bool length_valid = true;        // every Content-Length value was 1 to 19 decimal digits
  std::size_t host_headers = 0;    // Host fields seen
  std::uint32_t singletons = 0;    // a bit per kind of single header seen (duplicates: refused)
  bool chunked = false;            // a Transfer-Encoding header
  bool encoded = false;            // a Content-Encoding other than identity
  bool expect_continue = false;    // Expect: 100-continue
  bool head_method = false;        // a HEAD request (its answer has no body)
  bool body_method = false;        // POST, PUT, PATCH, DELETE, PRI: httplib reads their body
  bool http10 = false;             // HTTP/1.0 (no Host required)
  bool percent = false;            // a header value holds '%' (cpp-httplib 0.11 would decode it)
  bool framed = false;             // `body` below is the body length httplib reads
  bool over_limit = false;         // the body is over the limit: handed over unread (httplib: 413)
  std::uint64_t body = 0;          // Content-Length, once framed
  std::string method;              // once the request line is parsed
  FrameResult refusal;             // once refused: every later call answers it again
};

// Parses the request at the start of `buffer`, resuming from `state`:
// - ready: the head is well-formed and the request whole, buffer[0, head_end + body), or its
//   body is over the limit (state.over_limit: handed over unread, cpp-httplib answers 413 and the
//   loop discards the body as it comes);
// - refuse: answer the status in the result with Connection: close and close the connection (the
//   unread rest is never parsed as a request):
//     400 bad_request: a request line that is not `method SP request-target SP HTTP-version CRLF`
//       with single spaces, a target with a space, a control byte, a byte over 0x7E or '#', or
//       not in origin, absolute or asterisk (OPTIONS) form; a line ending in a bare LF; a folded
//       header line (obs-fold, RFC 9112 section 5.2); a field line without ':' or with a name
//       that is not a token (whitespace before ':'); a field value with a control byte other
//       than HTAB (CR, NUL, ...); HTTP/1.1 without Host, two Host fields or a Host that is not
//       host[:port] (RFC 9112 section 3.2); more than one line of a single header
//       (Content-Length, Host, Authorization, Content-Type, Idempotency-Key, the webhook-* and
//       providers' signature headers: single_header()); a Content-Length that is not decimal;
//       a body on a method cpp-httplib reads none for (GET, HEAD, ...);
//     411 length_required: Transfer-Encoding (send Content-Length);
//     414 uri_too_long: a request line over kRequestLineMax;
//     415 unsupported_media_type: a body with a Content-Encoding other than identity (no route
//       takes compressed bodies; header "Accept-Encoding: identity");
//     431 headers_too_large: a header line over kHeaderLineMax, more than max_header_count
//       fields, a head over max_header_bytes;
//     501 not_implemented: a method token cpp-httplib does not serve (FOO, get);
//     505 http_version_not_supported: HTTP-version other than HTTP/1.0 or HTTP/1.1;
// - need_more: the request is not whole yet.
FrameResult frame_request(std::string_view buffer, const FramingLimits& limits,
                          RequestFraming& state);

// Whether `a` and `b` are equal but for ASCII letter case (header names, codings, schemes).
constexpr bool ascii_iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const char x = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] + 32) : a[i];
    const char y = b[i] >= 'A' && b[i] <= 'Z' ? static_cast<char>(b[i] + 32) : b[i];
    if (x != y) return false;
  }
  return true;
}

// The canonical name of a header that must come at most once in a request, when `name` (any
// case) is one, else "". Such headers carry framing (Content-Length, Host), credentials
// (Authorization), the body's type or an identity a server acts on once (Idempotency-Key,
// webhook-id, the signature headers): two lines would let two parts read two different values.
std::string_view single_header(std::string_view name);

// For a head frame_request accepted, buffer[0, head_end): calls visit(name, value) for each field
// line in order, the value without its surrounding whitespace, byte for byte as received.
template <typename Visit>
void for_each_field(std::string_view head, Visit&& visit) {
  std::size_t at = head.find('\n') + 1;  // past the request line
  while (at < head.size()) {
    const std::size_t end = head.find('\n', at);
    if (end == std::string_view::npos || end == at + 1) return;  // the blank line
    const std::string_view line = head.substr(at, end - 1 - at);
    const std::size_t colon = line.find(':');
    std::size_t v = colon + 1, e = line.size();
    while (v < e && (line[v] == ' ' || line[v] == '\t')) ++v;
    while (e > v && (line[e - 1] == ' ' || line[e - 1] == '\t')) --e;
    visit(line.substr(0, colon), line.substr(v, e - v));
    at = end + 1;
  }
}

}  // namespace webhooks::http::detail
