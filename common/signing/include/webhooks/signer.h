// Standard Webhooks v1 signing (HMAC-SHA256, "v1,<base64>").
// Source: Standard Webhooks v1 specification, sections "Signature scheme" and "Signing".
// Signed content: "<webhook-id>.<webhook-timestamp>.<raw body bytes>".
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "webhooks/secret.h"

namespace webhooks {

// The bytes that are signed: "<id>.<timestamp>.<body>".
std::string signed_content(std::string_view id, std::int64_t timestamp, std::string_view body);

// Signs with one secret. The HMAC key is prepared once (an EVP_MAC_CTX) and duplicated per
// message. Thread-safe: `sign` and `mac` may be called concurrently on one Signer.
class Signer {
 public:
  // Throws Error(ErrorCode::crypto) if OpenSSL cannot prepare HMAC-SHA256.
  explicit Signer(const Secret& secret);
  ~Signer();
  Signer(Signer&&) noexcept;
  Signer& operator=(Signer&&) noexcept;

  // HMAC-SHA256(key, "<id>.<timestamp>.<body>"): 32 bytes. `timestamp` is Unix seconds.
  std::array<std::uint8_t, 32> mac(std::string_view id, std::int64_t timestamp,
                                   std::string_view body) const;
  // The signature entry "v1,<base64 of mac>" (47 bytes).
  std::string sign(std::string_view id, std::int64_t timestamp, std::string_view body) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace webhooks
