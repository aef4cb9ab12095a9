// Ed25519 ("v1a") and "both" endpoints: the signature values the dispatcher builds (exact values,
// computed independently with Python's cryptography package), the stored signing scheme, and
// rotation with a grace period over real HTTP on loopback with a fake clock. SQLite and
// PostgreSQL.
#include <algorithm>
#include <catch2/catch.hpp>

#include "delivery/endpoint_signers.h"
#include "fixture.h"
#include "receiver.h"
#include "webhooks/uuid.h"
#include "webhooks/verifier.h"

namespace webhooks::test {
namespace {

using publisher::SigningScheme;

// RFC 8032, section 7.1, TEST 1's seed and public key; the Standard Webhooks vectors' secret.
constexpr const char* kSigningKey = "whsk_nWGxne/9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A=";
constexpr const char* kPublicKey = "whpk_11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=";
constexpr const char* kSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
// Over msg_p5jXN8AQM9LWM0D4loKWxJek.1614265340.<the event body below>: Ed25519PrivateKey.sign and
// hmac.new(..., hashlib.sha256) in Python 3.11 with Debian's python3-cryptography 38.
constexpr const char* kV1a =
    "v1a,RuGmE3LF26QVeLtVPXDGV215/IflMk3rPj0MPbrITT8JXjYOgHQS1vKzndXfnhhn0tEs89qjMCLm1OQamdynCQ==";
constexpr const char* kV1 = "v1,15bmfEGfIvw+w5aBzrxirNP46LncXEdSURXSKPLqF50=";

publisher::ClaimedTask claimed(std::vector<std::string> keys) {
  publisher::ClaimedTask task;
  task.url = "http://127.0.0.1:1/hook";
  task.event.event_id = "msg_p5jXN8AQM9LWM0D4loKWxJek";
  task.event.type = "order.created";
  task.event.payload = R"({"amount":100})";
  task.event.created_at = 1614265330000;
  task.secrets = std::move(keys);
  return task;
}

std::string signature_of(const std::vector<std::string>& keys) {
  const publisher::DeliveryRequest request =
      publisher::build_delivery(claimed(keys), 1614265340, "d1");
  REQUIRE(request.body == R"({"id":"msg_p5jXN8AQM9LWM0D4loKWxJek","type":"order.created",)"
                          R"("timestamp":"2021-02-25T15:02:10.000Z","data":{"amount":100}})");
  for (const auto& [name, value] : request.headers) {
    if (name == "webhook-signature") return value;
  }
  return "(none)";
}

TEST_CASE("v1a and both: the exact webhook-signature values, newest key first", "[signing]") {
  CHECK(signature_of({kSigningKey}) == kV1a);
  CHECK(signature_of({kSecret, kSigningKey}) == std::string(kV1) + " " + kV1a);
  CHECK(signature_of({kSigningKey, kSecret}) == std::string(kV1a) + " " + kV1);
  // A key that does not parse is never used (it was refused when configured).
  CHECK(signature_of({"whsk_AAAA", kSigningKey}) == kV1a);
  CHECK(signature_of({}).empty());
  CHECK(publisher::public_key_of(kSigningKey) == std::optional<std::string>(kPublicKey));
  CHECK_FALSE(publisher::public_key_of(kSecret));
  CHECK_FALSE(publisher::public_key_of("whsk_AAAA"));
}

TEST_CASE("signing schemes parse exactly \"v1\", \"v1a\" and \"both\"", "[signing]") {
  CHECK(publisher::parse_signing_scheme("v1") == SigningScheme::v1);
  CHECK(publisher::parse_signing_scheme("v1a") == SigningScheme::v1a);
  CHECK(publisher::parse_signing_scheme("both") == SigningScheme::both);
  for (const char* bad : {"", "V1", "v1a ", "v2", "ed25519"}) {
    CHECK_FALSE(publisher::parse_signing_scheme(bad));
  }
  CHECK(publisher::to_string(SigningScheme::both) == "both");
}

bool verifies(const Received& r, const std::vector<std::string>& secrets,
              const std::vector<std::string>& public_keys, std::int64_t now) {
  std::vector<Secret> parsed;
  for (const auto& s : secrets) parsed.push_back(Secret::parse(s));
  std::vector<Ed25519PublicKey> keys;
  for (const auto& k : public_keys) keys.push_back(Ed25519PublicKey::parse(k));
  const Verifier verifier(parsed, keys);
  return static_cast<bool>(verifier.verify(
      {r.header("webhook-id"), r.header("webhook-timestamp"), r.header("webhook-signature")},
      r.body, now));
}

int entries(const Received& r) {
  const std::string sig = r.header("webhook-signature");
  return sig.empty() ? 0 : 1 + static_cast<int>(std::count(sig.begin(), sig.end(), ' '));
}

publisher::Endpoint v1a_endpoint(PublisherFixture& f, const std::string& url) {
  UuidV7Generator ids(f.clock);
  publisher::Endpoint e;
  e.id = ids.next();
  e.merchant_id = "m1";
  e.url = url;
  e.signing = SigningScheme::v1a;
  e.created_at = e.updated_at = f.clock.now_ms();
  e.secrets.push_back({kSigningKey, f.clock.now_ms(), std::nullopt});
  f.store.create_endpoint(e);
  return e;
}

TEST_CASE("a v1a endpoint rotated to both signs with the old key until the grace ends",
          "[signing]") {
  PublisherFixture f("signing_rotation");
  Receiver receiver;
  const publisher::Endpoint endpoint = v1a_endpoint(f, receiver.url());
  CHECK(f.store.find_endpoint(endpoint.id)->signing == SigningScheme::v1a);
  f.publish("m1", "order.created");
  REQUIRE(f.dispatcher.run_once() == 1);
  const std::int64_t now = f.clock.now_seconds();
  CHECK(entries(receiver.received()[0]) == 1);
  CHECK(receiver.received()[0].header("webhook-signature").rfind("v1a,", 0) == 0);
  CHECK(verifies(receiver.received()[0], {}, {kPublicKey}, now));
  CHECK_FALSE(verifies(receiver.received()[0], {kSecret}, {}, now));

  f.advance(std::chrono::seconds(1));  // the new keys sort before the old one
  const auto new_key = Ed25519SigningKey::generate();
  const std::string new_secret = Secret::generate().to_string();
  REQUIRE(f.store.rotate_keys(endpoint.id, {new_secret, new_key.to_string()}, SigningScheme::both,
                              f.clock.now_ms() + 3'600'000, f.clock.now_ms()));
  CHECK_FALSE(f.store.rotate_keys("nope", {new_secret}, SigningScheme::v1, 0, 0));
  const auto stored = f.store.find_endpoint(endpoint.id);
  CHECK(stored->signing == SigningScheme::both);
  REQUIRE(stored->secrets.size() == 3);
  CHECK(stored->secrets[2].secret == kSigningKey);
  CHECK(stored->secrets[2].expires_at == f.clock.now_ms() + 3'600'000);
  CHECK(stored->secrets[0].secret == new_secret);

  f.publish("m1", "order.created");
  REQUIRE(f.dispatcher.run_once() == 1);
  const Received during = receiver.received()[1];
  CHECK(entries(during) == 3);  // new v1, new v1a, old v1a
  CHECK(verifies(during, {}, {kPublicKey}, now));
  CHECK(verifies(during, {}, {new_key.public_key().to_string()}, now));
  CHECK(verifies(during, {new_secret}, {}, now));

  f.advance(std::chrono::hours(1));  // grace over: only the new keys sign
  f.publish("m1", "order.created");
  REQUIRE(f.dispatcher.run_once() == 1);
  const Received after = receiver.received()[2];
  const std::int64_t later = f.clock.now_seconds();
  CHECK(entries(after) == 2);
  CHECK(after.header("webhook-signature").rfind("v1,", 0) == 0);
  CHECK_FALSE(verifies(after, {}, {kPublicKey}, later));
  CHECK(verifies(after, {}, {new_key.public_key().to_string()}, later));
  CHECK(verifies(after, {new_secret}, {}, later));

  // Rolling back: the old (expired) v1a key given again is the current key again, alone.
  f.advance(std::chrono::seconds(1));
  REQUIRE(f.store.rotate_keys(endpoint.id, {kSigningKey}, SigningScheme::v1a, f.clock.now_ms(),
                              f.clock.now_ms()));
  const auto rolled_back = f.store.find_endpoint(endpoint.id);
  REQUIRE(rolled_back->secrets.size() == 3);  // the two it replaces, expiring now, listed after
  CHECK(rolled_back->secrets[0].secret == kSigningKey);
  CHECK(rolled_back->secrets[0].expires_at == std::nullopt);
  CHECK(rolled_back->secrets[1].expires_at == f.clock.now_ms());
  CHECK(rolled_back->secrets[2].expires_at == f.clock.now_ms());
}

}  // namespace
}  // namespace webhooks::test
