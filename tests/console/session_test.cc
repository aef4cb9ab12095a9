#include "webhooks/console/session.h"

#include <catch2/catch.hpp>

#include "webhooks/error.h"

using webhooks::FakeClock;
using webhooks::console::Session;
using webhooks::console::Sessions;

namespace {

// Two merchants with their API keys: the orders-api shape (principal = merchant).
Sessions merchant_sessions(const FakeClock& clock, std::map<std::string, std::string>& keys) {
  auto secret_of = [&keys](std::string_view principal) -> std::optional<std::string> {
    const auto it = keys.find(std::string(principal));
    if (it == keys.end()) return std::nullopt;
    return it->second;
  };
  auto sign_in = [&keys](std::string_view token) -> std::optional<std::string> {
    for (const auto& [merchant, key] : keys) {
      if (webhooks::console::same_secret(token, key)) return merchant;
    }
    return std::nullopt;
  };
  return Sessions(secret_of, sign_in, clock);
}

}  // namespace

TEST_CASE("a single-token session signs in with the token only and verifies until it expires") {
  FakeClock clock(1'800'000'000'000);
  const Sessions sessions = Sessions::single_token("admin-token", clock);
  CHECK(sessions.sign_in("admin-token") == std::optional<std::string>(""));
  CHECK_FALSE(sessions.sign_in("admin-tokem"));
  CHECK_FALSE(sessions.sign_in(""));
  const std::string value = sessions.issue("");
  REQUIRE(value.starts_with("1800043200."));  // now + 12 h
  CHECK(std::count(value.begin(), value.end(), '.') == 2);
  CHECK(value.size() == 11 + 32 + 1 + 64);
  const std::optional<Session> session = sessions.verify(value);
  REQUIRE(session);
  CHECK(session->principal.empty());
  CHECK(session->expires_at == 1'800'043'200);
  CHECK(session->csrf_token.size() == 64);
  CHECK(session->csrf_token != value.substr(value.size() - 64));
  clock.advance(std::chrono::hours(12) - std::chrono::seconds(1));
  CHECK(sessions.verify(value));
  clock.advance(std::chrono::seconds(1));
  CHECK_FALSE(sessions.verify(value));  // expires <= now
}

TEST_CASE("a tampered session, one signed with another token, or garbage is refused") {
  FakeClock clock;
  const Sessions sessions = Sessions::single_token("admin-token", clock);
  const Sessions other = Sessions::single_token("other-token", clock);
  const std::string value = sessions.issue("");
  CHECK_FALSE(other.verify(value));
  std::string later = value;  // a later expiry with the old signature
  later[0] = later[0] == '9' ? '8' : static_cast<char>(later[0] + 1);
  CHECK_FALSE(sessions.verify(later));
  std::string flipped = value;
  flipped.back() = flipped.back() == '0' ? '1' : '0';
  CHECK_FALSE(sessions.verify(flipped));
  for (const char* bad : {"", ".", "..", "1.2.3", "x.00000000000000000000000000000000.00",
                          "99999999999.zz.00", "1.2.3.4.5"}) {
    CHECK_FALSE(sessions.verify(bad));
  }
  CHECK_FALSE(Sessions::single_token("", clock).sign_in(""));
  CHECK_THROWS_AS(Sessions::single_token("", clock).issue(""), webhooks::Error);
}

TEST_CASE("the CSRF token is the session's own, and differs between sessions") {
  FakeClock clock;
  const Sessions sessions = Sessions::single_token("admin-token", clock);
  const Session a = *sessions.verify(sessions.issue(""));
  const Session b = *sessions.verify(sessions.issue(""));
  CHECK(a.value != b.value);
  CHECK(Sessions::csrf_matches(a, a.csrf_token));
  CHECK_FALSE(Sessions::csrf_matches(a, b.csrf_token));
  CHECK_FALSE(Sessions::csrf_matches(a, ""));
  CHECK_FALSE(Sessions::csrf_matches(a, a.value));
  CHECK(sessions.verify(a.value)->csrf_token == a.csrf_token);  // stable: derived, not stored
}

TEST_CASE("a principal's session carries it, signed with that principal's own secret") {
  FakeClock clock;
  std::map<std::string, std::string> keys{{"merchant_1", "key-one"}, {"merchant_2", "key-two"}};
  const Sessions sessions = merchant_sessions(clock, keys);
  CHECK(sessions.sign_in("key-two") == std::optional<std::string>("merchant_2"));
  CHECK_FALSE(sessions.sign_in("key-three"));
  const std::string value = sessions.issue("merchant_1");
  CHECK(std::count(value.begin(), value.end(), '.') == 3);
  REQUIRE(sessions.verify(value));
  CHECK(sessions.verify(value)->principal == "merchant_1");
  // Claiming another principal with the same signature fails.
  std::string swapped = value;
  const std::string hex_1 = "6d65726368616e745f31", hex_2 = "6d65726368616e745f32";
  swapped.replace(swapped.find(hex_1), hex_1.size(), hex_2);
  CHECK_FALSE(sessions.verify(swapped));
  keys["merchant_1"] = "key-one-rotated";  // a new key signs the merchant out
  CHECK_FALSE(sessions.verify(value));
  keys.erase("merchant_1");
  CHECK_FALSE(sessions.verify(value));
  CHECK_THROWS_AS(sessions.issue("merchant_1"), webhooks::Error);
}
