#include "provider_common.h"
#include "webhooks/base64.h"
#include "webhooks/providers/shopify.h"

namespace webhooks::providers::shopify {
namespace {

// A header read under its X-Shopify- name, else its shopify- name (Shopify's libraries: the
// first present is used).
struct Found {
  std::optional<std::string_view> value;
  std::string_view name;  // the name it was read under (the X-Shopify- one when absent)
};

Found find(const HeaderLookup& headers, std::string_view name, std::string_view events_name) {
  if (auto value = headers(name)) return {value, name};
  if (auto value = headers(events_name)) return {value, events_name};
  return {std::nullopt, name};
}

ProviderResult missing(std::string_view name, std::string_view events_name) {
  return detail::failure(ProviderStatus::missing_header, name,
                         std::string(name) + " (or " + std::string(events_name) + ") is missing");
}

std::optional<std::string_view> event_type(const HeaderLookup& headers) {
  return find(headers, kHeaderTopic, kEventsHeaderTopic).value;
}

ProviderResult verify(const std::vector<std::string>& secrets, const ProviderOptions&,
                      const HeaderLookup& headers, std::string_view body, std::int64_t) {
  const Found hmac = find(headers, kHeaderHmac, kEventsHeaderHmac);
  if (!hmac.value) return missing(kHeaderHmac, kEventsHeaderHmac);
  const Found id = find(headers, kHeaderWebhookId, kEventsHeaderWebhookId);
  if (!id.value) return missing(kHeaderWebhookId, kEventsHeaderWebhookId);
  std::uint8_t decoded[48];
  if (hmac.value->size() != 44 ||
      base64_decode_to(*hmac.value, decoded) != std::optional<std::size_t>(32)) {
    return detail::malformed(hmac.name, "the padded base64 of 32 bytes (44 characters)");
  }
  if (!detail::any_match(secrets, [&](std::string_view secret) { return sign(secret, body); },
                         {*hmac.value})) {
    return detail::bad_signature(hmac.name);
  }
  ProviderResult result;
  detail::take_id(result, *id.value, ProviderStatus::malformed_header, id.name);
  return result;
}

}  // namespace

std::string sign(std::string_view secret, std::string_view body) {
  return base64_encode(detail::hmac_sha256(secret, {body}));
}

}  // namespace webhooks::providers::shopify

namespace webhooks::providers::detail {
const Steps kShopifySteps{&shopify::verify, &shopify::event_type};
}  // namespace webhooks::providers::detail
