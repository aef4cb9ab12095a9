#include "webhooks/publisher/retry_policy.h"

#include <catch2/catch.hpp>
#include <deque>
#include <set>
#include <utility>

#include "support/thrown_code.h"
#include "webhooks/error.h"

using namespace webhooks;
using namespace webhooks::publisher;
using namespace std::chrono_literals;
using Catch::Matchers::Message;

namespace {

// Returns the queued values in order (then 0), and counts the draws.
class ScriptedRandom final : public RandomSource {
 public:
  ScriptedRandom(std::initializer_list<std::uint64_t> values) : values_(values) {}
  std::uint64_t next_u64() override {
    ++draws;
    if (values_.empty()) return 0;
    const std::uint64_t v = values_.front();
    values_.pop_front();
    return v;
  }
  int draws = 0;

 private:
  std::deque<std::uint64_t> values_;
};

constexpr std::uint64_t kUnitZero = 0;                 // next_unit() == 0.0
constexpr std::uint64_t kUnitQuarter = 1ull << 62;     // 0.25
constexpr std::uint64_t kUnitHalf = 1ull << 63;        // 0.5
constexpr std::uint64_t kUnitMax = ~std::uint64_t{0};  // 1 - 2^-53
constexpr UnixMillis kCreated = 1'700'000'000'000;

}  // namespace

TEST_CASE("the default policy is the documented schedule") {
  const RetryPolicy policy;
  CHECK(policy.delays() ==
        std::vector<std::chrono::milliseconds>{5s, 5min, 30min, 2h, 5h, 10h, 10h});
  CHECK(policy.max_attempts() == 8);
  CHECK(policy.max_age() == 72h);
  CHECK(policy.jitter() == 0.2);
  CHECK(policy.schedule_text() == "5s,5m,30m,2h,5h,10h,10h");
  CHECK(policy.scheduled_delay(1) == 5s);
  CHECK(policy.scheduled_delay(2) == 5min);
  CHECK(policy.scheduled_delay(7) == 10h);
  CHECK(policy.scheduled_delay(8) == std::nullopt);
  CHECK(policy.scheduled_delay(100) == std::nullopt);
  CHECK_THROWS_MATCHES(policy.scheduled_delay(0), Error, Message("attempt numbers start at 1"));
}

TEST_CASE("schedules parse from text") {
  const RetryPolicy fast = RetryPolicy::parse("100ms,200ms,1s", 10s, 0.0);
  CHECK(fast.delays() == std::vector<std::chrono::milliseconds>{100ms, 200ms, 1s});
  CHECK(fast.max_attempts() == 4);
  CHECK(fast.max_age() == 10s);
  CHECK(fast.schedule_text() == "100ms,200ms,1s");
  CHECK(RetryPolicy::parse("0s").delays() == std::vector<std::chrono::milliseconds>{0ms});
  CHECK(RetryPolicy::parse("1d").max_attempts() == 2);
}

TEST_CASE("junk schedules are refused naming the entry") {
  const std::pair<const char*, const char*> refused[] = {
      {"", "retry schedule is empty; expected comma-separated delays such as \"5s,5m,30m\""},
      {"5s,,5m",
       "retry schedule entry 2 is empty; expected a whole number and a unit, e.g. \"5s\""},
      {"5s,", "retry schedule entry 2 is empty; expected a whole number and a unit, e.g. \"5s\""},
      {"5s,5x", "retry schedule entry 2 \"5x\" has unknown unit \"x\"; use ms, s, m, h or d"},
      {"5s,5m,30", "retry schedule entry 3 \"30\" has no unit; use ms, s, m, h or d"},
      {"5s, 5m",
       "retry schedule entry 2 \" 5m\" does not start with a whole "
       "number; expected e.g. \"5s\" or \"250ms\""},
      {"400d", "retry schedule entry 1 \"400d\" is longer than the maximum of 365d"},
  };
  for (const auto& [text, message] : refused) {
    INFO(text);
    CHECK_THROWS_MATCHES(RetryPolicy::parse(text), Error, Message(message));
  }
  std::string many = "1s";
  for (int i = 0; i < 100; ++i) many += ",1s";
  CHECK_THROWS_MATCHES(RetryPolicy::parse(many), Error,
                       Message("retry schedule has 101 entries; at most 100 are allowed"));
  CHECK(RetryPolicy::parse(many.substr(3)).max_attempts() == 101);
}

TEST_CASE("bad policy arguments are refused") {
  CHECK_THROWS_MATCHES(RetryPolicy(std::vector<std::chrono::milliseconds>{}), Error,
                       Message("retry schedule needs at least one delay"));
  CHECK_THROWS_MATCHES(RetryPolicy({5s, -1ms}), Error,
                       Message("retry delay of -1 ms is outside 0ms..365d"));
  CHECK_THROWS_MATCHES(RetryPolicy({5s}, 0ms), Error, Message("max age must be positive"));
  CHECK_THROWS_MATCHES(RetryPolicy({5s}, 1h, 1.5), Error,
                       Message("jitter must be a fraction between 0 and 1"));
  CHECK_THROWS_MATCHES(RetryPolicy({5s}, 1h, -0.1), Error,
                       Message("jitter must be a fraction between 0 and 1"));
  CHECK(webhooks::test::thrown_code([] { RetryPolicy::parse("x"); }) ==
        ErrorCode::invalid_argument);
}

