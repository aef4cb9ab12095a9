// Each provider verifier's refusals, with their exact statuses: a tampered body, a wrong secret,
// a timestamp outside the window (an injected now), malformed and missing headers, missing ids.
#include <catch2/catch.hpp>

#include "provider_vectors.h"
#include "webhooks/providers/github.h"
#include "webhooks/providers/shopify.h"
#include "webhooks/providers/slack.h"
#include "webhooks/providers/stripe.h"

using namespace webhooks::providers;
using namespace provider_test;
using Map = std::map<std::string, std::string>;

namespace {

constexpr std::int64_t kNow = 1'700'000'000;
const std::string kEvent = R"({"id":"evt_1","event_id":"Ev1","type":"x.y"})";

ProviderStatus status_of(const ProviderVerifier& verifier, const Map& headers,
                         const std::string& body, std::int64_t now = kNow) {
  return verifier.verify(lookup(headers), body, now).status;
}

}  // namespace

TEST_CASE("stripe: tampered body, wrong secret, window, malformed, missing id") {
  const stripe::Verifier verifier({"whsec_a"});
  const auto signed_at = [](std::int64_t t, const std::string& body, const char* secret) {
    return Map{{"Stripe-Signature", stripe::sign(secret, t, body)}};
  };
  CHECK(status_of(verifier, signed_at(kNow, kEvent, "whsec_a"), kEvent) == ProviderStatus::ok);
  CHECK(status_of(verifier, signed_at(kNow, kEvent, "whsec_a"), kEvent + " ") ==
        ProviderStatus::bad_signature);
  CHECK(status_of(verifier, signed_at(kNow, kEvent, "whsec_b"), kEvent) ==
        ProviderStatus::bad_signature);
  CHECK(status_of(verifier, signed_at(kNow - 300, kEvent, "whsec_a"), kEvent) ==
        ProviderStatus::ok);
  CHECK(status_of(verifier, signed_at(kNow - 301, kEvent, "whsec_a"), kEvent) ==
        ProviderStatus::timestamp_too_old);
  CHECK(status_of(verifier, signed_at(kNow + 301, kEvent, "whsec_a"), kEvent) ==
        ProviderStatus::timestamp_too_new);
  // A signature over another t does not match, whatever the window.
  const std::string v1 = stripe::sign("whsec_a", kNow, kEvent).substr(13);
  CHECK(status_of(verifier, {{"Stripe-Signature", "t=1700000001," + v1}}, kEvent) ==
        ProviderStatus::bad_signature);
  for (const char* header : {"i'm not even a real signature header", "t=,v1=ab", "v1=ab", "t=12345",
                             "t=12345,v0=ab", "t=-1,v1=ab", "t=12345678901,v1=ab"}) {
    CHECK(status_of(verifier, {{"Stripe-Signature", header}}, kEvent) ==
          ProviderStatus::malformed_header);
  }
  CHECK(status_of(verifier, {}, kEvent) == ProviderStatus::missing_header);
  for (const char* body : {"[1]", R"({"id":7})", R"({"id":""})", R"({"object":"event"})"}) {
    CHECK(status_of(verifier, signed_at(kNow, body, "whsec_a"), body) ==
          ProviderStatus::missing_id);
  }
}

TEST_CASE("stripe: the tolerance is configurable and can be skipped") {
  const Map old{{"Stripe-Signature", stripe::sign("k", kNow - 20, kEvent)}};
  CHECK(status_of(stripe::Verifier({"k"}, {std::chrono::seconds(10), true}), old, kEvent) ==
        ProviderStatus::timestamp_too_old);
  CHECK(status_of(stripe::Verifier({"k"}, {std::chrono::seconds(10), false}), old, kEvent) ==
        ProviderStatus::ok);
}

