#include "webhooks/signer.h"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <algorithm>
#include <charconv>

#include "webhooks/error.h"

namespace webhooks {

struct Signer::Impl {
  EVP_MAC* mac = nullptr;
  EVP_MAC_CTX* prepared = nullptr;
  ~Impl() {
    EVP_MAC_CTX_free(prepared);
    EVP_MAC_free(mac);
  }
};

std::string signed_content(std::string_view id, std::int64_t timestamp, std::string_view body) {
  std::string out;
  out.reserve(id.size() + body.size() + 22);
  out.append(id).append(1, '.').append(std::to_string(timestamp)).append(1, '.').append(body);
  return out;
}

Signer::Signer(const Secret& secret) : impl_(std::make_unique<Impl>()) {
  impl_->mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  if (impl_->mac) impl_->prepared = EVP_MAC_CTX_new(impl_->mac);
  if (!impl_->prepared) throw Error(ErrorCode::crypto, "cannot create an HMAC context");
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                         OSSL_PARAM_construct_end()};
  const auto key = secret.key();
  if (EVP_MAC_init(impl_->prepared, key.data(), key.size(), params) != 1) {
    throw Error(ErrorCode::crypto, "cannot initialise HMAC-SHA256");
  }
}

Signer::~Signer() = default;
Signer::Signer(Signer&&) noexcept = default;
Signer& Signer::operator=(Signer&&) noexcept = default;

std::array<std::uint8_t, 32> Signer::mac(std::string_view id, std::int64_t timestamp,
                                         std::string_view body) const {
  // The signed content in one buffer when it is small: each EVP_MAC_update call costs a provider
  // dispatch, which is measurable next to hashing a 1 KiB body. Large bodies are hashed in place.
  constexpr std::size_t kInline = 4096;
  char small[kInline];
  std::string large;
  const bool inline_body = id.size() + body.size() + 24 <= kInline;
  char* prefix = small;
  if (id.size() + 24 > kInline) {
    large.resize(id.size() + 24);
    prefix = large.data();
  }
  std::copy(id.begin(), id.end(), prefix);
  char* end = prefix + id.size();
  *end++ = '.';
  end = std::to_chars(end, end + 21, timestamp).ptr;
  *end++ = '.';
  if (inline_body) {
    std::copy(body.begin(), body.end(), end);
    end += body.size();
    body = {};
  }

  EVP_MAC_CTX* ctx = EVP_MAC_CTX_dup(impl_->prepared);
  if (!ctx) throw Error(ErrorCode::crypto, "cannot duplicate the HMAC context");
  std::array<std::uint8_t, 32> out{};
  std::size_t written = 0;
  const bool ok =
      EVP_MAC_update(ctx, reinterpret_cast<const unsigned char*>(prefix),
                     static_cast<std::size_t>(end - prefix)) == 1 &&
      (body.empty() || EVP_MAC_update(ctx, reinterpret_cast<const unsigned char*>(body.data()),
                                      body.size()) == 1) &&
      EVP_MAC_final(ctx, out.data(), &written, out.size()) == 1 && written == 32;
  EVP_MAC_CTX_free(ctx);
  if (!ok) throw Error(ErrorCode::crypto, "HMAC-SHA256 failed");
  return out;
}

std::string Signer::sign(std::string_view id, std::int64_t timestamp, std::string_view body) const {
  const auto digest = mac(id, timestamp, body);
  std::string out(3 + 44 + 1, '\0');  // EVP_EncodeBlock writes a terminating NUL
  out[0] = 'v';
  out[1] = '1';
  out[2] = ',';
  EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data() + 3), digest.data(), 32);
  out.pop_back();
  return out;
}

}  // namespace webhooks
