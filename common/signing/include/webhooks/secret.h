// Standard Webhooks v1 symmetric secrets: "whsec_" + base64 of 24 to 64 random bytes.
// Source: Standard Webhooks v1 specification, section "Signature scheme" (symmetric).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace webhooks {

class Secret {
 public:
  static constexpr std::string_view kPrefix = "whsec_";
  static constexpr std::size_t kMinBytes = 24;
  static constexpr std::size_t kMaxBytes = 64;

  // Parses "whsec_<base64>" or the bare "<base64>". The key is the decoded bytes.
  // Throws webhooks::Error(ErrorCode::invalid_secret) naming the problem when the text is empty,
  // carries whitespace anywhere, is not strict padded base64, or decodes to fewer than 24 or more
  // than 64 bytes. A refused secret is never used as a key.
  static Secret parse(std::string_view text);

  // A new secret of `bytes` random bytes (default 32) from OpenSSL's CSPRNG.
  // Throws Error(invalid_secret) when `bytes` is outside 24..64, Error(crypto) if OpenSSL fails.
  static Secret generate(std::size_t bytes = 32);

  // The HMAC key: the decoded bytes.
  std::span<const std::uint8_t> key() const { return key_; }
  // The canonical text form, "whsec_<base64>". Never log it.
  std::string to_string() const;

 private:
  explicit Secret(std::vector<std::uint8_t> key) : key_(std::move(key)) {}
  std::vector<std::uint8_t> key_;
};

}  // namespace webhooks
