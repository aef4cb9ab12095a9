// Shared steps of the provider verifiers (not installed): raw-key HMAC-SHA256, hex, constant-time
// comparison, failures, the timestamp window and ids read from the body.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "webhooks/providers/provider.h"

namespace webhooks::providers::detail {

// HMAC-SHA256 with `key` (raw bytes) over the concatenation of `parts`. Throws Error(crypto).
std::array<std::uint8_t, 32> hmac_sha256(std::string_view key,
                                         std::initializer_list<std::string_view> parts);
std::string hex(const std::array<std::uint8_t, 32>& digest);
// Equal contents; the time depends only on the lengths (CRYPTO_memcmp).
bool same(std::string_view expected, std::string_view received) noexcept;
// True when expected(secret) is the same as one of `received` for one of `secrets`; every pair is
// compared (no early exit).
bool any_match(const std::vector<std::string>& secrets,
               const std::function<std::string(std::string_view secret)>& expected,
               std::initializer_list<std::string_view> received);
bool any_match(const std::vector<std::string>& secrets,
               const std::function<std::string(std::string_view secret)>& expected,
               const std::vector<std::string_view>& received);

ProviderResult failure(ProviderStatus status, std::string_view header, std::string message);
ProviderResult missing(std::string_view header);
ProviderResult malformed(std::string_view header, std::string_view shape);
ProviderResult bad_signature(std::string_view header);
// Sets `result` to timestamp_too_old / too_new when `timestamp` is outside the window.
void check_window(ProviderResult& result, std::string_view header, std::int64_t timestamp,
                  std::int64_t now_seconds, const ProviderOptions& options);
// Sets result.event_id to `id` when it is 1 to 255 printable ASCII characters; else the failure
// `status` naming `where`.
void take_id(ProviderResult& result, std::string_view id, ProviderStatus status,
             std::string_view where);
// Sets result.event_id to the body's top-level string `field`, or missing_id.
void take_body_id(ProviderResult& result, std::string_view body, std::string_view field);
// A delivery of a provider that signs a timestamp, its signature matched: the window checked on
// `timestamp` (read from `header`), then the event id taken from the body's `field`.
ProviderResult timestamped(std::string_view header, std::int64_t timestamp,
                           std::int64_t now_seconds, const ProviderOptions& options,
                           std::string_view body, std::string_view field);

// `secrets` unchanged; throws as make_provider_verifier when empty or one is empty.
std::vector<std::string> checked(std::vector<std::string> secrets);

// One provider's rules, run by the one verifier class behind make_provider_verifier.
struct Steps {
  // ProviderVerifier::verify with the verifier's checked secrets and options.
  ProviderResult (*verify)(const std::vector<std::string>& secrets, const ProviderOptions& options,
                           const HeaderLookup& headers, std::string_view body,
                           std::int64_t now_seconds);
  // ProviderVerifier::event_type; nullptr for a provider without an event type header.
  std::optional<std::string_view> (*event_type)(const HeaderLookup& headers);
};

// Defined in provider_<name>.cc.
extern const Steps kStripeSteps;
extern const Steps kGithubSteps;
extern const Steps kShopifySteps;
extern const Steps kSlackSteps;

}  // namespace webhooks::providers::detail
