// The event loop's request parser (common/http/src/detail/request_framing.h,
// detail::frame_request). Input: the bytes a client sent on a connection, parsed under two sets of
// limits (small: 256-byte head, 4 fields, 64-byte payload; wide: 64 KiB head, 100 fields, no
// payload limit). Properties: never throws; ready: the head is strict RFC 9112 (every line ends in
// CRLF, no bare CR, no NUL or other control byte but HTAB, no folded line, a request line of three
// parts with single spaces and a version of HTTP/1.0 or HTTP/1.1, one Host line for HTTP/1.1, at
// most one Content-Length, no Transfer-Encoding) ending with a blank line within the buffer and
// the limits, and the body (when not over_limit) within the buffer; over_limit: a body httplib
// will not read; refuse: one of the parser's statuses with its code; need_more: the head or the
// body is not whole yet; the bytes given in two parts (the first needing more) parse exactly as
// given at once; a refusal is answered again to every later call.
#include "detail/request_framing.h"

#include <algorithm>
#include <string>
#include <string_view>

#include "fuzz_check.h"

namespace {

using namespace webhooks::http::detail;

// All but `scanned`, the cursor of the search for line ends (it may stop anywhere past the
// head's last line start).
bool same(const RequestFraming& a, const RequestFraming& b) {
  return a.line_begin == b.line_begin && a.lines == b.lines && a.head_end == b.head_end &&
         a.length_headers == b.length_headers && a.length == b.length &&
         a.length_valid == b.length_valid && a.host_headers == b.host_headers &&
         a.singletons == b.singletons && a.encoded == b.encoded && a.http10 == b.http10 &&
         a.percent == b.percent && a.method == b.method && a.chunked == b.chunked &&
         a.expect_continue == b.expect_continue && a.head_method == b.head_method &&
         a.body_method == b.body_method && a.framed == b.framed && a.over_limit == b.over_limit &&
         a.body == b.body;
}

bool same(const FrameResult& a, const FrameResult& b) {
  return a.kind == b.kind && a.status == b.status && std::string(a.code) == b.code &&
         a.message == b.message && std::string(a.header) == b.header;
}

bool ci_starts(std::string_view line, std::string_view lower_prefix) {
  if (line.size() < lower_prefix.size()) return false;
  for (std::size_t i = 0; i < lower_prefix.size(); ++i) {
    const char c = line[i] >= 'A' && line[i] <= 'Z' ? static_cast<char>(line[i] + 32) : line[i];
    if (c != lower_prefix[i]) return false;
  }
  return true;
}

// An accepted head, checked byte by byte apart from the parser: what a proxy in front and
// cpp-httplib behind must read alike.
void check_strict_head(std::string_view head) {
  std::size_t hosts = 0, lengths = 0, line_no = 0;
  std::size_t at = 0;
  while (at < head.size()) {
    const std::size_t lf = head.find('\n', at);
    FUZZ_CHECK(lf != std::string_view::npos && lf > at && head[lf - 1] == '\r');
    const std::string_view line = head.substr(at, lf - 1 - at);
    for (const char ch : line) {
      const auto b = static_cast<unsigned char>(ch);
      FUZZ_CHECK(b == '\t' || (b >= 0x20 && b != 0x7F));  // no CR, LF, NUL or other control
    }
    if (line_no == 0) {
      FUZZ_CHECK(std::count(line.begin(), line.end(), ' ') == 2);
      FUZZ_CHECK(line.ends_with(" HTTP/1.1") || line.ends_with(" HTTP/1.0"));
      FUZZ_CHECK(line.find('\t') == std::string_view::npos && line[0] != ' ');
    } else if (!line.empty()) {
      FUZZ_CHECK(line[0] != ' ' && line[0] != '\t');  // no obs-fold
      const std::size_t colon = line.find(':');
      FUZZ_CHECK(colon != std::string_view::npos && colon > 0);
      FUZZ_CHECK(line.substr(0, colon).find_first_of(" \t") == std::string_view::npos);
      hosts += ci_starts(line, "host:");
      lengths += ci_starts(line, "content-length:");
      FUZZ_CHECK(!ci_starts(line, "transfer-encoding:"));
    }
    ++line_no;
    at = lf + 1;
  }
  FUZZ_CHECK(head.ends_with("\r\n\r\n"));
  FUZZ_CHECK(hosts <= 1 && lengths <= 1);
  FUZZ_CHECK(hosts == 1 || head.substr(0, head.find('\r')).ends_with(" HTTP/1.0"));
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
    FUZZ_CHECK(s.head_end != 0 && !s.chunked && s.length_headers <= 1 && s.length_valid);
    FUZZ_CHECK(s.head_end <= limits.max_header_bytes);
    FUZZ_CHECK(s.lines <= limits.max_header_count + 1);
    FUZZ_CHECK(s.body == (s.length_headers == 1 ? s.length : 0));
    FUZZ_CHECK(s.body == 0 || s.body_method);
    check_strict_head(in.substr(0, s.head_end));
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
    case Framing::refuse: {
      const std::string code = r.code;
      FUZZ_CHECK(!s.framed && !r.message.empty() && same(s.refusal, r));
      FUZZ_CHECK((r.status == 400 && code == "bad_request") ||
                 (r.status == 411 && code == "length_required" && s.chunked) ||
                 (r.status == 414 && code == "uri_too_long" && s.lines == 0) ||
                 (r.status == 415 && code == "unsupported_media_type" && s.encoded) ||
                 (r.status == 431 && code == "headers_too_large") ||
                 (r.status == 501 && code == "not_implemented" && s.lines == 0) ||
                 (r.status == 505 && code == "http_version_not_supported" && s.lines == 0));
      if (r.message == "the request has more than " + std::to_string(limits.max_header_count) +
                           " header fields") {
        FUZZ_CHECK(s.lines == limits.max_header_count + 1);
      } else if (r.message == "the request head is larger than " +
                                  std::to_string(limits.max_header_bytes) + " bytes") {
        FUZZ_CHECK(std::max(s.scanned, s.head_end) > limits.max_header_bytes);
      }
      // Asked again, with more bytes or not: the same refusal.
      RequestFraming again = s;
      FUZZ_CHECK(same(frame_request(std::string(in) + "GET / HTTP/1.1\r\n", limits, again), r));
      break;
    }
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
