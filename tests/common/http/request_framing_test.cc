// detail::frame_request (common/src/detail/request_framing.h): the framing the event loop under
// webhooks::http::Server does before it hands a request to cpp-httplib.
#include "detail/request_framing.h"

#include <catch2/catch.hpp>
#include <string>

using namespace webhooks::http::detail;

namespace {

const FramingLimits kLimits{/*max_header_bytes=*/64, /*max_header_count=*/3, /*payload_limit=*/100};

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
}

void check_refused(const FrameResult& r, const std::string& message) {
  CHECK(r.kind == Framing::refuse);
  CHECK(r.status == 431);
  CHECK(std::string(r.code) == "headers_too_large");
  CHECK(r.message == message);
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
  CHECK_FALSE(s.over_limit);
  CHECK_FALSE(s.head_method);
  CHECK_FALSE(s.body_method);
  CHECK_FALSE(s.chunked);
  CHECK(s.length_headers == 0);

  check_ready(frame_once("HEAD /a HTTP/1.0\r\n\r\n", s));
  CHECK(s.head_method);
  CHECK(s.head_end == 20);
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
  const std::string head = "POST /p HTTP/1.1\r\nContent-Length: 5\r\n\r\n";  // 18 + 19 + 2
  check_need_more(frame_once(head + "hel", s));
  CHECK(s.head_end == 39);
  CHECK(s.framed);
  CHECK(s.body == 5);
  CHECK(s.body_method);
  CHECK(s.length_value == "5");
  CHECK_FALSE(s.over_limit);

  check_ready(frame_request(head + "hello", kLimits, s));
  CHECK(s.head_end == 39);
  CHECK(s.body == 5);

  // Bytes of the next request after the body do not change the framing of this one.
  check_ready(frame_once(head + "helloGET / HTTP/1.1\r\n", s));
  CHECK(s.head_end == 39);
  CHECK(s.body == 5);

  // Trimmed value, any case of the name; Expect: 100-continue is noted.
  check_need_more(
      frame_once("PUT /p HTTP/1.1\r\ncontent-LENGTH: \t7 \r\nExpect: 100-continue\r\n\r\n", s));
  CHECK(s.body == 7);
  CHECK(s.length_value == "7");
  CHECK(s.expect_continue);
}

TEST_CASE("More header fields than the limit are refused 431") {
  RequestFraming s;
  const std::string three = "GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\n";
  check_ready(frame_once(three + "\r\n", s));
  CHECK(s.lines == 4);
  check_refused(frame_once(three + "D: 4\r\n\r\n", s), "the request has more than 3 header fields");
  // Refused as soon as the fourth field's line is there.
  check_refused(frame_once(three + "D: 4\r\n", s), "the request has more than 3 header fields");
  check_need_more(frame_once(three + "D: 4", s));
}

TEST_CASE("A head larger than the limit is refused 431") {
  RequestFraming s;
  const std::string line = "GET / HTTP/1.1\r\n";  // 16 bytes
  // 16 + 46 + 2 = 64 bytes: at the limit.
  check_ready(frame_once(line + "X: " + std::string(41, 'a') + "\r\n\r\n", s));
  CHECK(s.head_end == 64);
  // 16 + 47 + 2 = 65 bytes: the blank line ends the head past the limit.
  check_refused(frame_once(line + "X: " + std::string(42, 'a') + "\r\n\r\n", s),
                "the request head is larger than 64 bytes");
  check_need_more(frame_once(line + "X: " + std::string(42, 'a') + "\r\n", s));
  // A header line that ends past the limit (16 + 49 = 65), before any blank line.
  check_refused(frame_once(line + "X: " + std::string(44, 'a') + "\r\n", s),
                "the request head is larger than 64 bytes");
  // No line end yet, but more bytes than a head may have.
  check_refused(frame_once(line + "X: " + std::string(46, 'a'), s),
                "the request head is larger than 64 bytes");
  check_need_more(frame_once(line + "X: " + std::string(45, 'a'), s));
}

