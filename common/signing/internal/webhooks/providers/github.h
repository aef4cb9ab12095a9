// GitHub webhook signatures.
// Source: GitHub Docs, "Validating webhook deliveries"
// (https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries).
//
//   X-Hub-Signature-256: sha256=<hex HMAC-SHA256(secret, raw body)>
//   X-GitHub-Delivery:   <GUID of the delivery>    the dedup id (the same on a redelivery)
//   X-GitHub-Event:      <event name>              Event::type
//
// No timestamp is signed, so there is no tolerance: a captured delivery replays only as a
// duplicate of its X-GitHub-Delivery. The secret is the webhook's secret text as typed in GitHub.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "webhooks/providers/provider.h"

namespace webhooks::providers::github {

inline constexpr std::string_view kHeaderSignature = "X-Hub-Signature-256";
inline constexpr std::string_view kHeaderDelivery = "X-GitHub-Delivery";
inline constexpr std::string_view kHeaderEvent = "X-GitHub-Event";

// The header value "sha256=<64 hex digits>" for `body` signed with `secret`.
std::string sign(std::string_view secret, std::string_view body);

// Statuses: missing_header (signature or delivery header absent); malformed_header (signature
// without the "sha256=" prefix, delivery id not 1 to 255 printable ASCII characters);
// bad_signature.
using Verifier = VerifierOf<Provider::github>;

}  // namespace webhooks::providers::github
