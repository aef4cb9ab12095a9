#include "webhooks/console/session.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <array>
#include <charconv>
#include <vector>

#include "webhooks/error.h"
#include "webhooks/random.h"

namespace webhooks::console {
namespace {

constexpr std::string_view kKeyLabel = "webhooks-console-v1";
constexpr char kHex[] = "0123456789abcdef";

std::string to_hex(const unsigned char* data, std::size_t size) {
  std::string out;
  out.reserve(size * 2);
  for (std::size_t i = 0; i < size; ++i) {
    out += kHex[data[i] >> 4];
    out += kHex[data[i] & 15];
  }
  return out;
}

std::optional<std::string> from_hex(std::string_view hex) {
  if (hex.size() % 2 != 0) return std::nullopt;
  std::string out;
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(hex.data() + i, hex.data() + i + 2, value, 16);
    if (ec != std::errc() || end != hex.data() + i + 2 || hex[i] == '+' || hex[i] == '-') {
      return std::nullopt;
    }
    out += static_cast<char>(value);
  }
  return out;
}

// Raw HMAC-SHA256 bytes.
std::string hmac(std::string_view key, std::string_view message) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> out{};
  unsigned int size = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(message.data()), message.size(), out.data(),
           &size) == nullptr) {
    throw Error(ErrorCode::crypto, "console session: HMAC-SHA256 failed");
  }
  return std::string(reinterpret_cast<const char*>(out.data()), size);
}

std::string hmac_hex(std::string_view key, std::string_view message) {
  const std::string mac = hmac(key, message);
  return to_hex(reinterpret_cast<const unsigned char*>(mac.data()), mac.size());
}

std::vector<std::string_view> split_dots(std::string_view value) {
  std::vector<std::string_view> parts;
  while (parts.size() < 5) {
    const std::size_t dot = value.find('.');
    parts.push_back(value.substr(0, dot));
    if (dot == std::string_view::npos) break;
    value = value.substr(dot + 1);
  }
  return parts;
}

bool all_digits(std::string_view text) {
  if (text.empty() || text.size() > 18) return false;
  for (const char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

bool same_secret(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

Sessions::Sessions(SecretOf secret_of, SignIn sign_in, const Clock& clock,
                   std::chrono::seconds lifetime, std::string cookie_name)
    : secret_of_(std::move(secret_of)),
      sign_in_(std::move(sign_in)),
      clock_(clock),
      lifetime_(lifetime),
      cookie_name_(std::move(cookie_name)),
      throttle_(std::make_shared<FailureThrottle>(clock)) {}

Sessions Sessions::single_token(std::string token, const Clock& clock,
                                std::chrono::seconds lifetime) {
  auto secret_of = [token](std::string_view principal) -> std::optional<std::string> {
    if (!principal.empty() || token.empty()) return std::nullopt;
    return token;
  };
  auto sign_in = [token](std::string_view given) -> std::optional<std::string> {
    if (token.empty() || !same_secret(given, token)) return std::nullopt;
    return std::string();
  };
  return Sessions(std::move(secret_of), std::move(sign_in), clock, lifetime);
}

void Sessions::use_revocations(Revocations& revocations) { revocations_ = &revocations; }

std::optional<std::string> Sessions::sign_in(std::string_view token) const {
  if (token.empty()) return std::nullopt;
  return sign_in_(token);
}

std::optional<std::string> Sessions::key_of(std::string_view principal) const {
  const std::optional<std::string> secret = secret_of_(principal);
  if (!secret || secret->empty()) return std::nullopt;
  return hmac(*secret, kKeyLabel);
}

std::string Sessions::issue(std::string_view principal) const {
  const std::optional<std::string> key = key_of(principal);
  if (!key) throw Error(ErrorCode::invalid_argument, "console session: no secret for principal");
  std::array<std::uint8_t, 16> nonce{};
  secure_random_bytes(nonce);
  std::string value = std::to_string(clock_.now_seconds() + lifetime_.count()) + "." +
                      to_hex(nonce.data(), nonce.size());
  if (!principal.empty()) {
    value +=
        "." + to_hex(reinterpret_cast<const unsigned char*>(principal.data()), principal.size());
  }
  return value + "." + hmac_hex(*key, value);
}

std::optional<Session> Sessions::verify(std::string_view value) const {
  const std::vector<std::string_view> parts = split_dots(value);
  if (parts.size() != 3 && parts.size() != 4) return std::nullopt;
  if (!all_digits(parts[0]) || parts[1].size() != 32 || !from_hex(parts[1])) return std::nullopt;
  std::string principal;
  if (parts.size() == 4) {
    const std::optional<std::string> decoded = from_hex(parts[2]);
    if (!decoded || decoded->empty()) return std::nullopt;
    principal = *decoded;
  }
  std::int64_t expires = 0;
  std::from_chars(parts[0].data(), parts[0].data() + parts[0].size(), expires);
  if (expires <= clock_.now_seconds()) return std::nullopt;
  const std::optional<std::string> key = key_of(principal);
  if (!key) return std::nullopt;
  const std::string_view signed_part = value.substr(0, value.size() - parts.back().size() - 1);
  if (!same_secret(hmac_hex(*key, signed_part), parts.back())) return std::nullopt;
  if (revocations_ != nullptr && revocations_->revoked(parts[1])) return std::nullopt;
  std::string value_text(value);
  std::string csrf = hmac_hex(*key, "csrf:" + value_text);
  return Session{std::move(principal), std::string(parts[1]), std::move(value_text), expires,
                 std::move(csrf)};
}

bool Sessions::csrf_matches(const Session& session, std::string_view token) {
  return !token.empty() && same_secret(session.csrf_token, token);
}

}  // namespace webhooks::console
