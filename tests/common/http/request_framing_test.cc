// detail::frame_request (common/http/src/detail/request_framing.h): the strict request parser of
// the event loop under webhooks::http::Server, before it hands a request to cpp-httplib.
#include "detail/request_framing.h"

#include <catch2/catch.hpp>
#include <cctype>
#include <string>
#include <utility>
#include <vector>

using namespace webhooks::http::detail;

namespace {

const FramingLimits kLimits{/*max_header_bytes=*/80, /*max_header_count=*/3, /*payload_limit=*/100};
const FramingLimits kWide{/*max_header_bytes=*/1 << 20, /*max_header_count=*/100,
                          /*payload_limit=*/100};

// A string literal's bytes, NULs included.
template <std::size_t N>
std::string bytes(const char (&literal)[N]) {
  return std::string(literal, N - 1);
}

FrameResult frame_once(const std::string& buffer, RequestFraming& state,
                       const FramingLimits& limits = kLimits) {
  state = RequestFraming{};
  return frame_request(buffer, limits, state);
}

void check_need_more(const FrameResult& r) {
  CHECK(r.kind == Framing::need_more);
  CHECK(r.status == 0);
  CHECK(std::string(r.code).empty());
  CHECK(r.message.empty());
}

void check_ready(const FrameResult& r) {
  CHECK(r.kind == Framing::ready);
  CHECK(r.status == 0);
  CHECK(std::string(r.code).empty());
  CHECK(r.message.empty());
  CHECK(std::string(r.header).empty());
}

void check_refused(const FrameResult& r, int status, const std::string& code,
                   const std::string& message, const std::string& header = "") {
  CHECK(r.kind == Framing::refuse);
  CHECK(r.status == status);
  CHECK(std::string(r.code) == code);
  CHECK(r.message == message);
  CHECK(std::string(r.header) == header);
}

void check_too_large(const FrameResult& r, const std::string& message) {
  check_refused(r, 431, "headers_too_large", message);
}

// `request` refused 400 bad_request with `message`, also when its bytes come one at a time.
void check_bad(const std::string& request, const std::string& message) {
  INFO(request);
  RequestFraming s;
  check_refused(frame_once(request, s, kWide), 400, "bad_request", message);
  CHECK_FALSE(s.framed);
  RequestFraming bytes;
  FrameResult last;
  for (std::size_t n = 1; n <= request.size() && last.kind == Framing::need_more; ++n) {
    last = frame_request(std::string_view(request).substr(0, n), kWide, bytes);
  }
  check_refused(last, 400, "bad_request", message);
  // Refused once, refused again whatever follows.
  check_refused(frame_request(request + "GET / HTTP/1.1\r\nHost: a\r\n\r\n", kWide, bytes), 400,
                "bad_request", message);
}

}  // namespace

TEST_CASE("A complete GET head is ready, with no body") {
  RequestFraming s;
  const std::string head = "GET /a HTTP/1.1\r\nHost: x\r\n\r\n";  // 17 + 9 + 2 bytes
  check_ready(frame_once(head, s));
  CHECK(s.head_end == 28);
  CHECK(s.lines == 2);
  CHECK(s.framed);
  CHECK(s.body == 0);
  CHECK(s.method == "GET");
  CHECK(s.host_headers == 1);
  CHECK_FALSE(s.over_limit);
  CHECK_FALSE(s.head_method);
  CHECK_FALSE(s.body_method);
  CHECK_FALSE(s.chunked);
  CHECK_FALSE(s.http10);
  CHECK_FALSE(s.percent);
  CHECK(s.length_headers == 0);

  // HTTP/1.0 needs no Host.
  check_ready(frame_once("HEAD /a HTTP/1.0\r\n\r\n", s));
  CHECK(s.head_method);
  CHECK(s.http10);
  CHECK(s.head_end == 20);

  // The other target forms: absolute, and asterisk for OPTIONS.
  check_ready(frame_once("GET http://x/a?b=c HTTP/1.1\r\nHost: x\r\n\r\n", s));
  check_ready(frame_once("OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", s));
}

