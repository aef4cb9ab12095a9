// ASCII text helpers of the publisher's sources (http_delivery.cc, ssrf_guard.cc).
#pragma once

#include <cctype>
#include <string>
#include <string_view>

namespace webhooks::publisher::detail {

// `s` with A-Z lowercased (header names, URL schemes and hosts); other bytes as they are.
inline std::string lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace webhooks::publisher::detail
