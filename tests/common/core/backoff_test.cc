// webhooks::Backoff (common/core/internal/webhooks/backoff.h): exact waits, the cap, the factor,
// the jitter's bounds with a seeded source, and no overflow far out.
#include "webhooks/backoff.h"

#include <catch2/catch.hpp>

namespace webhooks::test {
namespace {

using std::chrono::milliseconds;

TEST_CASE("backoff doubles from first up to max; retry below 1 counts as 1", "[backoff]") {
  const Backoff b{.first = milliseconds(50), .max = milliseconds(300)};
  CHECK(b.delay(0) == milliseconds(50));
  CHECK(b.delay(1) == milliseconds(50));
  CHECK(b.delay(2) == milliseconds(100));
  CHECK(b.delay(3) == milliseconds(200));
  CHECK(b.delay(4) == milliseconds(300));
  CHECK(b.delay(1'000'000) == milliseconds(300));
  const Backoff triple{.first = milliseconds(10), .max = milliseconds(1000), .factor = 3};
  CHECK(triple.delay(3) == milliseconds(90));
  CHECK(Backoff{.first = milliseconds(0)}.delay(5) == milliseconds(0));
}

TEST_CASE("jitter draws within [1 - jitter, 1 + jitter] of the wait, the same for one seed",
          "[backoff]") {
  const Backoff b{.first = milliseconds(1000), .max = milliseconds(60'000), .jitter = 0.2};
  SeededRandom random(7), again(7);
  for (int retry = 1; retry <= 200; ++retry) {
    const milliseconds plain = Backoff{b.first, b.max}.delay(retry);
    const milliseconds drawn = b.delay(retry, &random);
    CHECK(drawn >= plain * 8 / 10);
    CHECK(drawn <= plain * 12 / 10);
    CHECK(b.delay(retry, &again) == drawn);
  }
  CHECK(b.delay(3) == milliseconds(4000));  // no source: no jitter
}

}  // namespace
}  // namespace webhooks::test
