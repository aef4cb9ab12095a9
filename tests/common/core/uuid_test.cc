#include "webhooks/uuid.h"

#include <catch2/catch.hpp>
#include <set>
#include <thread>

using namespace webhooks;

namespace {
std::int64_t time_field(const UuidBytes& b) {
  std::int64_t ms = 0;
  for (int i = 0; i < 6; ++i) ms = (ms << 8) | b[i];
  return ms;
}
}  // namespace

TEST_CASE("UUIDv7 carries the clock's milliseconds, version 7 and variant 10") {
  FakeClock clock(1'700'000'000'123);
  UuidV7Generator gen(clock);
  const UuidBytes b = gen.next_bytes();
  CHECK(time_field(b) == 1'700'000'000'123);
  CHECK((b[6] >> 4) == 7);
  CHECK((b[8] >> 6) == 2);
  const std::string s = uuid_to_string(b);
  CHECK(s.size() == 36);
  CHECK(s.substr(0, 13) == "018bcfe5-687b");  // 1700000000123 = 0x018bcfe5687b
  CHECK(s[14] == '7');
  CHECK(is_uuid_v7(s));
}

TEST_CASE("UUIDv7 is strictly increasing within one millisecond and across a clock step back") {
  FakeClock clock(1'700'000'000'000);
  UuidV7Generator gen(clock);
  std::string previous = gen.next();
  for (int i = 0; i < 10000; ++i) {
    if (i == 5000) clock.advance(std::chrono::milliseconds(-1000));  // the wall clock steps back
    const std::string next = gen.next();
    REQUIRE(next > previous);
    previous = next;
  }
  CHECK(previous.substr(0, 13) == "018bcfe5-6800");  // still the first millisecond
  clock.advance(std::chrono::milliseconds(2000));
  const UuidBytes later = gen.next_bytes();
  CHECK(time_field(later) == 1'700'000'001'000);
}

TEST_CASE("UUIDv7 ids from many threads are unique") {
  FakeClock clock;
  UuidV7Generator gen(clock);
  std::vector<std::vector<std::string>> per_thread(4);
  std::vector<std::thread> threads;
  for (auto& out : per_thread) {
    threads.emplace_back([&gen, &out] {
      for (int i = 0; i < 2000; ++i) out.push_back(gen.next());
    });
  }
  for (auto& t : threads) t.join();
  std::set<std::string> all;
  for (const auto& out : per_thread) {
    CHECK(std::is_sorted(out.begin(), out.end()));
    all.insert(out.begin(), out.end());
  }
  CHECK(all.size() == 8000);
}

TEST_CASE("is_uuid_v7 rejects other shapes") {
  CHECK(is_uuid_v7("018bcfe5-687b-7000-8000-000000000000"));
  CHECK(is_uuid_v7("018BCFE5-687B-7000-B000-000000000000"));
  CHECK_FALSE(is_uuid_v7("018bcfe5-687b-4000-8000-000000000000"));  // version 4
  CHECK_FALSE(is_uuid_v7("018bcfe5-687b-7000-c000-000000000000"));  // variant 110
  CHECK_FALSE(is_uuid_v7("018bcfe5687b70008000000000000000"));
  CHECK_FALSE(is_uuid_v7("018bcfe5-687b-7000-8000-00000000000g"));
}
