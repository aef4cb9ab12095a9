// Shopify webhook signatures.
// Source: Shopify's docs, "Verify webhooks" (https://shopify.dev/docs/apps/build/webhooks/
// subscribe/https#step-5-verify-the-webhook), and shopify-api-js / shopify-api-ruby's
// HmacValidator.
//
//   X-Shopify-Hmac-Sha256: <base64 HMAC-SHA256(app client secret, raw body)>
//   X-Shopify-Webhook-Id:  <id>      the dedup id (the same on every retry of the webhook)
//   X-Shopify-Topic:       <topic>   Event::type, e.g. orders/create
//
// No timestamp is signed, so there is no tolerance. The secret is the app's client secret text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "webhooks/providers/provider.h"

namespace webhooks::providers::shopify {

inline constexpr std::string_view kHeaderHmac = "X-Shopify-Hmac-Sha256";
inline constexpr std::string_view kHeaderWebhookId = "X-Shopify-Webhook-Id";
inline constexpr std::string_view kHeaderTopic = "X-Shopify-Topic";

// The header value: base64 (padded, 44 characters) of the HMAC of `body` with `secret`.
std::string sign(std::string_view secret, std::string_view body);

// Statuses: missing_header (HMAC or webhook id header absent); malformed_header (HMAC not padded
// base64 of 32 bytes, webhook id not 1 to 255 printable ASCII characters); bad_signature.
class Verifier final : public ProviderVerifier {
 public:
  // Throws as make_provider_verifier.
  Verifier(std::vector<std::string> secrets, ProviderOptions options = {});
  Provider provider() const noexcept override { return Provider::shopify; }
  std::string_view type_header() const noexcept override { return kHeaderTopic; }
  ProviderResult verify(const HeaderLookup& headers, std::string_view body,
                        std::int64_t now_seconds) const override;

 private:
  std::vector<std::string> secrets_;
};

}  // namespace webhooks::providers::shopify
