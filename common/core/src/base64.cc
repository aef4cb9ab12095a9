#include "webhooks/base64.h"

#include <openssl/evp.h>

namespace webhooks {
namespace {

bool is_base64_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
         c == '/';
}

}  // namespace

std::string base64_encode(std::span<const std::uint8_t> bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  if (bytes.empty()) return out;
  const int written = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytes.data(),
                                      static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(written));
  return out;
}

std::optional<std::size_t> base64_decode_to(std::string_view text, std::span<std::uint8_t> out) {
  if (text.size() % 4 != 0 || out.size() < text.size() / 4 * 3) return std::nullopt;
  std::size_t padding = 0;
  if (!text.empty() && text.back() == '=') padding = text[text.size() - 2] == '=' ? 2 : 1;
  for (std::size_t i = 0; i < text.size() - padding; ++i) {
    if (!is_base64_char(text[i])) return std::nullopt;
  }
  if (text.empty()) return 0;
  const int written =
      EVP_DecodeBlock(out.data(), reinterpret_cast<const unsigned char*>(text.data()),
                      static_cast<int>(text.size()));
  if (written < 0) return std::nullopt;
  return static_cast<std::size_t>(written) - padding;
}

std::optional<std::vector<std::uint8_t>> base64_decode(std::string_view text) {
  std::vector<std::uint8_t> out(text.size() / 4 * 3);
  const auto size = base64_decode_to(text, out);
  if (!size) return std::nullopt;
  out.resize(*size);
  return out;
}

}  // namespace webhooks
