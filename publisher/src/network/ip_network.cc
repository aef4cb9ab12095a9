#include "webhooks/publisher/ip_network.h"

#include <algorithm>
#include <cstdint>

#include "webhooks/error.h"

namespace webhooks::publisher {
namespace {

// ::ffff:a.b.c.d as a.b.c.d; any other address as it is.
IpAddress unmapped(const IpAddress& address) {
  const auto b = address.bytes();
  constexpr std::uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (address.is_v4() || !std::equal(kMapped, kMapped + 12, b.begin())) return address;
  return IpAddress::v4({b[12], b[13], b[14], b[15]});
}

// a.b.c.d as ::ffff:a.b.c.d; any other address as it is.
IpAddress mapped(const IpAddress& address) {
  if (!address.is_v4()) return address;
  const auto b = address.bytes();
  return IpAddress::v6({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, b[0], b[1], b[2], b[3]});
}

// The mask of byte `index` for a prefix of `bits` bits.
std::uint8_t mask_of(std::size_t index, unsigned bits) {
  const std::size_t start = index * 8;
  if (bits >= start + 8) return 0xff;
  if (bits <= start) return 0;
  return static_cast<std::uint8_t>(0xff << (8 - (bits - start)));
}

bool same_prefix(const IpAddress& a, const IpAddress& b, unsigned bits) {
  const auto x = a.bytes(), y = b.bytes();
  for (std::size_t i = 0; i < x.size(); ++i) {
    if ((x[i] & mask_of(i, bits)) != (y[i] & mask_of(i, bits))) return false;
  }
  return true;
}

// `address` with every bit past `bits` cleared.
IpAddress first_address(const IpAddress& address, unsigned bits) {
  std::array<std::uint8_t, 16> out{};
  const auto b = address.bytes();
  for (std::size_t i = 0; i < b.size(); ++i) out[i] = b[i] & mask_of(i, bits);
  if (address.is_v4()) return IpAddress::v4({out[0], out[1], out[2], out[3]});
  return IpAddress::v6(out);
}

[[noreturn]] void refuse(std::string_view text, const std::string& why) {
  throw Error(ErrorCode::invalid_argument, "\"" + std::string(text) + "\" " + why);
}

}  // namespace

IpNetwork IpNetwork::parse(std::string_view text) {
  const std::size_t slash = text.find('/');
  const std::optional<IpAddress> address = IpAddress::parse(text.substr(0, slash));
  if (!address) {
    refuse(text, "is not a network: expected ADDRESS/LENGTH, e.g. 10.20.0.0/16 or fd00::/8");
  }
  const unsigned max = address->is_v4() ? 32 : 128;
  unsigned length = max;
  if (slash != std::string_view::npos) {
    const std::string_view digits = text.substr(slash + 1);
    if (digits.empty() || digits.size() > 3 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      refuse(text, "has no prefix length after '/': expected 0 to " + std::to_string(max));
    }
    length = static_cast<unsigned>(std::stoi(std::string(digits)));
    if (length > max) refuse(text, "has a prefix length over " + std::to_string(max));
  }
  const IpAddress first = first_address(*address, length);
  if (first != *address) {
    refuse(text, "has bits set past its prefix; did you mean " + first.to_string() + "/" +
                     std::to_string(length) + "?");
  }
  const IpAddress v4 = unmapped(first);
  if (v4.is_v4() && !first.is_v4() && length >= 96) return IpNetwork(v4, length - 96);
  return IpNetwork(first, length);
}

bool IpNetwork::contains(const IpAddress& address) const {
  const IpAddress candidate = address_.is_v4() ? unmapped(address) : mapped(address);
  return candidate.is_v4() == address_.is_v4() && same_prefix(candidate, address_, prefix_length_);
}

std::string IpNetwork::to_string() const {
  return address_.to_string() + "/" + std::to_string(prefix_length_);
}

}  // namespace webhooks::publisher
