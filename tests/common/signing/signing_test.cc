#include <algorithm>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/test_env.h"
#include "webhooks/error.h"
#include "webhooks/signer.h"
#include "webhooks/verifier.h"

using namespace webhooks;

namespace {

nlohmann::json vectors() {
  return nlohmann::json::parse(test::read_file(test::vectors_dir() + "/standard-webhooks-v1.json"));
}

const Secret kSecret = Secret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
constexpr const char* kId = "msg_p5jXN8AQM9LWM0D4loKWxJek";
constexpr std::int64_t kTs = 1614265330;
constexpr const char* kBody = "{\"test\": 2432232314}";
constexpr const char* kSig = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

VerifyResult check(const SignedHeaders& h, std::int64_t now = kTs, VerifyOptions options = {}) {
  return Verifier({kSecret}, {}, options).verify(h, kBody, now);
}

}  // namespace

TEST_CASE("sign reproduces the published Standard Webhooks vectors") {
  const auto all = vectors();
  REQUIRE(all["sign"].size() == 2);
  for (const auto& v : all["sign"]) {
    INFO(v["name"].get<std::string>());
    const Signer signer(Secret::parse(v["secret"].get<std::string>()));
    CHECK(signer.sign(v["id"].get<std::string>(), v["timestamp"].get<std::int64_t>(),
                      v["body"].get<std::string>()) == v["signature"].get<std::string>());
  }
}

TEST_CASE("verify agrees with every published verification vector") {
  const auto all = vectors();
  REQUIRE(all["verify"].size() == 5);
  for (const auto& v : all["verify"]) {
    INFO(v["name"].get<std::string>());
    const std::string id = v["id"], ts = std::to_string(v["timestamp"].get<std::int64_t>());
    const std::string header = v["header"], body = v["body"];
    const Verifier verifier({Secret::parse(v["secret"].get<std::string>())});
    const VerifyResult result =
        verifier.verify({id, ts, header}, body, v["now"].get<std::int64_t>());
    CHECK(static_cast<bool>(result) == v["valid"].get<bool>());
  }
}

TEST_CASE("signed content is id.timestamp.body") {
  CHECK(signed_content("msg_1", 1614265330, "{}") == "msg_1.1614265330.{}");
}

TEST_CASE("each failure names its reason and header: headers") {
  const std::string ts = std::to_string(kTs);
  SECTION("missing headers") {
    auto r = check({std::nullopt, ts, kSig});
    CHECK(r.status == VerifyStatus::missing_header);
    CHECK(r.header == "webhook-id");
    r = check({kId, std::nullopt, kSig});
    CHECK(r.status == VerifyStatus::missing_header);
    CHECK(r.header == "webhook-timestamp");
    r = check({kId, ts, std::nullopt});
    CHECK(r.status == VerifyStatus::missing_header);
    CHECK(r.header == "webhook-signature");
    CHECK(r.message == "webhook-signature header is missing");
  }
  SECTION("malformed webhook-id") {
    for (std::string bad :
         {std::string(), std::string("msg 1"), std::string(256, 'a'), std::string("msg\x01")}) {
      const auto r = check({bad, ts, kSig});
      CHECK(r.status == VerifyStatus::malformed_header);
      CHECK(r.header == "webhook-id");
    }
    CHECK(check({std::string(255, 'a'), ts, kSig}).status == VerifyStatus::no_matching_signature);
  }
  SECTION("malformed webhook-timestamp: milliseconds, fractions, signs, junk") {
    for (const char* bad : {"", "1614265330000", "1614265330.5", "-1614265330", "+1614265330",
                            " 1614265330", "16142653301", "abc"}) {
      INFO(bad);
      const auto r = check({kId, bad, kSig});
      CHECK(r.status == VerifyStatus::malformed_header);
      CHECK(r.header == "webhook-timestamp");
    }
  }
  SECTION("malformed webhook-signature: no version,signature entry") {
    for (const char* bad :
         {"", "v1", "g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", ",abc", "  "}) {
      INFO(bad);
      const auto r = check({kId, ts, bad});
      CHECK(r.status == VerifyStatus::malformed_header);
      CHECK(r.header == "webhook-signature");
    }
  }
}

