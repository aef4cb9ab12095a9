#include "webhooks/ed25519.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cctype>
#include <memory>

#include "webhooks/base64.h"
#include "webhooks/error.h"
#include "webhooks/random.h"
#include "webhooks/signer.h"

namespace webhooks {
namespace {

using PkeyPtr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)>;

std::array<std::uint8_t, 32> parse_key32(std::string_view text, std::string_view prefix,
                                         std::string_view what) {
  const std::string name(what);
  if (text.empty()) throw Error(ErrorCode::invalid_key, name + " is empty");
  if (std::any_of(text.begin(), text.end(), [](unsigned char c) { return std::isspace(c); })) {
    throw Error(ErrorCode::invalid_key, name + " contains whitespace");
  }
  if (!text.starts_with(prefix)) {
    throw Error(ErrorCode::invalid_key, name + " must start with '" + std::string(prefix) + "'");
  }
  auto bytes = base64_decode(text.substr(prefix.size()));
  if (!bytes) throw Error(ErrorCode::invalid_key, name + " is not valid base64");
  if (bytes->size() != 32) {
    throw Error(ErrorCode::invalid_key,
                name + " decodes to " + std::to_string(bytes->size()) + " bytes; expected 32");
  }
  std::array<std::uint8_t, 32> out;
  std::copy(bytes->begin(), bytes->end(), out.begin());
  return out;
}

PkeyPtr private_key(const std::array<std::uint8_t, 32>& seed) {
  PkeyPtr key(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, seed.data(), seed.size()),
              EVP_PKEY_free);
  if (!key) throw Error(ErrorCode::crypto, "cannot load the Ed25519 signing key");
  return key;
}

}  // namespace

Ed25519PublicKey Ed25519PublicKey::parse(std::string_view text) {
  return Ed25519PublicKey(parse_key32(text, kPrefix, "Ed25519 public key"));
}

bool Ed25519PublicKey::verify(std::string_view message,
                              std::span<const std::uint8_t> signature) const {
  if (signature.size() != 64) return false;
  PkeyPtr key(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, raw_.data(), raw_.size()),
              EVP_PKEY_free);
  if (!key) return false;  // not a valid curve point: nothing can verify against it
  MdCtxPtr ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, key.get()) != 1) {
    throw Error(ErrorCode::crypto, "cannot initialise Ed25519 verification");
  }
  return EVP_DigestVerify(ctx.get(), signature.data(), signature.size(),
                          reinterpret_cast<const unsigned char*>(message.data()),
                          message.size()) == 1;
}

std::string Ed25519PublicKey::to_string() const {
  return std::string(kPrefix) + base64_encode(raw_);
}

Ed25519SigningKey::Ed25519SigningKey(const std::array<std::uint8_t, 32>& seed)
    : seed_(seed), key_(private_key(seed).release(), EVP_PKEY_free) {}

Ed25519SigningKey Ed25519SigningKey::parse(std::string_view text) {
  return Ed25519SigningKey(parse_key32(text, kPrefix, "Ed25519 signing key"));
}

Ed25519SigningKey Ed25519SigningKey::generate() {
  std::array<std::uint8_t, 32> seed;
  secure_random_bytes(seed);
  return Ed25519SigningKey(seed);
}

Ed25519PublicKey Ed25519SigningKey::public_key() const {
  std::array<std::uint8_t, 32> raw;
  std::size_t size = raw.size();
  if (EVP_PKEY_get_raw_public_key(key_.get(), raw.data(), &size) != 1 || size != 32) {
    throw Error(ErrorCode::crypto, "cannot derive the Ed25519 public key");
  }
  return Ed25519PublicKey(raw);
}

std::array<std::uint8_t, 64> Ed25519SigningKey::sign_raw(std::string_view message) const {
  MdCtxPtr ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  std::array<std::uint8_t, 64> signature;
  std::size_t size = signature.size();
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, key_.get()) != 1 ||
      EVP_DigestSign(ctx.get(), signature.data(), &size,
                     reinterpret_cast<const unsigned char*>(message.data()), message.size()) != 1 ||
      size != 64) {
    throw Error(ErrorCode::crypto, "Ed25519 signing failed");
  }
  return signature;
}

std::string Ed25519SigningKey::sign(std::string_view id, std::int64_t timestamp,
                                    std::string_view body) const {
  return "v1a," + base64_encode(sign_raw(signed_content(id, timestamp, body)));
}

std::string Ed25519SigningKey::to_string() const {
  return std::string(kPrefix) + base64_encode(seed_);
}

}  // namespace webhooks
