#include "provider_common.h"
#include "webhooks/base64.h"
#include "webhooks/providers/shopify.h"

namespace webhooks::providers::shopify {

std::string sign(std::string_view secret, std::string_view body) {
  return base64_encode(detail::hmac_sha256(secret, {body}));
}

Verifier::Verifier(std::vector<std::string> secrets, ProviderOptions)
    : secrets_(detail::checked(std::move(secrets))) {}

ProviderResult Verifier::verify(const HeaderLookup& headers, std::string_view body,
                                std::int64_t) const {
  const auto hmac = headers(kHeaderHmac);
  if (!hmac) return detail::missing(kHeaderHmac);
  const auto id = headers(kHeaderWebhookId);
  if (!id) return detail::missing(kHeaderWebhookId);
  std::uint8_t decoded[48];
  if (hmac->size() != 44 || base64_decode_to(*hmac, decoded) != std::optional<std::size_t>(32)) {
    return detail::malformed(kHeaderHmac, "the padded base64 of 32 bytes (44 characters)");
  }
  bool matched = false;
  for (const std::string& secret : secrets_) matched |= detail::same(sign(secret, body), *hmac);
  if (!matched) return detail::bad_signature(kHeaderHmac);
  ProviderResult result;
  detail::take_id(result, *id, ProviderStatus::malformed_header, kHeaderWebhookId);
  return result;
}

}  // namespace webhooks::providers::shopify
