// Shopify webhook signatures.
// Source: Shopify's docs, "Verify webhooks" (https://shopify.dev/docs/apps/build/webhooks/
// subscribe/https#step-5-verify-the-webhook), and shopify-api-js / shopify-api-ruby's
// HmacValidator.
//
//   X-Shopify-Hmac-Sha256: <base64 HMAC-SHA256(app client secret, raw body)>
//   X-Shopify-Webhook-Id:  <id>      the dedup id (the same on every retry of the webhook)
//   X-Shopify-Topic:       <topic>   Event::type, e.g. orders/create
//
// Shopify's newer deliveries (events) name the same headers without the prefix:
// shopify-hmac-sha256, shopify-webhook-id, shopify-topic (with shopify-event-id,
// shopify-shop-domain, shopify-triggered-at, not read). As Shopify's own libraries do, each header
// is read under its X-Shopify- name, else under its shopify- name; the event id is the webhook id
// in both families.
//
// No timestamp is signed, so there is no tolerance. The secret is the app's client secret text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "webhooks/providers/provider.h"

namespace webhooks::providers::shopify {

inline constexpr std::string_view kHeaderHmac = "X-Shopify-Hmac-Sha256";
inline constexpr std::string_view kHeaderWebhookId = "X-Shopify-Webhook-Id";
inline constexpr std::string_view kHeaderTopic = "X-Shopify-Topic";
// The events family's names of the same three headers.
inline constexpr std::string_view kEventsHeaderHmac = "shopify-hmac-sha256";
inline constexpr std::string_view kEventsHeaderWebhookId = "shopify-webhook-id";
inline constexpr std::string_view kEventsHeaderTopic = "shopify-topic";

// The header value: base64 (padded, 44 characters) of the HMAC of `body` with `secret`.
std::string sign(std::string_view secret, std::string_view body);

// Statuses: missing_header (HMAC or webhook id header absent under both names; `header` is the
// X-Shopify- name); malformed_header (HMAC not padded base64 of 32 bytes, webhook id not 1 to 255
// printable ASCII characters; `header` is the name read); bad_signature.
using Verifier = VerifierOf<Provider::shopify>;

}  // namespace webhooks::providers::shopify
