// The published test vectors of the provider verifiers (providers_vectors_test.cc,
// providers_errors_test.cc), used as they are, each with its source.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "webhooks/providers/provider.h"

namespace provider_test {

// GitHub Docs, "Validating webhook deliveries", section "Testing the webhook payload validation"
// (https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries).
inline const std::string kGithubSecret = "It's a Secret to Everybody";
inline const std::string kGithubBody = "Hello, World!";
inline const std::string kGithubSignature =
    "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";

// Slack's docs, "Verifying requests from Slack", the worked example of a slash command
// (https://api.slack.com/authentication/verifying-requests-from-slack).
inline const std::string kSlackSecret = "8f742231b10e8888abcd99yyyzzz85a5";
inline constexpr std::int64_t kSlackTimestamp = 1531420618;
inline const std::string kSlackBody =
    "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V"
    "&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text="
    "&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%"
    "2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121."
    "803a0bc887a14d10d2c447fce8b6703c";
inline const std::string kSlackSignature =
    "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503";

// Stripe publishes no fixed signature: its SDKs' tests sign their fixture at test time. The
// inputs are stripe-python's tests/test_webhook.py (DUMMY_WEBHOOK_PAYLOAD, DUMMY_WEBHOOK_SECRET,
// and the timestamp 12345 of test_timestamp_off_but_no_tolerance); the expected v1 was computed
// independently with Python's hmac module:
//   hmac.new(b"whsec_test_secret", b"12345." + payload, hashlib.sha256).hexdigest()
inline const std::string kStripeSecret = "whsec_test_secret";
inline constexpr std::int64_t kStripeTimestamp = 12345;
inline const std::string kStripeBody = R"({
  "id": "evt_test_webhook",
  "object": "event",
  "data": { "object": { "id": "rdr_123", "object": "terminal.reader" } }
})";
inline const std::string kStripeV1 =
    "07b1ede164afb7b5de91267ffa656f568c65d6e0783ce0ac55ee094643578eda";

// Shopify publishes no fixed HMAC either. This fixed vector is SQLPage's test of
// sqlpage.hmac(..., 'sha256-base64') "Test Shopify webhook HMAC validation with base64 output"
// (github.com/sqlpage/SQLPage, tests/); Python's hmac module gives the same value.
inline const std::string kShopifySecret = "test-webhook-secret";
inline const std::string kShopifyBody =
    R"({"id":1234567890,"email":"customer@example.com","total_price":"123.45"})";
inline const std::string kShopifyHmac = "QNyObTlKbMx2qDlPF/ZOZcBqg5OgPg+2oky3zldc0Gw=";
// The webhook id of shopify-api-ruby's test/webhooks/registry_test.rb.
inline const std::string kShopifyWebhookId = "b1234-eefd-4c9e-9520-049845a02082";

// A header lookup over `headers` (case-insensitive as in HTTP: keys are compared lowercased).
inline webhooks::providers::HeaderLookup lookup(const std::map<std::string, std::string>& headers) {
  return [&headers](std::string_view name) -> std::optional<std::string_view> {
    for (const auto& [n, v] : headers) {
      if (n.size() != name.size()) continue;
      bool same = true;
      for (std::size_t i = 0; i < n.size(); ++i) {
        same &= std::tolower(static_cast<unsigned char>(n[i])) ==
                std::tolower(static_cast<unsigned char>(name[i]));
      }
      if (same) return std::string_view(v);
    }
    return std::nullopt;
  };
}

}  // namespace provider_test
