// Retry-After (publisher/src/delivery/retry_after.h).
// Input: the header value. `now` is fixed (2026-01-01T00:00:00Z) so every run reads dates alike.
// Properties: never throws with valid bounds; a delay is within [min, max]; a value
// parse_http_date accepts is a delay too (date - now, clamped); whitespace around the value does
// not change the answer.
#include "delivery/retry_after.h"

#include <algorithm>
#include <string>

#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace webhooks::publisher;
  using std::chrono::milliseconds;
  const std::string_view value = fuzz::text(data, size);
  const webhooks::UnixMillis now = 1'767'225'600'000;
  const RetryAfterBounds bounds;  // 1 s .. 1 h
  const auto delay = parse_retry_after(value, now, bounds);
  if (delay) FUZZ_CHECK(*delay >= bounds.min && *delay <= bounds.max);

  const auto date = parse_http_date(value, now);
  if (date) {
    FUZZ_CHECK(*date % 1000 == 0);
    FUZZ_CHECK(delay.has_value());
    const milliseconds expected = std::clamp(milliseconds(*date - now), bounds.min, bounds.max);
    FUZZ_CHECK(*delay == expected);
  }

  const std::string padded = " \t" + std::string(value) + "\t ";
  FUZZ_CHECK(parse_retry_after(padded, now, bounds) == delay);

  const RetryAfterBounds wide{milliseconds(0), milliseconds(std::int64_t{1} << 50)};
  const auto unclamped = parse_retry_after(value, now, wide);
  FUZZ_CHECK(unclamped.has_value() == delay.has_value());
  return 0;
}
