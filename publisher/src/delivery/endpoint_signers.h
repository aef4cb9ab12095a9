// Signs one delivery with every active key of its endpoint: the webhook-signature value of
// Standard Webhooks v1 ("Signature scheme"; "Asymmetric signatures (v1a)"), one entry per key,
// space-separated, in the order of the keys given (newest first): "v1,<base64 HMAC-SHA256>" for a
// "whsec_" secret, "v1a,<base64 Ed25519 signature>" for a "whsk_" signing key.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "webhooks/ed25519.h"
#include "webhooks/signer.h"

namespace webhooks::publisher {

// The "whpk_…" public key of a stored "whsk_…" signing key; std::nullopt for a "whsec_" secret
// or a key that does not parse.
std::optional<std::string> public_key_of(std::string_view stored_key);

// Immutable after construction; `sign` is thread-safe. Preparing an HMAC Signer costs more than
// signing a small body, so the dispatcher builds one EndpointSigners per endpoint per batch.
class EndpointSigners {
 public:
  // Keys that fail to parse are skipped (they were validated when configured; a bad one is never
  // used as a key). Throws Error(crypto) only if OpenSSL cannot prepare HMAC-SHA256.
  explicit EndpointSigners(const std::vector<std::string>& stored_keys);

  // The webhook-signature value over "<id>.<timestamp>.<body>" (timestamp in Unix seconds); empty
  // when no key parsed.
  std::string sign(std::string_view id, std::int64_t timestamp, std::string_view body) const;

 private:
  std::vector<std::variant<Signer, Ed25519SigningKey>> keys_;
};

}  // namespace webhooks::publisher
