#include "webhooks/secret.h"

#include <algorithm>
#include <cctype>

#include "webhooks/base64.h"
#include "webhooks/error.h"
#include "webhooks/random.h"

namespace webhooks {
namespace {

bool has_whitespace(std::string_view text) {
  return std::any_of(text.begin(), text.end(),
                     [](unsigned char c) { return std::isspace(c) != 0; });
}

}  // namespace

Secret Secret::parse(std::string_view text) {
  if (text.empty()) throw Error(ErrorCode::invalid_secret, "secret is empty");
  if (has_whitespace(text)) {
    throw Error(ErrorCode::invalid_secret,
                "secret contains whitespace; remove spaces and newlines");
  }
  std::string_view encoded = text;
  if (encoded.starts_with(kPrefix)) encoded.remove_prefix(kPrefix.size());
  if (encoded.empty()) throw Error(ErrorCode::invalid_secret, "secret is empty after 'whsec_'");
  auto key = base64_decode(encoded);
  if (!key) {
    throw Error(ErrorCode::invalid_secret,
                "secret is not valid base64 (expected 'whsec_' followed by padded base64)");
  }
  if (key->size() < kMinBytes || key->size() > kMaxBytes) {
    throw Error(ErrorCode::invalid_secret,
                "secret decodes to " + std::to_string(key->size()) + " bytes; expected 24 to 64");
  }
  return Secret(std::move(*key));
}

Secret Secret::generate(std::size_t bytes) {
  if (bytes < kMinBytes || bytes > kMaxBytes) {
    throw Error(ErrorCode::invalid_secret, "secret length must be 24 to 64 bytes");
  }
  std::vector<std::uint8_t> key(bytes);
  secure_random_bytes(key);
  return Secret(std::move(key));
}

std::string Secret::to_string() const { return std::string(kPrefix) + base64_encode(key_); }

}  // namespace webhooks
