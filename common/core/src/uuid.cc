#include "webhooks/uuid.h"

#include "webhooks/random.h"

namespace webhooks {
namespace {

constexpr std::uint64_t kCounterBits = 42;
constexpr std::uint64_t kCounterMax = (std::uint64_t{1} << kCounterBits) - 1;

bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

}  // namespace

std::string uuid_to_string(const UuidBytes& bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(36);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    out.push_back(kHex[bytes[i] >> 4]);
    out.push_back(kHex[bytes[i] & 0xf]);
  }
  return out;
}

std::optional<UuidBytes> uuid_from_string(std::string_view text) noexcept {
  if (text.size() != 36) return std::nullopt;
  const auto nibble = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  UuidBytes bytes{};
  std::size_t at = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) {
      if (text[at++] != '-') return std::nullopt;
    }
    const int high = nibble(text[at]), low = nibble(text[at + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    bytes[i] = static_cast<std::uint8_t>(high << 4 | low);
    at += 2;
  }
  return bytes;
}

bool is_uuid_v7(std::string_view text) noexcept {
  if (text.size() != 36) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? text[i] != '-' : !is_hex(text[i])) return false;
  }
  const char variant = text[19];
  return text[14] == '7' && (variant == '8' || variant == '9' || variant == 'a' || variant == 'b' ||
                             variant == 'A' || variant == 'B');
}

UuidBytes UuidV7Generator::next_bytes() {
  std::uint8_t random[10];
  secure_random_bytes(random);
  std::uint64_t tail = 0;  // 32 random bits below the counter
  for (int i = 6; i < 10; ++i) tail = (tail << 8) | random[i];

  std::int64_t ms;
  std::uint64_t counter;
  {
    std::lock_guard lock(mutex_);
    const std::int64_t now = clock_.now_ms();
    if (now > last_ms_) {
      last_ms_ = now;
      std::uint64_t seed = 0;
      for (int i = 0; i < 6; ++i) seed = (seed << 8) | random[i];
      counter_ = seed & (kCounterMax >> 1);  // top bit clear leaves room to count
    } else if (counter_ == kCounterMax) {
      ++last_ms_;  // counter exhausted: borrow the next millisecond
      counter_ = 0;
    } else {
      ++counter_;
    }
    ms = last_ms_;
    counter = counter_;
  }

  UuidBytes b{};
  const auto ts = static_cast<std::uint64_t>(ms);
  for (int i = 0; i < 6; ++i) b[i] = static_cast<std::uint8_t>(ts >> (40 - 8 * i));
  const std::uint64_t rand_a = counter >> 30;              // 12 bits
  const std::uint64_t counter_low = counter & 0x3fffffff;  // 30 bits at the top of rand_b
  b[6] = static_cast<std::uint8_t>(0x70 | (rand_a >> 8));
  b[7] = static_cast<std::uint8_t>(rand_a);
  const std::uint64_t rand_b = (counter_low << 32) | tail;  // 62 bits
  b[8] = static_cast<std::uint8_t>(0x80 | (rand_b >> 56));
  for (int i = 9; i < 16; ++i) b[i] = static_cast<std::uint8_t>(rand_b >> (8 * (15 - i)));
  return b;
}

}  // namespace webhooks
