#include "delivery/endpoint_signers.h"

#include "webhooks/error.h"

namespace webhooks::publisher {

std::optional<std::string> public_key_of(std::string_view stored_key) {
  if (!stored_key.starts_with(Ed25519SigningKey::kPrefix)) return std::nullopt;
  try {
    return Ed25519SigningKey::parse(stored_key).public_key().to_string();
  } catch (const Error&) {
    return std::nullopt;
  }
}

EndpointSigners::EndpointSigners(const std::vector<std::string>& stored_keys) {
  for (const std::string& text : stored_keys) {
    try {
      if (text.starts_with(Ed25519SigningKey::kPrefix)) {
        keys_.emplace_back(Ed25519SigningKey::parse(text));
      } else {
        keys_.emplace_back(Signer(Secret::parse(text)));
      }
    } catch (const Error& e) {
      if (e.code() == ErrorCode::crypto) throw;
      // refused when configured; never used as a key
    }
  }
}

std::string EndpointSigners::sign(std::string_view id, std::int64_t timestamp,
                                  std::string_view body) const {
  std::string signatures;
  for (const auto& key : keys_) {
    if (!signatures.empty()) signatures += ' ';
    signatures += std::visit([&](const auto& k) { return k.sign(id, timestamp, body); }, key);
  }
  return signatures;
}

}  // namespace webhooks::publisher