TEST_CASE("A head split in the middle of its blank line needs more, then is ready") {
  RequestFraming s;
  std::string buffer = "GET /a HTTP/1.1\r\nHost: x\r\n";
  check_need_more(frame_request(buffer, kLimits, s));
  CHECK(s.head_end == 0);
  CHECK(s.scanned == 26);
  buffer += "\r";
  check_need_more(frame_request(buffer, kLimits, s));
  CHECK(s.head_end == 0);
  CHECK(s.scanned == 27);
  CHECK(s.line_begin == 26);
  buffer += "\n";
  check_ready(frame_request(buffer, kLimits, s));
  CHECK(s.head_end == 28);
  CHECK(s.framed);

  // The same bytes one at a time: need_more on every prefix, then the same result.
  RequestFraming byte_by_byte;
  for (std::size_t n = 1; n < buffer.size(); ++n) {
    INFO(n);
    check_need_more(frame_request(buffer.substr(0, n), kLimits, byte_by_byte));
  }
  check_ready(frame_request(buffer, kLimits, byte_by_byte));
  CHECK(byte_by_byte.head_end == 28);
  CHECK(byte_by_byte.lines == 2);
}

TEST_CASE("A POST with Content-Length is ready once its body is whole") {
  RequestFraming s;
  const std::string head = "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n";  // 18+9+19+2
  check_need_more(frame_once(head + "hel", s));
  CHECK(s.head_end == 48);
  CHECK(s.framed);
  CHECK(s.body == 5);
  CHECK(s.body_method);
  CHECK(s.length == 5);
  CHECK_FALSE(s.over_limit);

  check_ready(frame_request(head + "hello", kLimits, s));
  CHECK(s.head_end == 48);
  CHECK(s.body == 5);

  // Bytes of the next request after the body do not change the framing of this one.
  check_ready(frame_once(head + "helloGET / HTTP/1.1\r\n", s));
  CHECK(s.head_end == 48);
  CHECK(s.body == 5);

  // Trimmed value, any case of the name; Expect: 100-continue is noted.
  check_need_more(frame_once(
      "PUT /p HTTP/1.1\r\nHost: x\r\ncontent-LENGTH: \t7 \r\nExpect: 100-continue\r\n\r\n", s,
      kWide));
  CHECK(s.body == 7);
  CHECK(s.expect_continue);
}

TEST_CASE("More header fields than the limit are refused 431") {
  RequestFraming s;
  const std::string three = "GET / HTTP/1.1\r\nHost: x\r\nB: 2\r\nC: 3\r\n";
  check_ready(frame_once(three + "\r\n", s));
  CHECK(s.lines == 4);
  check_too_large(frame_once(three + "D: 4\r\n\r\n", s),
                  "the request has more than 3 header fields");
  // Refused as soon as the fourth field's line is there.
  check_too_large(frame_once(three + "D: 4\r\n", s), "the request has more than 3 header fields");
  check_need_more(frame_once(three + "D: 4", s));
}

TEST_CASE("A head larger than the limit is refused 431") {
  RequestFraming s;
  const std::string line = "GET / HTTP/1.1\r\nHost: x\r\n";  // 25 bytes
  // 25 + 53 + 2 = 80 bytes: at the limit.
  check_ready(frame_once(line + "X: " + std::string(48, 'a') + "\r\n\r\n", s));
  CHECK(s.head_end == 80);
  // 25 + 54 + 2 = 81 bytes: the blank line ends the head past the limit.
  check_too_large(frame_once(line + "X: " + std::string(49, 'a') + "\r\n\r\n", s),
                  "the request head is larger than 80 bytes");
  check_need_more(frame_once(line + "X: " + std::string(49, 'a') + "\r\n", s));
  // A header line that ends past the limit (25 + 56 = 81), before any blank line.
  check_too_large(frame_once(line + "X: " + std::string(51, 'a') + "\r\n", s),
                  "the request head is larger than 80 bytes");
  // No line end yet, but more bytes than a head may have.
  check_too_large(frame_once(line + "X: " + std::string(53, 'a'), s),
                  "the request head is larger than 80 bytes");
  check_need_more(frame_once(line + "X: " + std::string(52, 'a'), s));
}

