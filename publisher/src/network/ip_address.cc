#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>

#include "webhooks/enum_names.h"
#include "webhooks/publisher/ip_network.h"

namespace webhooks::publisher {
namespace {

using Bytes16 = std::array<std::uint8_t, 16>;

// True when the first `bits` bits of `address` equal those of `prefix`.
template <std::size_t N>
bool in_prefix(std::span<const std::uint8_t> address, const std::array<std::uint8_t, N>& prefix,
               unsigned bits) {
  for (unsigned i = 0; i < bits; ++i) {
    const unsigned mask = 0x80u >> (i % 8);
    if ((address[i / 8] & mask) != (prefix[i / 8] & mask)) return false;
  }
  return true;
}

AddressClass classify_v4(std::span<const std::uint8_t> a) {
  using P = std::array<std::uint8_t, 4>;
  struct Range {
    P prefix;
    unsigned bits;
    AddressClass cls;
  };
  static constexpr Range kRanges[] = {
      {{0, 0, 0, 0}, 8, AddressClass::unspecified},
      {{10, 0, 0, 0}, 8, AddressClass::private_network},
      {{100, 64, 0, 0}, 10, AddressClass::cgnat},
      {{127, 0, 0, 0}, 8, AddressClass::loopback},
      {{169, 254, 0, 0}, 16, AddressClass::link_local},
      {{172, 16, 0, 0}, 12, AddressClass::private_network},
      {{192, 0, 0, 0}, 24, AddressClass::reserved},
      {{192, 0, 2, 0}, 24, AddressClass::documentation},
      {{192, 168, 0, 0}, 16, AddressClass::private_network},
      {{198, 18, 0, 0}, 15, AddressClass::benchmarking},
      {{198, 51, 100, 0}, 24, AddressClass::documentation},
      {{203, 0, 113, 0}, 24, AddressClass::documentation},
      {{224, 0, 0, 0}, 4, AddressClass::multicast},
      {{240, 0, 0, 0}, 4, AddressClass::reserved},
  };
  for (const Range& r : kRanges) {
    if (in_prefix(a, r.prefix, r.bits)) return r.cls;
  }
  return AddressClass::public_address;
}

AddressClass classify_v6(std::span<const std::uint8_t> a) {
  static constexpr Bytes16 kZero{};
  static constexpr Bytes16 kLoopback{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  static constexpr Bytes16 kMapped{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  static constexpr Bytes16 kNat64{0, 0x64, 0xff, 0x9b};
  if (in_prefix(a, kZero, 128)) return AddressClass::unspecified;
  if (in_prefix(a, kLoopback, 128)) return AddressClass::loopback;
  // ::ffff:a.b.c.d and the deprecated ::a.b.c.d carry their IPv4 address's class, public or not.
  if (in_prefix(a, kMapped, 96) || in_prefix(a, kZero, 96)) return classify_v4(a.subspan(12, 4));
  // NAT64 and 6to4 reach an IPv4 address through a gateway; refuse the non-public ones.
  if (in_prefix(a, kNat64, 96)) {
    const AddressClass c = classify_v4(a.subspan(12, 4));
    if (c != AddressClass::public_address) return c;
  }
  if (a[0] == 0x20 && a[1] == 0x02) {
    const AddressClass c = classify_v4(a.subspan(2, 4));
    if (c != AddressClass::public_address) return c;
  }
  struct Range {
    Bytes16 prefix;
    unsigned bits;
    AddressClass cls;
  };
  static constexpr Range kRanges[] = {
      {{0, 0x64, 0xff, 0x9b, 0, 1}, 48, AddressClass::private_network},
      {{0x01, 0x00}, 64, AddressClass::reserved},
      {{0x20, 0x01, 0x00, 0x02, 0x00, 0x00}, 48, AddressClass::benchmarking},
      {{0x20, 0x01, 0x0d, 0xb8}, 32, AddressClass::documentation},
      {{0x3f, 0xff}, 20, AddressClass::documentation},
      {{0xfc}, 7, AddressClass::private_network},
      {{0xfe, 0x80}, 10, AddressClass::link_local},
      {{0xfe, 0xc0}, 10, AddressClass::private_network},
      {{0xff}, 8, AddressClass::multicast},
  };
  for (const Range& r : kRanges) {
    if (in_prefix(a, r.prefix, r.bits)) return r.cls;
  }
  return AddressClass::public_address;
}

// One inet_aton part: decimal, 0-prefixed octal or 0x-prefixed hex; at most 0xffffffff.
std::optional<std::uint32_t> parse_part(std::string_view s) {
  unsigned base = 10;
  if (s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
    if (s.empty()) return std::nullopt;  // "0x" alone is not a number to inet_aton
  } else if (s.size() >= 2 && s[0] == '0') {
    base = 8;
    s.remove_prefix(1);
  }
  if (s.empty()) return std::nullopt;
  std::uint64_t value = 0;
  for (char c : s) {
    unsigned digit = 0;
    if (c >= '0' && c <= '9') {
      digit = static_cast<unsigned>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      digit = static_cast<unsigned>(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      digit = static_cast<unsigned>(c - 'A' + 10);
    } else {
      return std::nullopt;
    }
    if (digit >= base) return std::nullopt;
    value = value * base + digit;
    if (value > 0xffffffffu) return std::nullopt;
  }
  return static_cast<std::uint32_t>(value);
}

}  // namespace

IpAddress IpAddress::v4(const std::array<std::uint8_t, 4>& bytes) {
  IpAddress ip;
  ip.v4_ = true;
  std::memcpy(ip.bytes_.data(), bytes.data(), 4);
  return ip;
}

IpAddress IpAddress::v6(const std::array<std::uint8_t, 16>& bytes) {
  IpAddress ip;
  ip.v4_ = false;
  ip.bytes_ = bytes;
  return ip;
}

std::optional<IpAddress> IpAddress::parse(std::string_view text) {
  if (text.empty() || text.size() > INET6_ADDRSTRLEN) return std::nullopt;
  const std::string s(text);
  std::array<std::uint8_t, 16> buf{};
  if (inet_pton(AF_INET, s.c_str(), buf.data()) == 1) return v4({buf[0], buf[1], buf[2], buf[3]});
  if (inet_pton(AF_INET6, s.c_str(), buf.data()) == 1) return v6(buf);
  return std::nullopt;
}

std::optional<IpAddress> IpAddress::parse_ipv4_loose(std::string_view text) {
  std::uint32_t parts[4] = {};
  std::size_t count = 0;
  for (std::size_t start = 0;;) {
    const std::size_t dot = text.find('.', start);
    if (count == 4) return std::nullopt;
    const auto part = parse_part(text.substr(start, dot - start));
    if (!part) return std::nullopt;
    parts[count++] = *part;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  // All parts but the last are single bytes; the last fills the remaining 4 - (count - 1) bytes.
  for (std::size_t i = 0; i + 1 < count; ++i) {
    if (parts[i] > 0xff) return std::nullopt;
  }
  const unsigned last_bits = 8 * static_cast<unsigned>(5 - count);
  if (last_bits < 32 && parts[count - 1] >= (1u << last_bits)) return std::nullopt;
  std::uint32_t value = parts[count - 1];
  for (std::size_t i = 0; i + 1 < count; ++i) value |= parts[i] << (24 - 8 * i);
  return v4({static_cast<std::uint8_t>(value >> 24), static_cast<std::uint8_t>(value >> 16),
             static_cast<std::uint8_t>(value >> 8), static_cast<std::uint8_t>(value)});
}

std::optional<IpAddress> IpAddress::from_sockaddr(const sockaddr* address, std::size_t length) {
  if (address == nullptr || length < sizeof(sa_family_t)) return std::nullopt;
  sockaddr_storage storage{};
  std::memcpy(&storage, address, std::min(length, sizeof(storage)));
  if (storage.ss_family == AF_INET && length >= sizeof(sockaddr_in)) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&storage);
    std::array<std::uint8_t, 4> b;
    std::memcpy(b.data(), &in->sin_addr, 4);
    return v4(b);
  }
  if (storage.ss_family == AF_INET6 && length >= sizeof(sockaddr_in6)) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&storage);
    std::array<std::uint8_t, 16> b;
    std::memcpy(b.data(), &in6->sin6_addr, 16);
    return v6(b);
  }
  return std::nullopt;
}

std::string IpAddress::to_string() const {
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(v4_ ? AF_INET : AF_INET6, bytes_.data(), text, sizeof(text));
  return text;
}

constexpr EnumNames<AddressClass, 10> kAddressClassNames{
    {"public_address", "loopback", "private_network", "link_local", "cgnat", "multicast",
     "unspecified", "documentation", "benchmarking", "reserved"},
    "unknown"};
std::string_view to_string(AddressClass value) noexcept { return kAddressClassNames.name(value); }

constexpr EnumNames<AddressClass, 10> kAddressClassPhrases{
    {"a public address", "a loopback address", "a private-network address", "a link-local address",
     "a CGNAT (100.64.0.0/10) address", "a multicast address",
     "an unspecified (0.0.0.0/8 or ::) address", "a documentation-range address",
     "a benchmarking-range address", "a reserved address"},
    "an unknown address"};
std::string_view describe(AddressClass value) noexcept { return kAddressClassPhrases.name(value); }

AddressClass classify(const IpAddress& address) {
  return address.is_v4() ? classify_v4(address.bytes()) : classify_v6(address.bytes());
}

}  // namespace webhooks::publisher
