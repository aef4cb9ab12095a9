#include "delivery/trace_context.h"

#include <array>
#include <cstdint>

#include "webhooks/random.h"

namespace webhooks::publisher {
namespace {

bool lower_hex(std::string_view s) noexcept {
  for (const char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool all_zeros(std::string_view s) noexcept { return s.find_first_not_of('0') == s.npos; }

std::string random_hex(std::size_t bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::array<std::uint8_t, 16> buffer{};
  secure_random_bytes(std::span(buffer.data(), bytes));
  std::string out;
  for (std::size_t i = 0; i < bytes; ++i) {
    out.push_back(kHex[buffer[i] >> 4]);
    out.push_back(kHex[buffer[i] & 0xF]);
  }
  return out;
}

constexpr std::size_t kLength = 55;  // 2 + 1 + 32 + 1 + 16 + 1 + 2

}  // namespace

bool valid_traceparent(std::string_view t) noexcept {
  if (t.size() < kLength) return false;
  const std::string_view version = t.substr(0, 2), trace = t.substr(3, 32),
                         parent = t.substr(36, 16), flags = t.substr(53, 2);
  if (t[2] != '-' || t[35] != '-' || t[52] != '-') return false;
  if (!lower_hex(version) || version == "ff" || !lower_hex(trace) || !lower_hex(parent) ||
      !lower_hex(flags) || all_zeros(trace) || all_zeros(parent)) {
    return false;
  }
  if (version == "00") return t.size() == kLength;
  return t.size() == kLength || t[kLength] == '-';
}

bool valid_tracestate(std::string_view s) noexcept {
  if (s.size() > 512) return false;
  for (const char c : s) {
    if (c < 0x20 || c > 0x7E) return false;
  }
  return true;
}

std::string new_traceparent() { return "00-" + random_hex(16) + "-" + random_hex(8) + "-01"; }

std::string child_traceparent(std::string_view parent) {
  return "00-" + std::string(parent.substr(3, 32)) + "-" + random_hex(8) + "-" +
         std::string(parent.substr(53, 2));
}

std::string_view trace_id_of(std::string_view traceparent) noexcept {
  if (!valid_traceparent(traceparent)) return {};
  return traceparent.substr(3, 32);
}

}  // namespace webhooks::publisher