TEST_CASE("github: tampered body, wrong secret, malformed and missing headers") {
  const github::Verifier verifier({kGithubSecret});
  const Map good{{"X-Hub-Signature-256", kGithubSignature}, {"X-GitHub-Delivery", "d-1"}};
  CHECK(status_of(verifier, good, kGithubBody) == ProviderStatus::ok);
  CHECK(status_of(verifier, good, "Hello, World?") == ProviderStatus::bad_signature);
  CHECK(status_of(github::Verifier({"It's a secret to everybody"}), good, kGithubBody) ==
        ProviderStatus::bad_signature);
  CHECK(status_of(verifier, {{"X-Hub-Signature-256", "sha256=ABC"}, {"X-GitHub-Delivery", "d"}},
                  kGithubBody) == ProviderStatus::bad_signature);
  for (const std::string& header :
       {kGithubSignature.substr(7), std::string("sha1=01dc10d0c83e72ed246219cdd916"),
        "SHA256=" + kGithubSignature.substr(7)}) {
    CHECK(status_of(verifier, {{"X-Hub-Signature-256", header}, {"X-GitHub-Delivery", "d"}},
                    kGithubBody) == ProviderStatus::malformed_header);
  }
  CHECK(status_of(verifier, {{"X-Hub-Signature-256", kGithubSignature}, {"X-GitHub-Delivery", ""}},
                  kGithubBody) == ProviderStatus::malformed_header);
  CHECK(status_of(verifier, {{"X-GitHub-Delivery", "d"}}, kGithubBody) ==
        ProviderStatus::missing_header);
  const ProviderResult no_id =
      verifier.verify(lookup({{"X-Hub-Signature-256", kGithubSignature}}), kGithubBody, kNow);
  CHECK(no_id.status == ProviderStatus::missing_header);
  CHECK(no_id.header == "X-GitHub-Delivery");
}

TEST_CASE("shopify: tampered body, wrong secret, malformed and missing headers") {
  const shopify::Verifier verifier({kShopifySecret});
  const Map good{{"X-Shopify-Hmac-Sha256", kShopifyHmac}, {"X-Shopify-Webhook-Id", "w-1"}};
  CHECK(status_of(verifier, good, kShopifyBody) == ProviderStatus::ok);
  CHECK(status_of(verifier, good, kShopifyBody + "\n") == ProviderStatus::bad_signature);
  CHECK(status_of(shopify::Verifier({"test-webhook-secreT"}), good, kShopifyBody) ==
        ProviderStatus::bad_signature);
  const std::string hex_form = "40dc8e6d394a6ccc76a8394f17f64e65c06a8393a03e0fb6a24cb7ce575cd06c";
  for (const std::string& header :
       {hex_form, kShopifyHmac.substr(0, 43), std::string("invalid"), kShopifyHmac + "\n"}) {
    CHECK(status_of(verifier, {{"X-Shopify-Hmac-Sha256", header}, {"X-Shopify-Webhook-Id", "w"}},
                    kShopifyBody) == ProviderStatus::malformed_header);
  }
  CHECK(status_of(verifier,
                  {{"X-Shopify-Hmac-Sha256", kShopifyHmac}, {"X-Shopify-Webhook-Id", "has space"}},
                  kShopifyBody) == ProviderStatus::malformed_header);
  CHECK(status_of(verifier, {{"X-Shopify-Hmac-Sha256", kShopifyHmac}}, kShopifyBody) ==
        ProviderStatus::missing_header);
  CHECK(status_of(verifier, {{"X-Shopify-Webhook-Id", "w"}}, kShopifyBody) ==
        ProviderStatus::missing_header);
}

