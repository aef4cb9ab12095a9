// FailureThrottle on a fake clock: the 10th failure in a window starts the refusals, Retry-After
// counts down in whole seconds (rounded up), the window's end lets the address in again, addresses
// are counted apart, and the table never tracks more than its capacity (oldest evicted).
#include "webhooks/console/throttle.h"

#include <catch2/catch.hpp>

#include "webhooks/error.h"

using namespace std::chrono_literals;
using webhooks::console::FailureThrottle;

TEST_CASE("throttle: 10 failures in a minute refuse the address until the minute ends") {
  webhooks::FakeClock clock;
  FailureThrottle throttle(clock);
  for (int i = 0; i < 9; ++i) {
    throttle.record_failure("10.0.0.1");
    clock.advance(1s);
  }
  CHECK(throttle.retry_after("10.0.0.1") == std::nullopt);  // 9 failures: not yet
  throttle.record_failure("10.0.0.1");                      // the 10th, 9 s into the window
  CHECK(throttle.retry_after("10.0.0.1") == 51s);
  CHECK(throttle.retry_after("10.0.0.2") == std::nullopt);  // another address is not refused
  clock.advance(50'500ms);
  CHECK(throttle.retry_after("10.0.0.1") == 1s);  // 0.5 s left: rounded up
  clock.advance(500ms);
  CHECK(throttle.retry_after("10.0.0.1") == std::nullopt);  // the window ended
  throttle.record_failure("10.0.0.1");                      // a new window, one failure
  CHECK(throttle.retry_after("10.0.0.1") == std::nullopt);
}

TEST_CASE("throttle: failures spread over more than a window never refuse") {
  webhooks::FakeClock clock;
  FailureThrottle throttle(clock);
  for (int i = 0; i < 30; ++i) {
    throttle.record_failure("::1");
    clock.advance(7s);  // at most 9 fall in one 60 s window
    CHECK(throttle.retry_after("::1") == std::nullopt);
  }
}

TEST_CASE("throttle: the table is capped, the oldest window evicted first") {
  webhooks::FakeClock clock;
  FailureThrottle throttle(clock, 2, 60s, 3);
  throttle.record_failure("a");
  throttle.record_failure("a");
  clock.advance(1s);
  throttle.record_failure("b");
  throttle.record_failure("c");
  CHECK(throttle.tracked() == 3);
  CHECK(throttle.retry_after("a") == 60s - 1s);
  throttle.record_failure("d");  // evicts "a", the oldest
  CHECK(throttle.tracked() == 3);
  CHECK(throttle.retry_after("a") == std::nullopt);
  for (int i = 0; i < 1000; ++i) throttle.record_failure("x" + std::to_string(i));
  CHECK(throttle.tracked() == 3);
}

TEST_CASE("throttle: nonsensical limits are refused") {
  webhooks::FakeClock clock;
  CHECK_THROWS_AS(FailureThrottle(clock, 0), webhooks::Error);
  CHECK_THROWS_AS(FailureThrottle(clock, 10, 0s), webhooks::Error);
  CHECK_THROWS_AS(FailureThrottle(clock, 10, 60s, 0), webhooks::Error);
}
