#include "webhooks/ed25519.h"

#include <catch2/catch.hpp>

#include "webhooks/base64.h"
#include "webhooks/error.h"
#include "webhooks/verifier.h"

using namespace webhooks;
using Catch::Matchers::Message;

namespace {

std::vector<std::uint8_t> from_hex(std::string_view hex) {
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    out.push_back(static_cast<std::uint8_t>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

// RFC 8032, section 7.1, TEST 1 (empty message).
const auto kSeed = from_hex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60");
const auto kPublic = from_hex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
const auto kSignature = from_hex(
    "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b4"
    "6b"
    "d25bf5f0595bbe24655141438e7a100b");

}  // namespace

TEST_CASE("Ed25519 reproduces RFC 8032 test 1") {
  const auto key = Ed25519SigningKey::parse("whsk_" + base64_encode(kSeed));
  CHECK(key.public_key().to_string() == "whpk_" + base64_encode(kPublic));
  const auto signature = key.sign_raw("");
  CHECK(std::vector<std::uint8_t>(signature.begin(), signature.end()) == kSignature);
  CHECK(key.public_key().verify("", kSignature));
}

TEST_CASE("v1a signatures round-trip through the verifier") {
  const auto key = Ed25519SigningKey::generate();
  const auto pub = Ed25519PublicKey::parse(key.public_key().to_string());
  const std::string entry = key.sign("msg_1", 1700000000, "{\"a\":1}");
  CHECK(entry.rfind("v1a,", 0) == 0);
  CHECK(entry.size() == 4 + 88);
  const Verifier verifier({}, {pub});
  CHECK(verifier.verify({"msg_1", "1700000000", entry}, "{\"a\":1}", 1700000000).status ==
        VerifyStatus::ok);
  CHECK(verifier.verify({"msg_1", "1700000000", entry}, "{\"a\":2}", 1700000000).status ==
        VerifyStatus::no_matching_signature);
  const Verifier other({}, {Ed25519SigningKey::generate().public_key()});
  CHECK(other.verify({"msg_1", "1700000000", entry}, "{\"a\":1}", 1700000000).status ==
        VerifyStatus::no_matching_signature);
  // A v1a entry among v1 entries; the HMAC secret does not match but the key does.
  const Verifier mixed({Secret::generate()}, {pub});
  CHECK(mixed.verify({"msg_1", "1700000000", "v1,AAAA " + entry}, "{\"a\":1}", 1700000000).status ==
        VerifyStatus::ok);
  // Joined with ", " or a tab, first or last (issue 12).
  for (const std::string sep : {", ", "\t"}) {
    CHECK(mixed.verify({"msg_1", "1700000000", entry + sep + "v1a,AAAA"}, "{\"a\":1}", 1700000000)
              .status == VerifyStatus::ok);
    CHECK(mixed.verify({"msg_1", "1700000000", "v1a,AAAA" + sep + entry}, "{\"a\":1}", 1700000000)
              .status == VerifyStatus::ok);
  }
  CHECK(Ed25519SigningKey::parse(key.to_string()).public_key().raw() == pub.raw());
}

TEST_CASE("bad Ed25519 keys are refused with the reason") {
  CHECK_THROWS_MATCHES(Ed25519PublicKey::parse(""), Error, Message("Ed25519 public key is empty"));
  CHECK_THROWS_MATCHES(Ed25519PublicKey::parse("whsk_" + base64_encode(kPublic)), Error,
                       Message("Ed25519 public key must start with 'whpk_'"));
  CHECK_THROWS_MATCHES(Ed25519SigningKey::parse("whsk_" + base64_encode(kPublic) + " "), Error,
                       Message("Ed25519 signing key contains whitespace"));
  CHECK_THROWS_MATCHES(Ed25519SigningKey::parse("whsk_%%%%"), Error,
                       Message("Ed25519 signing key is not valid base64"));
  CHECK_THROWS_MATCHES(Ed25519SigningKey::parse("whsk_AAAA"), Error,
                       Message("Ed25519 signing key decodes to 3 bytes; expected 32"));
}
