// Each provider verifier against the vectors its provider (or an SDK's test) publishes
// (provider_vectors.h gives each source).
#include <catch2/catch.hpp>

#include "provider_vectors.h"
#include "webhooks/providers/github.h"
#include "webhooks/providers/shopify.h"
#include "webhooks/providers/slack.h"
#include "webhooks/providers/stripe.h"

using namespace webhooks::providers;
using namespace provider_test;

TEST_CASE("github: GitHub's documented vector signs and verifies") {
  CHECK(github::sign(kGithubSecret, kGithubBody) == kGithubSignature);
  const std::map<std::string, std::string> headers{
      {"x-hub-signature-256", kGithubSignature},
      {"x-github-delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958"},
      {"x-github-event", "push"}};
  const github::Verifier verifier({"another secret", kGithubSecret});
  const ProviderResult result = verifier.verify(lookup(headers), kGithubBody, 0);
  CHECK(result.status == ProviderStatus::ok);
  CHECK(result.event_id == "72d3162e-cc78-11e3-81ab-4c9367dc0958");
  CHECK(result.timestamp == 0);
  CHECK(verifier.event_type(lookup(headers)) == "push");
}

TEST_CASE("slack: Slack's documented example signs and verifies; it has no event_id") {
  CHECK(slack::sign(kSlackSecret, kSlackTimestamp, kSlackBody) == kSlackSignature);
  const std::map<std::string, std::string> headers{
      {"X-Slack-Signature", kSlackSignature},
      {"X-Slack-Request-Timestamp", std::to_string(kSlackTimestamp)}};
  const slack::Verifier verifier({kSlackSecret});
  // The signature and the window pass; the slash command's form body has no event_id to dedup on.
  const ProviderResult result = verifier.verify(lookup(headers), kSlackBody, kSlackTimestamp);
  CHECK(result.status == ProviderStatus::missing_id);
  CHECK(result.message == "the body is not a JSON object, so it has no \"event_id\" to dedup on");
}

TEST_CASE("stripe: stripe-python's fixture verifies, also beside a bad v1 and a v0") {
  CHECK(stripe::sign(kStripeSecret, kStripeTimestamp, kStripeBody) == "t=12345,v1=" + kStripeV1);
  const stripe::Verifier verifier({kStripeSecret});
  for (const std::string& header :
       {"t=12345,v1=" + kStripeV1, "t=12345,v1=bad_signature,v1=" + kStripeV1,
        "t=12345,v0=6ffbb59b2300aae63f272406069a9788598b792a944a07aba816edb039989a39,v1=" +
            kStripeV1}) {
    const std::map<std::string, std::string> headers{{"Stripe-Signature", header}};
    const ProviderResult result = verifier.verify(lookup(headers), kStripeBody, 12345 + 300);
    CHECK(result.status == ProviderStatus::ok);
    CHECK(result.event_id == "evt_test_webhook");
    CHECK(result.timestamp == 12345);
  }
}

namespace {

// `headers` with the published Shopify vector's body: ok, its webhook id, the type orders/create.
void check_shopify_vector_verifies(const std::map<std::string, std::string>& headers) {
  const shopify::Verifier verifier({kShopifySecret});
  const ProviderResult result = verifier.verify(lookup(headers), kShopifyBody, 0);
  CHECK(result.status == ProviderStatus::ok);
  CHECK(result.event_id == kShopifyWebhookId);
  CHECK(verifier.event_type(lookup(headers)) == "orders/create");
}

}  // namespace

TEST_CASE("shopify: the published base64 vector signs and verifies") {
  CHECK(shopify::sign(kShopifySecret, kShopifyBody) == kShopifyHmac);
  const std::map<std::string, std::string> headers{{"X-Shopify-Hmac-Sha256", kShopifyHmac},
                                                   {"X-Shopify-Webhook-Id", kShopifyWebhookId},
                                                   {"X-Shopify-Topic", "orders/create"}};
  check_shopify_vector_verifies(headers);
}

TEST_CASE("shopify: the events family's names (shopify-*) verify the same vector") {
  const std::map<std::string, std::string> headers{
      {"shopify-hmac-sha256", kShopifyHmac},
      {"shopify-webhook-id", kShopifyWebhookId},
      {"shopify-event-id", "98880550-7158-44d4-b7cd-2c97c8a091b5"},
      {"shopify-topic", "orders/create"},
      {"shopify-shop-domain", "example.myshopify.com"},
      {"shopify-triggered-at", "2025-01-21T12:00:00.000Z"}};
  check_shopify_vector_verifies(headers);
}

TEST_CASE("make_provider_verifier: one per provider; standard, no secret, an empty one refused") {
  CHECK(make_provider_verifier(Provider::stripe, {"s"})->provider() == Provider::stripe);
  CHECK(make_provider_verifier(Provider::github, {"s"})->provider() == Provider::github);
  CHECK(make_provider_verifier(Provider::shopify, {"s"})->provider() == Provider::shopify);
  CHECK(make_provider_verifier(Provider::slack, {"s"})->provider() == Provider::slack);
  CHECK_THROWS_WITH(make_provider_verifier(Provider::standard, {"s"}),
                    "the standard provider is verified by webhooks::Verifier, not a provider "
                    "verifier");
  CHECK_THROWS_WITH(make_provider_verifier(Provider::github, {}),
                    "a provider verifier needs at least one secret");
  CHECK_THROWS_WITH(make_provider_verifier(Provider::slack, {"s", ""}),
                    "a provider secret is empty");
  for (const char* name : {"standard", "stripe", "github", "shopify", "slack"}) {
    CHECK(to_string(*parse_provider(name)) == name);
  }
  CHECK_FALSE(parse_provider("GitHub"));
}