TEST_CASE("shopify: the events family's refusals name the header as it was sent") {
  const shopify::Verifier verifier({kShopifySecret});
  ProviderResult result =
      verifier.verify(lookup({{"shopify-hmac-sha256", kShopifyHmac}}), kShopifyBody, kNow);
  CHECK(result.status == ProviderStatus::missing_header);
  CHECK(result.header == "X-Shopify-Webhook-Id");
  CHECK(result.message == "X-Shopify-Webhook-Id (or shopify-webhook-id) is missing");
  result = verifier.verify(lookup({{"shopify-webhook-id", "w"}}), kShopifyBody, kNow);
  CHECK(result.message == "X-Shopify-Hmac-Sha256 (or shopify-hmac-sha256) is missing");
  result =
      verifier.verify(lookup({{"shopify-hmac-sha256", "invalid"}, {"shopify-webhook-id", "w"}}),
                      kShopifyBody, kNow);
  CHECK(result.status == ProviderStatus::malformed_header);
  CHECK(result.message ==
        "shopify-hmac-sha256 must be the padded base64 of 32 bytes (44 characters)");
  result =
      verifier.verify(lookup({{"shopify-hmac-sha256", kShopifyHmac}, {"shopify-webhook-id", "w"}}),
                      kShopifyBody + "\n", kNow);
  CHECK(result.status == ProviderStatus::bad_signature);
  CHECK(result.message == "no signature in shopify-hmac-sha256 matches any configured secret");
  result = verifier.verify(
      lookup({{"shopify-hmac-sha256", kShopifyHmac}, {"shopify-webhook-id", "has space"}}),
      kShopifyBody, kNow);
  CHECK(result.status == ProviderStatus::malformed_header);
  CHECK(result.header == "shopify-webhook-id");
  // The X-Shopify- name counts first, as in Shopify's libraries.
  result = verifier.verify(lookup({{"X-Shopify-Hmac-Sha256", kShopifyHmac},
                                   {"shopify-hmac-sha256", "invalid"},
                                   {"X-Shopify-Webhook-Id", "w-1"},
                                   {"shopify-webhook-id", "w-2"}}),
                           kShopifyBody, kNow);
  CHECK(result.status == ProviderStatus::ok);
  CHECK(result.event_id == "w-1");
}

TEST_CASE("slack: tampered body, wrong secret, window, malformed, missing id") {
  const slack::Verifier verifier({kSlackSecret});
  const auto at = [](std::int64_t t, const std::string& body, const std::string& secret) {
    return Map{{"X-Slack-Signature", slack::sign(secret, t, body)},
               {"X-Slack-Request-Timestamp", std::to_string(t)}};
  };
  const ProviderResult ok = verifier.verify(lookup(at(kNow, kEvent, kSlackSecret)), kEvent, kNow);
  CHECK(ok.status == ProviderStatus::ok);
  CHECK(ok.event_id == "Ev1");
  CHECK(status_of(verifier, at(kNow, kEvent, kSlackSecret), kEvent + " ") ==
        ProviderStatus::bad_signature);
  CHECK(status_of(verifier, at(kNow, kEvent, "8f742231b10e8888abcd99yyyzzz85a6"), kEvent) ==
        ProviderStatus::bad_signature);
  CHECK(status_of(verifier, at(kNow + 300, kEvent, kSlackSecret), kEvent) == ProviderStatus::ok);
  CHECK(status_of(verifier, at(kNow - 301, kEvent, kSlackSecret), kEvent) ==
        ProviderStatus::timestamp_too_old);
  CHECK(status_of(verifier, at(kNow + 301, kEvent, kSlackSecret), kEvent) ==
        ProviderStatus::timestamp_too_new);
  // Slack's own example, five minutes and one second later.
  const Map example{{"X-Slack-Signature", kSlackSignature},
                    {"X-Slack-Request-Timestamp", std::to_string(kSlackTimestamp)}};
  CHECK(status_of(verifier, example, kSlackBody, kSlackTimestamp + 301) ==
        ProviderStatus::timestamp_too_old);
  CHECK(status_of(verifier,
                  {{"X-Slack-Signature", kSlackSignature.substr(3)},
                   {"X-Slack-Request-Timestamp", "1531420618"}},
                  kSlackBody, kSlackTimestamp) == ProviderStatus::malformed_header);
  CHECK(status_of(
            verifier,
            {{"X-Slack-Signature", kSlackSignature}, {"X-Slack-Request-Timestamp", "1531420618.5"}},
            kSlackBody, kSlackTimestamp) == ProviderStatus::malformed_header);
  CHECK(status_of(verifier, {{"X-Slack-Signature", kSlackSignature}}, kSlackBody) ==
        ProviderStatus::missing_header);
  const std::string challenge = R"({"type":"url_verification","challenge":"3eZbrw1a"})";
  CHECK(status_of(verifier, at(kNow, challenge, kSlackSecret), challenge) ==
        ProviderStatus::missing_id);
}
