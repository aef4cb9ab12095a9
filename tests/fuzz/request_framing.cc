// The event loop's request framing (common/src/detail/request_framing.h, detail::frame_request).
// Input: the bytes a client sent on a connection, framed under two sets of limits (small: 256-byte
// head, 4 fields, 64-byte payload; wide: 64 KiB head, 100 fields, no payload limit).
// Properties: never throws; ready + framed: the head ends with a blank line within the buffer and
// the head limit, and the body (when not over_limit) within the buffer; over_limit: a body httplib
// will not read; refuse: 431 headers_too_large with one of its two messages, for a head over a
// limit; need_more: the head or the body is not whole yet; the bytes given in two parts (the first
// needing more) frame exactly as given at once.
#include "detail/request_framing.h"

#include <algorithm>
#include <string>

#include "fuzz_check.h"

namespace {

using namespace webhooks::http::detail;

// All but `scanned`, the cursor of the search for line ends (it may stop anywhere past the
// head's last line start).
bool same(const RequestFraming& a, const RequestFraming& b) {
  return a.line_begin == b.line_begin && a.lines == b.lines && a.head_end == b.head_end &&
         a.length_headers == b.length_headers && a.length_value == b.length_value &&
         a.chunked == b.chunked && a.expect_continue == b.expect_continue &&
         a.head_method == b.head_method && a.body_method == b.body_method && a.framed == b.framed &&
         a.over_limit == b.over_limit && a.body == b.body;
}

bool same(const FrameResult& a, const FrameResult& b) {
  return a.kind == b.kind && a.status == b.status && std::string(a.code) == b.code &&
         a.message == b.message;
}

// What frame_request left in `s` for `in`: the head within the buffer and the limits.
void check_state(std::string_view in, const FramingLimits& limits, const RequestFraming& s) {
  FUZZ_CHECK(s.head_end <= in.size());
  FUZZ_CHECK(s.line_begin <= s.scanned && s.scanned <= in.size());
  if (s.head_end != 0) {
    FUZZ_CHECK(s.head_end >= 4 && in.substr(s.head_end - 2, 2) == "\r\n" &&
               in[s.head_end - 3] == '\n');
    FUZZ_CHECK(s.lines >= 1);
  }
  if (s.framed) {
    FUZZ_CHECK(s.head_end != 0 && !s.chunked && s.length_headers <= 1);
    FUZZ_CHECK(s.head_end <= limits.max_header_bytes);
    FUZZ_CHECK(s.lines <= limits.max_header_count + 1);
    FUZZ_CHECK(s.body == (s.length_headers == 1 ? std::stoull(s.length_value) : 0));
  }
}

// The result `r` agrees with `s`: ready, refuse (431 with one of two messages) or need_more.
void check_result(std::string_view in, const FramingLimits& limits, const RequestFraming& s,
                  const FrameResult& r) {
  switch (r.kind) {
    case Framing::ready:
      FUZZ_CHECK(r.status == 0 && std::string(r.code).empty() && r.message.empty());
      if (s.framed && !s.over_limit) {
        FUZZ_CHECK(s.head_end + s.body <= in.size());
        FUZZ_CHECK(s.body <= std::min<std::uint64_t>(limits.payload_limit, kBufferedBodyMax));
      }
      if (s.over_limit) {
        FUZZ_CHECK(s.framed && s.body > 0);
        FUZZ_CHECK(!s.body_method ||
                   s.body > std::min<std::uint64_t>(limits.payload_limit, kBufferedBodyMax));
      }
      break;
    case Framing::refuse:
      FUZZ_CHECK(r.status == 431 && std::string(r.code) == "headers_too_large");
      FUZZ_CHECK(!s.framed);
      if (r.message == "the request has more than " + std::to_string(limits.max_header_count) +
                           " header fields") {
        FUZZ_CHECK(s.lines == limits.max_header_count + 1);
      } else {
        FUZZ_CHECK(r.message == "the request head is larger than " +
                                    std::to_string(limits.max_header_bytes) + " bytes");
        FUZZ_CHECK(std::max(s.scanned, s.head_end) > limits.max_header_bytes);
      }
      break;
    case Framing::need_more:
      FUZZ_CHECK(r.status == 0 && r.message.empty() && !s.over_limit);
      if (s.head_end == 0) {
        FUZZ_CHECK(!s.framed && s.scanned == in.size());
        FUZZ_CHECK(in.size() <= limits.max_header_bytes);
      } else {
        FUZZ_CHECK(s.framed && s.head_end + s.body > in.size());
      }
      break;
  }
}

// In two parts, as the loop receives them: the same answer and progress.
void check_in_two_parts(std::string_view in, const FramingLimits& limits, const RequestFraming& s,
                        const FrameResult& r) {
  const std::size_t blank = in.find("\r\n\r\n");
  for (const std::size_t split : {std::size_t{1}, in.size() / 2, in.size() - 1,
                                  blank == std::string_view::npos ? 0 : blank + 2}) {
    if (split == 0 || split >= in.size()) continue;
    RequestFraming parts;
    if (frame_request(in.substr(0, split), limits, parts).kind != Framing::need_more) continue;
    const FrameResult rest = frame_request(in, limits, parts);
    FUZZ_CHECK(same(rest, r));
    FUZZ_CHECK(same(parts, s));
  }
}

void check(std::string_view in, const FramingLimits& limits) {
  RequestFraming s;
  const FrameResult r = frame_request(in, limits, s);
  check_state(in, limits, s);
  check_result(in, limits, s, r);
  check_in_two_parts(in, limits, s, r);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in = fuzz::text(data, size);
  check(in, FramingLimits{256, 4, 64});
  check(in, FramingLimits{64 * 1024, 100, std::uint64_t{1} << 40});
  return 0;
}
