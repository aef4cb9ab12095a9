// Framing of an HTTP/1.1 request at the start of a connection's buffered bytes, as the event loop
// under webhooks::http::Server needs it (detail/event_loop.h): whether the request is whole and
// can be handed to cpp-httplib, must be refused at once (431), or needs more bytes. No I/O, no
// clock: the answer depends only on the buffer, the limits and the progress saved by earlier calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace webhooks::http::detail {

enum class Framing { need_more, ready, refuse };

struct FrameResult {
  Framing kind = Framing::need_more;
  int status = 0;         // refuse: the HTTP status (431)
  const char* code = "";  // refuse: the error.code ("headers_too_large")
  std::string message;    // refuse: the error message
};

struct FramingLimits {
  std::size_t max_header_bytes = 64 * 1024;  // request line + header lines + blank line, bytes
  std::size_t max_header_count = 100;        // header fields
  std::uint64_t payload_limit = 0;           // body bytes httplib accepts (Server::payload_limit)
};

// cpp-httplib's CPPHTTPLIB_REQUEST_URI_MAX_LENGTH: a longer request line is answered 414.
inline constexpr std::size_t kRequestLineMax = 8192;
// CPPHTTPLIB_HEADER_MAX_LENGTH: a longer header line is answered 400.
inline constexpr std::size_t kHeaderLineMax = 8192;
// The most of a body the loop buffers, whatever the payload limit (a server without
// limit_request_bodies has none): a longer body is handed over unread.
inline constexpr std::uint64_t kBufferedBodyMax = 64ull * 1024 * 1024;

// What framing learned of the request at the start of the buffer so far; a later call with more
// bytes (the same ones first) resumes from it. Value-initialized for each new request.
struct RequestFraming {
  std::size_t scanned = 0;         // bytes of the buffer looked at for line ends
  std::size_t line_begin = 0;      // where the head's next line starts
  std::size_t lines = 0;           // lines of the head seen (the request line first)
  std::size_t head_end = 0;        // 0 until the head's blank line is received; then its end
  std::size_t length_headers = 0;  // Content-Length fields seen
  std::string length_value;        // the last Content-Length value, trimmed
  bool chunked = false;            // a Transfer-Encoding header
  bool expect_continue = false;    // Expect: 100-continue
  bool head_method = false;        // a HEAD request (its answer has no body)
  bool body_method = false;        // POST, PUT, PATCH, DELETE, PRI: httplib reads their body
  bool framed = false;             // `body` below is the body length httplib reads
  bool over_limit = false;         // the body is over the limit: handed over unread (httplib: 413)
  std::uint64_t body = 0;          // Content-Length, once framed
};

// Frames the request at the start of `buffer`, resuming from `state`:
// - ready: hand the buffer to httplib now. Either the request is whole (state.framed, the request
//   is buffer[0, head_end + body)), or httplib answers it from what is there: an unparsable or
//   too long request line, a too long header line, Transfer-Encoding, a missing or duplicate or
//   non-decimal Content-Length, a body on a method httplib does not read or over the limit
//   (state.over_limit);
// - refuse: 431 headers_too_large (more than max_header_count fields, or a head over
//   max_header_bytes);
// - need_more: the request is not whole yet.
FrameResult frame_request(std::string_view buffer, const FramingLimits& limits,
                          RequestFraming& state);

}  // namespace webhooks::http::detail
