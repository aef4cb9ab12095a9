// Verifiers of other platforms' webhooks (Stripe, GitHub, Shopify, Slack): one interface, one
// status enum, made by make_provider_verifier from one table of each provider's steps. Each checks
// its provider's documented header, algorithm and encoding, compares in constant time
// (CRYPTO_memcmp), checks the timestamp window where the provider signs a timestamp, and returns
// the event id to deduplicate on. docs/receiver.md, "Other providers".
//
// Secrets of these providers are raw strings, used as the HMAC key byte for byte (a Stripe
// "whsec_..." secret included: Stripe does not base64-decode it), unlike Standard Webhooks
// secrets (webhooks/secret.h).
//
//   auto verifier = webhooks::providers::make_provider_verifier(Provider::github, {"s3cret"});
//   ProviderResult r = verifier->verify(lookup, body, now_seconds);
//   if (r) dedup_on(r.event_id);
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace webhooks::providers {

// `standard` is Standard Webhooks v1 (webhooks/verifier.h), the toolkit's own format.
enum class Provider { standard, stripe, github, shopify, slack };

// "standard", "stripe", "github", "shopify", "slack".
std::string_view to_string(Provider provider) noexcept;
// The provider of that name (exact, lower case), or std::nullopt.
std::optional<Provider> parse_provider(std::string_view name) noexcept;
// "standard, stripe, github, shopify, slack": for usage messages.
inline constexpr std::string_view kProviderNames = "standard, stripe, github, shopify, slack";

// Checked in this order: headers present, headers well-formed, signature, timestamp window, id.
enum class ProviderStatus {
  ok,
  missing_header,     // the signature, timestamp or id header is absent
  malformed_header,   // present but not of the provider's documented shape
  bad_signature,      // no signature matches any configured secret
  timestamp_too_old,  // older than now - tolerance (Stripe, Slack)
  timestamp_too_new,  // newer than now + tolerance (Stripe, Slack)
  missing_id,         // signed, but the body has no usable event id (Stripe "id", Slack "event_id")
};

// Stable name, e.g. "bad_signature".
std::string_view to_string(ProviderStatus status) noexcept;

struct ProviderResult {
  ProviderStatus status = ProviderStatus::ok;
  std::string header;          // the header at fault (as the provider spells it), else empty
  std::string message;         // a sentence for humans; never contains a secret
  std::string event_id;        // when ok: the id to deduplicate on, 1 to 255 printable ASCII
  std::int64_t timestamp = 0;  // the signed timestamp, Unix seconds (Stripe, Slack); else 0
  explicit operator bool() const { return status == ProviderStatus::ok; }
};

// The first value of a request header by case-insensitive name, or std::nullopt when absent.
// The views must stay valid during verify().
using HeaderLookup = std::function<std::optional<std::string_view>(std::string_view name)>;

struct ProviderOptions {
  // Largest accepted |now - signed timestamp|, both directions (Stripe, Slack). Default 300 s,
  // both providers' documented window. Stripe's SDKs only refuse old timestamps; a timestamp
  // more than the tolerance ahead of our clock is refused here too, as for Standard Webhooks.
  std::chrono::seconds tolerance{300};
  // false skips the window (replaying old captures); the timestamp must still be well-formed.
  bool check_timestamp = true;
};

// One provider's verifier. Immutable after construction; verify() is thread-safe.
class ProviderVerifier {
 public:
  virtual ~ProviderVerifier() = default;
  virtual Provider provider() const noexcept = 0;
  // The event type a provider sends in a header, for a body without "type": the value of
  // GitHub's X-GitHub-Event, Shopify's X-Shopify-Topic (or shopify-topic), as `headers` returns it;
  // std::nullopt when absent or for a provider without one (Stripe, Slack).
  virtual std::optional<std::string_view> event_type(const HeaderLookup& headers) const = 0;
  // Verifies one delivery: the raw body bytes as received, `now_seconds` Unix seconds.
  virtual ProviderResult verify(const HeaderLookup& headers, std::string_view body,
                                std::int64_t now_seconds) const = 0;
};

// A verifier of `provider` accepting any of `secrets` (rotation). Throws
// Error(ErrorCode::invalid_argument) for Provider::standard (use webhooks::Verifier) or when
// `secrets` is empty, Error(ErrorCode::invalid_secret) when a secret is the empty string.
std::unique_ptr<ProviderVerifier> make_provider_verifier(Provider provider,
                                                         std::vector<std::string> secrets,
                                                         ProviderOptions options = {});

// make_provider_verifier(P, secrets, options) as a class of its own: stripe::Verifier,
// github::Verifier, shopify::Verifier and slack::Verifier (each provider's header). Throws as
// make_provider_verifier.
template <Provider P>
class VerifierOf final : public ProviderVerifier {
 public:
  VerifierOf(std::vector<std::string> secrets, ProviderOptions options = {})
      : verifier_(make_provider_verifier(P, std::move(secrets), options)) {}
  Provider provider() const noexcept override { return P; }
  std::optional<std::string_view> event_type(const HeaderLookup& headers) const override {
    return verifier_->event_type(headers);
  }
  ProviderResult verify(const HeaderLookup& headers, std::string_view body,
                        std::int64_t now_seconds) const override {
    return verifier_->verify(headers, body, now_seconds);
  }

 private:
  std::unique_ptr<const ProviderVerifier> verifier_;
};

}  // namespace webhooks::providers
