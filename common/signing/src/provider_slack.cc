#include "provider_common.h"
#include "webhooks/providers/slack.h"
#include "webhooks/wire.h"

namespace webhooks::providers::slack {
namespace {

std::string expected(std::string_view secret, std::string_view timestamp, std::string_view body) {
  return "v0=" + detail::hex(detail::hmac_sha256(secret, {"v0:", timestamp, ":", body}));
}

ProviderResult verify(const std::vector<std::string>& secrets, const ProviderOptions& options,
                      const HeaderLookup& headers, std::string_view body,
                      std::int64_t now_seconds) {
  const auto signature = headers(kHeaderSignature);
  if (!signature) return detail::missing(kHeaderSignature);
  const auto timestamp_text = headers(kHeaderTimestamp);
  if (!timestamp_text) return detail::missing(kHeaderTimestamp);
  const auto timestamp = parse_webhook_timestamp(*timestamp_text);
  if (!timestamp) return detail::malformed(kHeaderTimestamp, "Unix seconds, 1 to 10 digits");
  if (signature->substr(0, 3) != "v0=") {
    return detail::malformed(kHeaderSignature, "v0=<hex signature>");
  }
  if (!detail::any_match(
          secrets, [&](std::string_view secret) { return expected(secret, *timestamp_text, body); },
          {*signature})) {
    return detail::bad_signature(kHeaderSignature);
  }
  return detail::timestamped(kHeaderTimestamp, *timestamp, now_seconds, options, body, "event_id");
}

}  // namespace

std::string sign(std::string_view secret, std::int64_t timestamp, std::string_view body) {
  return expected(secret, std::to_string(timestamp), body);
}

}  // namespace webhooks::providers::slack

namespace webhooks::providers::detail {
const Steps kSlackSteps{&slack::verify, nullptr};
}  // namespace webhooks::providers::detail
