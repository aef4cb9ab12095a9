#include "provider_common.h"
#include "webhooks/providers/github.h"

namespace webhooks::providers::github {

std::string sign(std::string_view secret, std::string_view body) {
  return "sha256=" + detail::hex(detail::hmac_sha256(secret, {body}));
}

Verifier::Verifier(std::vector<std::string> secrets, ProviderOptions)
    : secrets_(detail::checked(std::move(secrets))) {}

ProviderResult Verifier::verify(const HeaderLookup& headers, std::string_view body,
                                std::int64_t) const {
  const auto signature = headers(kHeaderSignature);
  if (!signature) return detail::missing(kHeaderSignature);
  const auto delivery = headers(kHeaderDelivery);
  if (!delivery) return detail::missing(kHeaderDelivery);
  if (signature->substr(0, 7) != "sha256=") {
    return detail::malformed(kHeaderSignature, "sha256=<hex signature>");
  }
  bool matched = false;
  for (const std::string& secret : secrets_)
    matched |= detail::same(sign(secret, body), *signature);
  if (!matched) return detail::bad_signature(kHeaderSignature);
  ProviderResult result;
  detail::take_id(result, *delivery, ProviderStatus::malformed_header, kHeaderDelivery);
  return result;
}

}  // namespace webhooks::providers::github