TEST_CASE("What httplib answers itself is handed over at once: framing fields") {
  RequestFraming s;
  SECTION("Transfer-Encoding") {
    check_ready(frame_once("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", s));
    CHECK(s.chunked);
    CHECK_FALSE(s.framed);
    CHECK(s.head_end == 47);
  }
  SECTION("a Content-Length that is not a decimal number") {
    for (const char* value : {"abc", "-1", "+5", "5 5", "0x10", "12345678901234567890"}) {
      INFO(value);
      check_ready(
          frame_once(std::string("POST / HTTP/1.1\r\nContent-Length: ") + value + "\r\n\r\n", s,
                     FramingLimits{1024, 3, 100}));
      CHECK(s.length_headers == 1);
      CHECK(s.length_value == value);
      CHECK_FALSE(s.framed);
      CHECK(s.body == 0);
    }
  }
  SECTION("an empty Content-Length") {
    check_ready(frame_once("POST / HTTP/1.1\r\nContent-Length:\r\n\r\n", s));
    CHECK(s.length_value.empty());
    CHECK_FALSE(s.framed);
  }
  SECTION("two Content-Length fields, even equal") {
    check_ready(frame_once("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n", s));
    CHECK(s.length_headers == 2);
    CHECK_FALSE(s.framed);
  }
}

TEST_CASE("What httplib answers itself is handed over at once: lines and bodies") {
  RequestFraming s;
  SECTION("a request line httplib cannot parse") {
    for (const char* line : {"FOO / HTTP/1.1\r\n", "GET / HTTP/2.0\r\n", "GET / HTTP/1.1\n",
                             "GET\r\n", "\n", "get / HTTP/1.1\r\n"}) {
      INFO(line);
      check_ready(frame_once(line, s));
      CHECK(s.lines == 0);
      CHECK(s.head_end == 0);
      CHECK_FALSE(s.framed);
    }
  }
  SECTION("a request line longer than httplib reads (8192 bytes)") {
    const FramingLimits wide{1 << 20, 3, 100};
    check_need_more(frame_once("GET /" + std::string(8187, 'a'), s, wide));  // 8192 bytes
    check_ready(frame_once("GET /" + std::string(8188, 'a'), s, wide));
    CHECK(s.lines == 0);
    check_ready(frame_once("GET /" + std::string(8180, 'a') + " HTTP/1.1\r\n", s, wide));
    CHECK(s.lines == 0);
  }
  SECTION("a header line longer than httplib reads (8192 bytes)") {
    const FramingLimits wide{1 << 20, 3, 100};
    check_ready(frame_once("GET / HTTP/1.1\r\nX: " + std::string(8188, 'a') + "\r\n", s, wide));
    CHECK(s.lines == 1);
    CHECK(s.head_end == 0);
  }
  SECTION("a body on a GET") {
    check_ready(frame_once("GET / HTTP/1.1\r\nContent-Length: 1\r\n\r\n", s));
    CHECK(s.framed);
    CHECK(s.over_limit);
    CHECK(s.body == 1);
  }
  SECTION("a body over the payload limit, before it comes") {
    check_ready(frame_once("POST / HTTP/1.1\r\nContent-Length: 101\r\n\r\n", s));
    CHECK(s.framed);
    CHECK(s.over_limit);
    CHECK(s.body == 101);
    check_need_more(frame_once("POST / HTTP/1.1\r\nContent-Length: 100\r\n\r\n", s));
    CHECK_FALSE(s.over_limit);
  }
  SECTION("a body over 64 MiB, whatever the payload limit") {
    const FramingLimits unlimited{1024, 3, std::uint64_t{1} << 40};
    check_ready(frame_once("POST / HTTP/1.1\r\nContent-Length: 67108865\r\n\r\n", s, unlimited));
    CHECK(s.over_limit);
    check_need_more(
        frame_once("POST / HTTP/1.1\r\nContent-Length: 67108864\r\n\r\n", s, unlimited));
    CHECK_FALSE(s.over_limit);
  }
}
