// The optional asymmetric scheme "v1a": Ed25519 over the same signed content as v1.
// Source: Standard Webhooks v1 specification, section "Asymmetric signatures (v1a)".
// Key text forms: signing keys "whsk_" + base64 of the 32-byte seed; verifying keys
// "whpk_" + base64 of the 32-byte public key. Signature entry: "v1a,<base64 of 64 bytes>".
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

struct evp_pkey_st;  // OpenSSL's EVP_PKEY

namespace webhooks {

class Ed25519PublicKey {
 public:
  static constexpr std::string_view kPrefix = "whpk_";
  // Parses "whpk_<base64 of 32 bytes>". Throws Error(ErrorCode::invalid_key) naming the problem
  // (empty, whitespace, missing prefix, bad base64, not 32 bytes).
  static Ed25519PublicKey parse(std::string_view text);
  explicit Ed25519PublicKey(const std::array<std::uint8_t, 32>& raw) : raw_(raw) {}

  // True when `signature` (64 bytes) is a valid Ed25519 signature of `message`.
  // Throws Error(crypto) only if OpenSSL fails to set up, never for a bad signature.
  bool verify(std::string_view message, std::span<const std::uint8_t> signature) const;
  const std::array<std::uint8_t, 32>& raw() const { return raw_; }
  std::string to_string() const;  // "whpk_<base64>"

 private:
  std::array<std::uint8_t, 32> raw_;
};

class Ed25519SigningKey {
 public:
  static constexpr std::string_view kPrefix = "whsk_";
  // Parses "whsk_<base64 of the 32-byte seed>" and builds its OpenSSL key. Throws
  // Error(ErrorCode::invalid_key), or Error(crypto) if OpenSSL fails.
  static Ed25519SigningKey parse(std::string_view text);
  // A new key from OpenSSL's CSPRNG. Throws Error(crypto) if OpenSSL fails.
  static Ed25519SigningKey generate();

  Ed25519PublicKey public_key() const;
  // The 64-byte Ed25519 signature of `message`. The OpenSSL key is built once, when the key is
  // parsed or generated (copies share it), so a signature costs only the signing. Thread-safe.
  std::array<std::uint8_t, 64> sign_raw(std::string_view message) const;
  // The signature entry "v1a,<base64>" over "<id>.<timestamp>.<body>" (timestamp in Unix seconds).
  std::string sign(std::string_view id, std::int64_t timestamp, std::string_view body) const;
  std::string to_string() const;  // "whsk_<base64 seed>". Never log it.

 private:
  // Throws Error(crypto) if OpenSSL cannot load the seed.
  explicit Ed25519SigningKey(const std::array<std::uint8_t, 32>& seed);
  std::array<std::uint8_t, 32> seed_;
  std::shared_ptr<evp_pkey_st> key_;  // built from seed_
};

}  // namespace webhooks