TEST_CASE("jitter spreads the delay by plus or minus 20 percent") {
  const RetryPolicy policy;
  ScriptedRandom random{kUnitZero, kUnitHalf, kUnitMax, kUnitQuarter};
  CHECK(policy.next_delay(1, random) == 4000ms);        // 5 s − 20 %
  CHECK(policy.next_delay(1, random) == 5000ms);        // the middle
  CHECK(policy.next_delay(1, random) == 6000ms);        // 5 s + 20 % (rounded to the nearest ms)
  CHECK(policy.next_delay(7, random) == 32'400'000ms);  // 10 h − 10 %
  CHECK(random.draws == 4);
  CHECK(policy.next_delay(8, random) == std::nullopt);  // the last attempt: no draw
  CHECK(random.draws == 4);

  SeededRandom seeded(1);
  std::set<std::int64_t> seen;
  for (int i = 0; i < 1000; ++i) {
    const auto d = policy.next_delay(2, seeded);  // 5 min
    REQUIRE(d);
    REQUIRE(d->count() >= 240'000);
    REQUIRE(d->count() <= 360'000);
    seen.insert(d->count());
  }
  CHECK(seen.size() > 900);
}

TEST_CASE("jitter can be turned off and never goes below zero") {
  const RetryPolicy exact({5s, 0ms}, 1h, 0.0);
  ScriptedRandom random{kUnitMax, kUnitZero};
  CHECK(exact.next_delay(1, random) == 5s);
  CHECK(exact.next_delay(2, random) == 0ms);
  const RetryPolicy wide({10s}, 1h, 1.0);
  ScriptedRandom low{kUnitZero, kUnitMax};
  CHECK(wide.next_delay(1, low) == 0ms);
  CHECK(wide.next_delay(1, low) == 20s);
}

TEST_CASE("the next attempt honours Retry-After but never comes sooner") {
  const RetryPolicy policy;
  const UnixMillis now = kCreated + 10'000;
  ScriptedRandom random{kUnitHalf, kUnitHalf, kUnitHalf, kUnitHalf};
  CHECK(policy.next_attempt_at(1, kCreated, now, random) == now + 5'000);
  CHECK(policy.next_attempt_at(1, kCreated, now, random, 60s) == now + 60'000);
  CHECK(policy.next_attempt_at(1, kCreated, now, random, 1s) == now + 5'000);
  CHECK(policy.next_attempt_at(2, kCreated, now, random, 1h) == now + 3'600'000);
  CHECK(policy.next_attempt_at(8, kCreated, now, random) == std::nullopt);
  CHECK(policy.next_attempt_at(8, kCreated, now, random, 1s) == std::nullopt);
  CHECK(random.draws == 4);
}

TEST_CASE("the age limit makes a task dead") {
  const RetryPolicy policy = RetryPolicy::parse("30m,30m,30m", 1h, 0.0);
  ScriptedRandom random{};
  CHECK_FALSE(policy.expired(kCreated, kCreated));
  CHECK_FALSE(policy.expired(kCreated, kCreated + 3'599'999));
  CHECK(policy.expired(kCreated, kCreated + 3'600'000));
  // Due at 50 min: fine. Due at exactly 60 min or later: dead.
  CHECK(policy.next_attempt_at(1, kCreated, kCreated + 1'200'000, random) == kCreated + 3'000'000);
  CHECK(policy.next_attempt_at(2, kCreated, kCreated + 1'800'000, random) == std::nullopt);
  CHECK(policy.next_attempt_at(2, kCreated, kCreated + 1'799'999, random) == kCreated + 3'599'999);
  // Retry-After can push the attempt past the age limit, which ends the task too.
  CHECK(policy.next_attempt_at(1, kCreated, kCreated, random, 1h) == std::nullopt);
}

TEST_CASE("attempt outcomes follow the dispatch rules") {
  CHECK(classify_attempt(200) == AttemptOutcome::succeeded);
  CHECK(classify_attempt(201) == AttemptOutcome::succeeded);
  CHECK(classify_attempt(204) == AttemptOutcome::succeeded);
  CHECK(classify_attempt(299) == AttemptOutcome::succeeded);
  CHECK(classify_attempt(0) == AttemptOutcome::retryable);  // network error or timeout
  for (int status : {301, 302, 303, 307, 308, 400, 401, 403, 404, 408, 409, 422,
                     425, 429, 500, 502, 503, 504, 599, 100, 199, 600, 999, -1}) {
    INFO(status);
    CHECK(classify_attempt(status) == AttemptOutcome::retryable);
  }
  CHECK(classify_attempt(410) == AttemptOutcome::gone);

  const OutcomeRules strict{{400, 401, 403, 404, 422, 408, 425, 429, 410, 500, 302}};
  for (int status : {400, 401, 403, 404, 422}) {
    INFO(status);
    CHECK(classify_attempt(status, strict) == AttemptOutcome::permanent);
  }
  // Always retried, or always gone, whatever the rules say; codes outside 4xx are ignored.
  CHECK(classify_attempt(408, strict) == AttemptOutcome::retryable);
  CHECK(classify_attempt(425, strict) == AttemptOutcome::retryable);
  CHECK(classify_attempt(429, strict) == AttemptOutcome::retryable);
  CHECK(classify_attempt(410, strict) == AttemptOutcome::gone);
  CHECK(classify_attempt(500, strict) == AttemptOutcome::retryable);
  CHECK(classify_attempt(302, strict) == AttemptOutcome::retryable);
  CHECK(classify_attempt(409, strict) == AttemptOutcome::retryable);
  CHECK(classify_attempt(200, strict) == AttemptOutcome::succeeded);

  CHECK(to_string(AttemptOutcome::succeeded) == "succeeded");
  CHECK(to_string(AttemptOutcome::retryable) == "retryable");
  CHECK(to_string(AttemptOutcome::permanent) == "permanent");
  CHECK(to_string(AttemptOutcome::gone) == "gone");
}