TEST_CASE("Long lines: a request line over 8192 bytes is 414, a header line 431") {
  RequestFraming s;
  const std::string uri_message = "the request line is longer than 8192 bytes";
  check_need_more(frame_once("GET /" + std::string(8188, 'a'), s, kWide));  // 8193 bytes
  check_refused(frame_once("GET /" + std::string(8189, 'a'), s, kWide), 414, "uri_too_long",
                uri_message);
  check_refused(frame_once("GET /" + std::string(8180, 'a') + " HTTP/1.1\r\n", s, kWide), 414,
                "uri_too_long", uri_message);
  check_ready(frame_once("GET /" + std::string(8178, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n", s,
                         kWide));  // 8192 bytes before the CRLF

  const std::string line = "GET / HTTP/1.1\r\nHost: x\r\nX: ";
  check_ready(frame_once(line + std::string(8189, 'a') + "\r\n\r\n", s, kWide));
  check_too_large(frame_once(line + std::string(8190, 'a') + "\r\n", s, kWide),
                  "a header line is longer than 8192 bytes");
  check_too_large(frame_once(line + std::string(8191, 'a'), s, kWide),
                  "a header line is longer than 8192 bytes");
}

TEST_CASE("Malformed request lines are refused 400, other versions 505, unknown methods 501") {
  const std::string shape =
      "the request line must be: method, one space, target, one space, version";
  check_bad("GET  / HTTP/1.1\r\nHost: a\r\n\r\n", shape);
  check_bad("GET /  HTTP/1.1\r\nHost: a\r\n\r\n", shape);
  check_bad("GET / HTTP/1.1 \r\nHost: a\r\n\r\n", shape);
  check_bad("GET\r\n\r\n", shape);
  check_bad("GET /\r\n\r\n", shape);
  check_bad("GET\t/ HTTP/1.1\r\n\r\n", shape);
  check_bad("G(T / HTTP/1.1\r\nHost: a\r\n\r\n", "the request method is not a token");
  check_bad(" / HTTP/1.1\r\nHost: a\r\n\r\n", "the request method is not a token");
  const std::string target =
      "the request target must be visible ASCII without '#' (percent-encode other bytes)";
  check_bad("GET /\xff HTTP/1.1\r\nHost: a\r\n\r\n", target);
  check_bad("GET /a\x01 HTTP/1.1\r\nHost: a\r\n\r\n", target);
  check_bad("GET /a\x7f HTTP/1.1\r\nHost: a\r\n\r\n", target);
  check_bad("GET /a#b HTTP/1.1\r\nHost: a\r\n\r\n", target);
  check_bad(bytes("GET /a\0b HTTP/1.1\r\nHost: a\r\n\r\n"), target);
  check_bad("GET a HTTP/1.1\r\nHost: a\r\n\r\n", "the request target must start with '/'");
  check_bad("GET * HTTP/1.1\r\nHost: a\r\n\r\n", "the request target must start with '/'");
  const std::string version = "the request line does not end with an HTTP version (HTTP/1.1)";
  check_bad("GET / HTTP/1\r\nHost: a\r\n\r\n", version);
  check_bad("GET / http/1.1\r\nHost: a\r\n\r\n", version);
  check_bad("GET / HTTP/1.10\r\nHost: a\r\n\r\n", version);

  RequestFraming s;
  check_refused(frame_once("GET / HTTP/1.2\r\n", s), 505, "http_version_not_supported",
                "the version HTTP/1.2 is not served; send HTTP/1.1");
  check_refused(frame_once("PRI * HTTP/2.0\r\n", s), 505, "http_version_not_supported",
                "the version HTTP/2.0 is not served; send HTTP/1.1");
  check_refused(frame_once("FOO / HTTP/1.1\r\n", s), 501, "not_implemented",
                "the method FOO is not served");
  check_refused(frame_once("get / HTTP/1.1\r\n", s), 501, "not_implemented",
                "the method get is not served");
}

TEST_CASE("Malformed header lines are refused 400") {
  // obs-fold after Content-Length: the line " 4" would otherwise be part of its value.
  check_bad("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n 4\r\n\r\nabcd",
            "a header line starts with whitespace: folded header lines (obs-fold) are not "
            "accepted (RFC 9112, section 5.2)");
  check_bad("GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\n\t2\r\n\r\n",
            "a header line starts with whitespace: folded header lines (obs-fold) are not "
            "accepted (RFC 9112, section 5.2)");
  const std::string bare_lf = "a line of the request head ends in a bare LF (send CRLF)";
  check_bad("GET / HTTP/1.1\nHost: a\r\n\r\n", bare_lf);
  check_bad("GET / HTTP/1.1\r\nHost: a\nX: y\r\n\r\n", bare_lf);
  check_bad("GET / HTTP/1.1\r\nHost: a\r\n\n", bare_lf);
  check_bad("\n", bare_lf);
  const std::string control = "the value of header X holds a control character (CR, LF, NUL, ...)";
  check_bad("GET / HTTP/1.1\r\nHost: a\r\nX: a\rb\r\n\r\n", control);
  check_bad(bytes("GET / HTTP/1.1\r\nHost: a\r\nX: a\0b\r\n\r\n"), control);
  check_bad("GET / HTTP/1.1\r\nHost: a\r\nX: a\x01\r\n\r\n", control);
  check_bad("GET / HTTP/1.1\r\nHost: a\r\nX: \x7f\r\n\r\n", control);
  check_bad("GET / HTTP/1.1\r\nHost: a\r\nX: a\r\r\n\r\n", control);
  check_bad("GET / HTTP/1.1\r\nHost: a\r\nX\r\n\r\n", "a header line has no ':'");
  check_bad("GET / HTTP/1.1\r\nHost: a\r\n: x\r\n\r\n", "a header line has an empty name");
  check_bad("POST / HTTP/1.1\r\nHost: a\r\nContent-Length : 4\r\n\r\nabcd",
            "a header name has whitespace before its ':'");
  check_bad("GET / HTTP/1.1\r\nHost: a\r\nX(y): 1\r\n\r\n",
            "a header name holds a character that is not allowed");

  // Tabs, spaces and bytes over 0x7F are allowed inside values; surrounding whitespace is not
  // part of them.
  RequestFraming s;
  check_ready(frame_once("GET / HTTP/1.1\r\nHost: a\r\nX: a\tb c\xe9\r\n\r\n", s));
}

TEST_CASE("Host: HTTP/1.1 needs exactly one, of the form host[:port]") {
  check_bad("GET / HTTP/1.1\r\n\r\n", "HTTP/1.1 requests must carry a Host header");
  check_bad("GET / HTTP/1.1\r\nX: 1\r\n\r\n", "HTTP/1.1 requests must carry a Host header");
  check_bad("GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", "send one Host header");
  check_bad("GET / HTTP/1.0\r\nHost: a\r\nhost: b\r\n\r\n", "send one Host header");
  for (const char* host : {"a b", "a/b", "a:b", "a:1:2", "[::1", "[]", "a@b", "[::1]x", "a\"b"}) {
    check_bad(std::string("GET / HTTP/1.1\r\nHost: ") + host + "\r\n\r\n",
              "the Host header is not host[:port]");
  }
  RequestFraming s;
  for (const char* host : {"", "a", "a.example:8080", "127.0.0.1:0", "[::1]:80", "[::1]",
                           "a:", "xn--bcher-kva.example", "a%20b"}) {
    INFO(host);
    check_ready(frame_once(std::string("GET / HTTP/1.1\r\nHost: ") + host + "\r\n\r\n", s));
  }
}

TEST_CASE("Headers that must be single are refused 400 when repeated, in any case") {
  for (const char* name :
       {"Content-Length", "Authorization", "Content-Type", "Idempotency-Key", "webhook-id",
        "webhook-timestamp", "webhook-signature", "svix-signature", "Stripe-Signature",
        "X-Hub-Signature-256", "X-Shopify-Hmac-Sha256", "X-Slack-Signature", "X-Idempotency-Key",
        "shopify-hmac-sha256", "shopify-webhook-id", "svix-id"}) {
    std::string lower = name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    check_bad(
        std::string("POST / HTTP/1.1\r\nHost: a\r\n") + name + ": 1\r\n" + lower + ": 1\r\n\r\n",
        std::string("send one ") + name + " header");
    CHECK(single_header(lower) == name);
  }
  CHECK(single_header("Accept").empty());
  CHECK(single_header("X-Forwarded-For").empty());
  // Repeatable fields stay repeatable.
  RequestFraming s;
  check_ready(frame_once("GET / HTTP/1.1\r\nHost: a\r\nAccept: a\r\nAccept: b\r\n\r\n", s));
}

TEST_CASE("Framing fields: Transfer-Encoding 411, a bad Content-Length 400, encoded bodies 415") {
  RequestFraming s;
  check_refused(frame_once("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n", s),
                411, "length_required",
                "send the body with a Content-Length header; Transfer-Encoding (chunked) bodies "
                "are not accepted");
  for (const char* value : {"abc", "-1", "+5", "5 5", "0x10", "12345678901234567890", ""}) {
    check_bad(std::string("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: ") + value + "\r\n\r\n",
              "Content-Length must be a decimal number of bytes");
  }
  check_bad("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n\r\nx", "GET requests take no body");
  check_bad("HEAD / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n\r\nx",
            "HEAD requests take no body");
  const std::string encoded =
      "send the body without Content-Encoding: compressed request bodies are not accepted";
  for (const char* coding : {"gzip", "deflate", "br", "identity, gzip", "x"}) {
    check_refused(frame_once(std::string("POST / HTTP/1.1\r\nHost: a\r\nContent-Encoding: ") +
                                 coding + "\r\nContent-Length: 3\r\n\r\n",
                             s, kWide),
                  415, "unsupported_media_type", encoded, "Accept-Encoding: identity");
  }
  // Without a body, or as identity, the coding harms nothing.
  check_ready(frame_once("GET / HTTP/1.1\r\nHost: a\r\nContent-Encoding: gzip\r\n\r\n", s));
  check_ready(
      frame_once("POST / HTTP/1.1\r\nHost: a\r\nContent-Encoding: Identity\r\nContent-Length: "
                 "1\r\n\r\nx",
                 s, kWide));
  check_ready(frame_once("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n", s));
}

TEST_CASE("A header value with '%' is noted, for its bytes to be restored after httplib") {
  RequestFraming s;
  check_ready(frame_once("GET / HTTP/1.1\r\nHost: a\r\nIdempotency-Key: K%2Fx\r\n\r\n", s, kWide));
  CHECK(s.percent);
  std::vector<std::pair<std::string, std::string>> fields;
  for_each_field(
      std::string_view("GET / HTTP/1.1\r\nHost: a\r\nK: \t K%2Fx \r\nE:\r\n\r\n"),
      [&](std::string_view name, std::string_view value) { fields.emplace_back(name, value); });
  CHECK(fields ==
        std::vector<std::pair<std::string, std::string>>{{"Host", "a"}, {"K", "K%2Fx"}, {"E", ""}});
}

TEST_CASE("Bodies over the limit are handed over at once, unread") {
  RequestFraming s;
  check_ready(frame_once("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 101\r\n\r\n", s));
  CHECK(s.framed);
  CHECK(s.over_limit);
  CHECK(s.body == 101);
  check_need_more(frame_once("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\n", s));
  CHECK_FALSE(s.over_limit);

  const FramingLimits unlimited{1024, 3, std::uint64_t{1} << 40};
  check_ready(
      frame_once("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 67108865\r\n\r\n", s, unlimited));
  CHECK(s.over_limit);
  check_need_more(
      frame_once("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 67108864\r\n\r\n", s, unlimited));
  CHECK_FALSE(s.over_limit);
}
