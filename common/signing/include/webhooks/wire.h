// Names and shapes of the Standard Webhooks v1 wire format as this toolkit uses it.
// Source: Standard Webhooks v1 specification, sections "Headers" and "Signature scheme";
// docs/signing.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace webhooks {

inline constexpr std::string_view kHeaderId = "webhook-id";
inline constexpr std::string_view kHeaderTimestamp = "webhook-timestamp";
inline constexpr std::string_view kHeaderSignature = "webhook-signature";
inline constexpr std::string_view kHeaderDeliveryId = "webhook-delivery-id";
inline constexpr std::string_view kHeaderEventType = "webhook-event-type";

// The Svix service's names of the three signed headers (its default; the scheme is the same, and
// every Svix library accepts both families). Source: docs.svix.com, "Verifying Payloads".
inline constexpr std::string_view kSvixHeaderId = "svix-id";
inline constexpr std::string_view kSvixHeaderTimestamp = "svix-timestamp";
inline constexpr std::string_view kSvixHeaderSignature = "svix-signature";

// True when `id` is 1 to 255 printable ASCII characters (0x21..0x7e), no spaces.
bool is_valid_webhook_id(std::string_view id) noexcept;

// Parses `webhook-timestamp`: 1 to 10 decimal digits, nothing else (no sign, fraction,
// whitespace or milliseconds). Returns Unix seconds, or std::nullopt when malformed.
std::optional<std::int64_t> parse_webhook_timestamp(std::string_view text) noexcept;

}  // namespace webhooks