TEST_CASE("each failure names its reason and header: signatures and time") {
  const std::string ts = std::to_string(kTs);
  SECTION("no matching signature: tampered body, wrong secret, empty or undecodable entry") {
    CHECK(Verifier({kSecret}).verify({kId, ts, kSig}, "{\"test\": 2432232315}", kTs).status ==
          VerifyStatus::no_matching_signature);
    const Secret other = Secret::parse("whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD");
    CHECK(Verifier({other}).verify({kId, ts, kSig}, kBody, kTs).status ==
          VerifyStatus::no_matching_signature);
    CHECK(check({kId, ts, "v1,"}).status == VerifyStatus::no_matching_signature);
    CHECK(check({kId, ts, "v1,!!!!"}).status == VerifyStatus::no_matching_signature);
    CHECK(check({kId, ts, "v2,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="}).status ==
          VerifyStatus::no_matching_signature);
    CHECK(check({"msg_other", ts, kSig}).status == VerifyStatus::no_matching_signature);
  }
  SECTION("timestamp tolerance, both directions, 300 s by default") {
    CHECK(check({kId, ts, kSig}, kTs + 300).status == VerifyStatus::ok);
    CHECK(check({kId, ts, kSig}, kTs - 300).status == VerifyStatus::ok);
    auto r = check({kId, ts, kSig}, kTs + 301);
    CHECK(r.status == VerifyStatus::timestamp_too_old);
    CHECK(r.message == "webhook-timestamp is 301 s old; the tolerance is 300 s");
    r = check({kId, ts, kSig}, kTs - 301);
    CHECK(r.status == VerifyStatus::timestamp_too_new);
    CHECK(r.header == "webhook-timestamp");
    CHECK(check({kId, ts, kSig}, kTs + 11, {std::chrono::seconds(10), true}).status ==
          VerifyStatus::timestamp_too_old);
  }
  SECTION("signature is checked before the time window") {
    CHECK(check({kId, ts, "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc="}, kTs + 10000).status ==
          VerifyStatus::no_matching_signature);
  }
  SECTION("replay mode skips only the time window") {
    const VerifyOptions replay{std::chrono::seconds(300), false};
    const auto r = check({kId, ts, kSig}, kTs + 86400 * 365, replay);
    CHECK(r.status == VerifyStatus::ok);
    CHECK(r.timestamp == kTs);
    CHECK(check({kId, "1614265330000", kSig}, kTs, replay).status ==
          VerifyStatus::malformed_header);
  }
}

TEST_CASE("rotation: any configured secret matches any entry") {
  const Secret old_secret = kSecret;
  const Secret new_secret = Secret::generate();
  const std::string ts = std::to_string(kTs);
  const std::string by_new = Signer(new_secret).sign(kId, kTs, kBody);
  const Verifier both({old_secret, new_secret});
  CHECK(both.verify({kId, ts, by_new}, kBody, kTs).status == VerifyStatus::ok);
  CHECK(both.verify({kId, ts, kSig}, kBody, kTs).status == VerifyStatus::ok);
  const std::string header = by_new + " " + kSig;
  CHECK(Verifier({old_secret}).verify({kId, ts, header}, kBody, kTs).status == VerifyStatus::ok);
  CHECK(Verifier({Secret::generate()}).verify({kId, ts, header}, kBody, kTs).status ==
        VerifyStatus::no_matching_signature);
}

