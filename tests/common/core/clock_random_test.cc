#include <catch2/catch.hpp>

#include "webhooks/clock.h"
#include "webhooks/random.h"

using namespace webhooks;

TEST_CASE("the fake clock moves only when told") {
  FakeClock clock(1'000'500);
  CHECK(clock.now_ms() == 1'000'500);
  CHECK(clock.now_seconds() == 1000);
  clock.advance(std::chrono::seconds(30));
  CHECK(clock.now_ms() == 1'030'500);
  clock.set_ms(5);
  CHECK(clock.now_ms() == 5);
}

TEST_CASE("the system clock reads Unix milliseconds") {
  const auto before = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  const UnixMillis now = system_clock().now_ms();
  CHECK(now >= before);
  CHECK(now - before < 60'000);
}

TEST_CASE("a seeded random source repeats its sequence") {
  SeededRandom a(42), b(42), c(43);
  for (int i = 0; i < 100; ++i) {
    const auto x = a.next_u64();
    CHECK(x == b.next_u64());
  }
  CHECK(a.next_u64() != c.next_u64());
  SeededRandom d(7);
  for (int i = 0; i < 1000; ++i) {
    const double u = d.next_unit();
    REQUIRE(u >= 0.0);
    REQUIRE(u < 1.0);
  }
}

TEST_CASE("the secure source fills buffers") {
  std::array<std::uint8_t, 32> a{}, b{};
  secure_random_bytes(a);
  secure_random_bytes(b);
  CHECK(a != b);
  SecureRandom r;
  CHECK(r.next_u64() != r.next_u64());
}
