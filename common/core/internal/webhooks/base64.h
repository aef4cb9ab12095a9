// Standard base64 (RFC 4648 section 4, with padding), through OpenSSL's EVP_EncodeBlock.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace webhooks {

// Encodes bytes as padded standard base64. Never fails.
std::string base64_encode(std::span<const std::uint8_t> bytes);

// Decodes padded standard base64. Strict: returns std::nullopt for any character outside the
// alphabet (including whitespace), a length that is not a multiple of 4, or misplaced padding.
std::optional<std::vector<std::uint8_t>> base64_decode(std::string_view text);

// As base64_decode, into `out`, which must hold at least text.size() / 4 * 3 bytes. Returns the
// number of bytes decoded, or std::nullopt when `text` is not strict base64 or `out` is too small.
std::optional<std::size_t> base64_decode_to(std::string_view text, std::span<std::uint8_t> out);

}  // namespace webhooks