TEST_CASE("a signature list joined with ', ' or a tab verifies whatever the order of its entries") {
  // Issue 12: "v1,GOOD, v1,AAAA" was 401 (the entry read as "GOOD,") while "v1,AAAA, v1,GOOD" was
  // 200.
  const std::string ts = std::to_string(kTs);
  const std::string good = kSig;
  const std::string other = "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=";
  for (const std::string separator : {", ", "\t", " ", ",\t", " \t "}) {
    INFO("separator [" << separator << "]");
    CHECK(check({kId, ts, good + separator + other}).status == VerifyStatus::ok);
    CHECK(check({kId, ts, other + separator + good}).status == VerifyStatus::ok);
    CHECK(check({kId, ts, other + separator + "v1,AAAA" + separator + good}).status ==
          VerifyStatus::ok);
    CHECK(check({kId, ts, other + separator + "v1,AAAA"}).status ==
          VerifyStatus::no_matching_signature);
  }
  // A trailing comma or tab after the only entry.
  CHECK(check({kId, ts, good + ","}).status == VerifyStatus::ok);
  CHECK(check({kId, ts, good + "\t"}).status == VerifyStatus::ok);
  // Only one comma ends an entry: "GOOD,," is not GOOD; "v1," alone is still an empty signature.
  CHECK(check({kId, ts, good + ",,"}).status == VerifyStatus::no_matching_signature);
  CHECK(check({kId, ts, "v1,"}).status == VerifyStatus::no_matching_signature);
  CHECK(check({kId, ts, "v1, v1,"}).status == VerifyStatus::no_matching_signature);
  const auto r = check({kId, ts, ", \t"});
  CHECK(r.status == VerifyStatus::malformed_header);
  CHECK(r.header == "webhook-signature");
}

TEST_CASE("the svix-* family verifies the same signature; its failures name svix-* headers") {
  const std::string ts = std::to_string(kTs);
  CHECK(check({kId, ts, kSig, kSvixHeaderNames}).status == VerifyStatus::ok);
  VerifyResult r = check({std::nullopt, ts, kSig, kSvixHeaderNames});
  CHECK(r.status == VerifyStatus::missing_header);
  CHECK(r.header == "svix-id");
  CHECK(r.message == "svix-id header is missing");
  r = check({kId, "16142653300000", kSig, kSvixHeaderNames});
  CHECK(r.header == "svix-timestamp");
  CHECK(r.message == "svix-timestamp must be Unix seconds: 1 to 10 decimal digits");
  r = check({kId, ts, "v1,AAAA", kSvixHeaderNames});
  CHECK(r.status == VerifyStatus::no_matching_signature);
  CHECK(r.header == "svix-signature");
  r = check({kId, ts, kSig, kSvixHeaderNames}, kTs + 301);
  CHECK(r.status == VerifyStatus::timestamp_too_old);
  CHECK(r.header == "svix-timestamp");
  CHECK(r.message == "svix-timestamp is 301 s old; the tolerance is 300 s");
}

TEST_CASE("choose_signed_header_names: webhook-* by default, svix-* alone, never a mix") {
  const auto choose = [](std::vector<std::string_view> present, SignedHeaderNames& names) {
    return choose_signed_header_names(
        [&](std::string_view name) {
          return std::find(present.begin(), present.end(), name) != present.end();
        },
        names);
  };
  SignedHeaderNames names{};
  CHECK(choose({}, names).status == VerifyStatus::ok);
  CHECK(names.id == "webhook-id");
  CHECK(choose({"svix-id", "svix-timestamp", "svix-signature"}, names).status == VerifyStatus::ok);
  CHECK(names.id == "svix-id");
  CHECK(names.timestamp == "svix-timestamp");
  CHECK(names.signature == "svix-signature");
  CHECK(choose({"webhook-id", "webhook-timestamp", "webhook-signature"}, names).status ==
        VerifyStatus::ok);
  CHECK(names.signature == "webhook-signature");
  const VerifyResult mixed = choose({"svix-id", "webhook-timestamp", "svix-signature"}, names);
  CHECK(mixed.status == VerifyStatus::malformed_header);
  CHECK(mixed.header == "webhook-timestamp");
  CHECK(mixed.message ==
        "the request carries both webhook-timestamp and svix-id: send the webhook-* or the svix-* "
        "headers, not both");
}

TEST_CASE("a verifier needs a secret or a key") {
  CHECK_THROWS_MATCHES(
      Verifier({}), Error,
      Catch::Matchers::Message("a verifier needs at least one secret or public key"));
}

TEST_CASE("status names are stable") {
  CHECK(to_string(VerifyStatus::timestamp_too_new) == "timestamp_too_new");
  CHECK(to_string(VerifyStatus::no_matching_signature) == "no_matching_signature");
}
