// ReplayCache: completed answers kept in memory until their record expires, the oldest dropped
// first beyond the cap.
#include "webhooks/idempotency/replay_cache.h"

#include <catch2/catch.hpp>
#include <string>

using namespace webhooks::idempotency;

namespace {

const std::string kFingerprint(64, 'a');
const std::string kOther(64, 'b');

Response answer(const std::string& body) {
  return Response{201, {{"Location", "/orders/1"}}, body};
}

}  // namespace

TEST_CASE(
    "replay cache: the same fingerprint is a replay of the stored answer, another a mismatch") {
  ReplayCache cache(4);
  cache.remember("merchant", "key-1", kFingerprint, answer("{\"id\":1}"), 1'000, 9'000);
  const auto replay = cache.find("merchant", "key-1", kFingerprint, 8'999);
  REQUIRE(replay);
  CHECK(replay->outcome == BeginOutcome::replay);
  REQUIRE(replay->response);
  CHECK(replay->response->status == 201);
  CHECK(replay->response->body == "{\"id\":1}");
  CHECK(replay->response->headers ==
        std::vector<std::pair<std::string, std::string>>{{"Location", "/orders/1"}});
  CHECK(replay->created_at == 1'000);
  CHECK(replay->expires_at == 9'000);
  const auto mismatch = cache.find("merchant", "key-1", kOther, 8'999);
  REQUIRE(mismatch);
  CHECK(mismatch->outcome == BeginOutcome::mismatch);
  CHECK_FALSE(mismatch->response);
  // Keys are per scope.
  CHECK_FALSE(cache.find("other-merchant", "key-1", kFingerprint, 8'999));
  CHECK_FALSE(cache.find("merchant", "key-2", kFingerprint, 8'999));
}

TEST_CASE("replay cache: an entry is not used from its record's expiry on") {
  ReplayCache cache;
  cache.remember("s", "k", kFingerprint, answer("{}"), 0, 5'000);
  CHECK(cache.find("s", "k", kFingerprint, 4'999));
  CHECK_FALSE(cache.find("s", "k", kFingerprint, 5'000));
  CHECK_FALSE(cache.find("s", "k", kOther, 5'000));
}

TEST_CASE("replay cache: beyond its cap the oldest entry goes first; a remembered key is updated") {
  ReplayCache cache(3);
  for (int i = 1; i <= 3; ++i) {
    cache.remember("s", "k" + std::to_string(i), kFingerprint, answer(std::to_string(i)), 0, 10);
  }
  cache.remember("s", "k2", kFingerprint, answer("2 again"), 0, 10);  // updated, not added
  CHECK(cache.size() == 3);
  cache.remember("s", "k4", kFingerprint, answer("4"), 0, 10);
  CHECK(cache.size() == 3);
  CHECK_FALSE(cache.find("s", "k1", kFingerprint, 0));
  CHECK(cache.find("s", "k2", kFingerprint, 0)->response->body == "2 again");
  CHECK(cache.find("s", "k3", kFingerprint, 0)->response->body == "3");
  CHECK(cache.find("s", "k4", kFingerprint, 0)->response->body == "4");
}

TEST_CASE("replay cache: answers over 4 KiB and a cache of 0 entries remember nothing") {
  ReplayCache cache;
  cache.remember("s", "big", kFingerprint, answer(std::string(ReplayCache::kMaxBodyBytes + 1, 'x')),
                 0, 10);
  cache.remember("s", "fits", kFingerprint, answer(std::string(ReplayCache::kMaxBodyBytes, 'x')), 0,
                 10);
  CHECK_FALSE(cache.find("s", "big", kFingerprint, 0));
  CHECK(cache.find("s", "fits", kFingerprint, 0));
  CHECK(cache.size() == 1);
  ReplayCache none(0);
  none.remember("s", "k", kFingerprint, answer("{}"), 0, 10);
  CHECK(none.size() == 0);
  CHECK_FALSE(none.find("s", "k", kFingerprint, 0));
}

TEST_CASE("replay cache: the note remembered with an answer comes back with its replay only") {
  ReplayCache cache;
  cache.remember("consumer", "evt_1", kFingerprint, answer("{}"), 0, 10, "order.created");
  cache.remember("consumer", "evt_2", kFingerprint, answer("{}"), 0, 10);
  std::string note = "unset";
  REQUIRE(cache.find("consumer", "evt_1", kFingerprint, 5, &note));
  CHECK(note == "order.created");
  note = "unset";
  const auto mismatch = cache.find("consumer", "evt_1", kOther, 5, &note);
  REQUIRE(mismatch);
  CHECK(mismatch->outcome == BeginOutcome::mismatch);
  CHECK(note == "unset");  // untouched: no answer is given
  REQUIRE(cache.find("consumer", "evt_2", kFingerprint, 5, &note));
  CHECK(note.empty());
  CHECK_FALSE(cache.find("consumer", "evt_3", kFingerprint, 5, &note));
  CHECK(note.empty());
}
