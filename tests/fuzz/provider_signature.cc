// Other providers' signature headers (webhooks/providers/*.h).
// Input: "SIGNATURE\nSECOND\nBODY...": SIGNATURE is each provider's signature header, SECOND its
// second header (GitHub's delivery, Shopify's webhook id, Slack's timestamp).
// Properties: verify never throws and names a known status; a verdict past the signature (ok,
// a timestamp or id refusal) only for a header that holds the signature made with the secret;
// the header made by the provider's sign() always passes the signature check.
#include <map>
#include <string>

#include "fuzz_check.h"
#include "webhooks/providers/github.h"
#include "webhooks/providers/shopify.h"
#include "webhooks/providers/slack.h"
#include "webhooks/providers/stripe.h"
#include "webhooks/wire.h"

namespace {

using namespace webhooks::providers;

const std::string kSecret = "fuzz secret";

bool past_signature(ProviderStatus s) {
  return s != ProviderStatus::missing_header && s != ProviderStatus::malformed_header &&
         s != ProviderStatus::bad_signature;
}

ProviderResult run(const ProviderVerifier& v, const std::map<std::string_view, std::string>& h,
                   std::string_view body) {
  const ProviderResult r = v.verify(
      [&](std::string_view name) -> std::optional<std::string_view> {
        const auto it = h.find(name);
        if (it == h.end()) return std::nullopt;
        return std::string_view(it->second);
      },
      body, 1'700'000'000);
  FUZZ_CHECK(to_string(r.status) != "unknown");
  return r;
}

// Checks one provider: the input's headers, then the correctly signed header `good`.
void check(const ProviderVerifier& v, std::string_view sig_name, std::string_view second_name,
           std::string_view sig, std::string_view second, std::string_view body,
           const std::string& good) {
  const ProviderResult given =
      run(v, {{sig_name, std::string(sig)}, {second_name, std::string(second)}}, body);
  if (past_signature(given.status)) FUZZ_CHECK(sig.find(good) != std::string_view::npos);
  const ProviderResult signed_well =
      run(v, {{sig_name, good}, {second_name, std::string(second)}}, body);
  FUZZ_CHECK(past_signature(signed_well.status) ||
             signed_well.status == ProviderStatus::malformed_header);  // a bad second header
}

// Stripe: a verdict past the signature only when the header holds the v1 of its own t.
void check_stripe(std::string_view sig, std::string_view body) {
  static const stripe::Verifier v({kSecret}, {std::chrono::seconds(300), false});
  const ProviderResult given = run(v, {{stripe::kHeaderSignature, std::string(sig)}}, body);
  if (given.status == ProviderStatus::ok || given.status == ProviderStatus::missing_id) {
    FUZZ_CHECK(sig.find("v1=") != std::string_view::npos);
  }
  if (given.status == ProviderStatus::ok) {
    const std::string v1 = stripe::sign(kSecret, given.timestamp, body);
    FUZZ_CHECK(sig.find(v1.substr(v1.find("v1=") + 3)) != std::string_view::npos);
  }
  const std::string good = stripe::sign(kSecret, 1'700'000'000, body);
  FUZZ_CHECK(past_signature(run(v, {{stripe::kHeaderSignature, good}}, body).status));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const github::Verifier github_v({kSecret});
  static const shopify::Verifier shopify_v({kSecret});
  static const slack::Verifier slack_v({kSecret}, {std::chrono::seconds(300), false});
  std::string_view rest = fuzz::text(data, size);
  const std::string_view sig = fuzz::take(rest);
  const std::string_view second = fuzz::take(rest);
  const std::string_view body = rest;
  check_stripe(sig, body);
  check(github_v, github::kHeaderSignature, github::kHeaderDelivery, sig, second, body,
        github::sign(kSecret, body));
  check(shopify_v, shopify::kHeaderHmac, shopify::kHeaderWebhookId, sig, second, body,
        shopify::sign(kSecret, body));
  if (const auto ts = webhooks::parse_webhook_timestamp(second)) {
    // Slack signs the timestamp header's text as sent; sign() writes it without leading zeros,
    // so the header carries that text ("06172" would be signed as "6172").
    const std::string sent = std::to_string(*ts);
    check(slack_v, slack::kHeaderSignature, slack::kHeaderTimestamp, sig, sent, body,
          slack::sign(kSecret, *ts, body));
  } else {
    FUZZ_CHECK(run(slack_v,
                   {{slack::kHeaderSignature, std::string(sig)},
                    {slack::kHeaderTimestamp, std::string(second)}},
                   body)
                   .status != ProviderStatus::ok);
  }
  return 0;
}
