#include "provider_common.h"
#include "webhooks/providers/github.h"

namespace webhooks::providers::github {

std::string sign(std::string_view secret, std::string_view body) {
  return "sha256=" + detail::hex(detail::hmac_sha256(secret, {body}));
}

namespace {

ProviderResult verify(const std::vector<std::string>& secrets, const ProviderOptions&,
                      const HeaderLookup& headers, std::string_view body, std::int64_t) {
  const auto signature = headers(kHeaderSignature);
  if (!signature) return detail::missing(kHeaderSignature);
  const auto delivery = headers(kHeaderDelivery);
  if (!delivery) return detail::missing(kHeaderDelivery);
  if (signature->substr(0, 7) != "sha256=") {
    return detail::malformed(kHeaderSignature, "sha256=<hex signature>");
  }
  if (!detail::any_match(secrets, [&](std::string_view secret) { return sign(secret, body); },
                         {*signature})) {
    return detail::bad_signature(kHeaderSignature);
  }
  ProviderResult result;
  detail::take_id(result, *delivery, ProviderStatus::malformed_header, kHeaderDelivery);
  return result;
}

std::optional<std::string_view> event_type(const HeaderLookup& headers) {
  return headers(kHeaderEvent);
}

}  // namespace
}  // namespace webhooks::providers::github

namespace webhooks::providers::detail {
const Steps kGithubSteps{&github::verify, &github::event_type};
}  // namespace webhooks::providers::detail
