// Stripe webhook signatures.
// Source: Stripe's docs, "Verify webhook signatures manually"
// (https://docs.stripe.com/webhooks#verify-manually), and its SDKs' WebhookSignature
// (stripe-python stripe/_webhook.py, stripe-node src/Webhooks.ts).
//
//   Stripe-Signature: t=<Unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>[,v1=...]
//
// Items are separated by commas, each "<key>=<value>"; every v1 item is a candidate (Stripe sends
// one per active secret while a secret is rolled); other schemes (v0) are ignored. The secret is
// the endpoint's "whsec_..." string used as it is (not base64-decoded). Tolerance: 300 s by
// default. Dedup id: the body's top-level "id" (evt_...).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "webhooks/providers/provider.h"

namespace webhooks::providers::stripe {

inline constexpr std::string_view kHeaderSignature = "Stripe-Signature";

// The header value "t=<timestamp>,v1=<64 hex digits>" for `body` signed with `secret`.
std::string sign(std::string_view secret, std::int64_t timestamp, std::string_view body);

// Statuses: missing_header (no Stripe-Signature); malformed_header (no "t=" of 1 to 10 digits, or
// no v1 item); bad_signature; timestamp_too_old / too_new; missing_id (no string "id" in a JSON
// object body).
using Verifier = VerifierOf<Provider::stripe>;

}  // namespace webhooks::providers::stripe
