#include "provider_common.h"
#include "webhooks/providers/stripe.h"
#include "webhooks/wire.h"

namespace webhooks::providers::stripe {
namespace {

constexpr std::string_view kShape = "t=<Unix seconds>,v1=<hex signature>[,v1=...]";

struct Parsed {
  std::optional<std::string_view> timestamp;
  std::vector<std::string_view> v1;
};

// Splits "k=v,k=v": the last t, every v1 (as the SDKs do); items without '=' are skipped.
Parsed parse(std::string_view header) {
  Parsed out;
  while (!header.empty()) {
    const std::size_t comma = header.find(',');
    const std::string_view item = header.substr(0, comma);
    header = comma == std::string_view::npos ? std::string_view{} : header.substr(comma + 1);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view key = item.substr(0, eq);
    if (key == "t") out.timestamp = item.substr(eq + 1);
    if (key == "v1") out.v1.push_back(item.substr(eq + 1));
  }
  return out;
}

std::string expected_hex(std::string_view secret, std::string_view timestamp,
                         std::string_view body) {
  return detail::hex(detail::hmac_sha256(secret, {timestamp, ".", body}));
}

ProviderResult verify(const std::vector<std::string>& secrets, const ProviderOptions& options,
                      const HeaderLookup& headers, std::string_view body,
                      std::int64_t now_seconds) {
  const auto header = headers(kHeaderSignature);
  if (!header) return detail::missing(kHeaderSignature);
  const Parsed parsed = parse(*header);
  const auto timestamp =
      parsed.timestamp ? parse_webhook_timestamp(*parsed.timestamp) : std::nullopt;
  if (!timestamp || parsed.v1.empty()) return detail::malformed(kHeaderSignature, kShape);
  if (!detail::any_match(
          secrets,
          [&](std::string_view secret) { return expected_hex(secret, *parsed.timestamp, body); },
          parsed.v1)) {
    return detail::bad_signature(kHeaderSignature);
  }
  return detail::timestamped(kHeaderSignature, *timestamp, now_seconds, options, body, "id");
}

}  // namespace

std::string sign(std::string_view secret, std::int64_t timestamp, std::string_view body) {
  const std::string t = std::to_string(timestamp);
  return "t=" + t + ",v1=" + expected_hex(secret, t, body);
}

}  // namespace webhooks::providers::stripe

namespace webhooks::providers::detail {
const Steps kStripeSteps{&stripe::verify, nullptr};
}  // namespace webhooks::providers::detail
