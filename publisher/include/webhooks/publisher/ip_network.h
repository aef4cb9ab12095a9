// IP addresses, the ranges the publisher refuses to deliver to, and IP networks in CIDR notation
// ("10.20.0.0/16", "fd00:ab::/32"): the ranges an operator opens to deliveries beside the public
// Internet (webhooks-publisherd --allow-network; the SSRF guard).
// Sources: RFC 6890 and the IANA IPv4/IPv6 Special-Purpose Address Registries; RFC 1918 (private),
// RFC 6598 (CGNAT), RFC 3927 and RFC 4291 (link-local), RFC 4193 (unique local), RFC 5737 and
// RFC 3849/9637 (documentation), RFC 2544 and RFC 5180 (benchmarking), RFC 4291 section 2.5.5
// (IPv4-compatible and IPv4-mapped IPv6), RFC 6052 and RFC 8215 (NAT64), RFC 3056 (6to4).
// Rationale: docs/publisher-delivery.md, "SSRF".
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

struct sockaddr;  // <sys/socket.h>

namespace webhooks::publisher {

// An IPv4 or IPv6 address in network byte order. A value type.
class IpAddress {
 public:
  static IpAddress v4(const std::array<std::uint8_t, 4>& bytes);
  static IpAddress v6(const std::array<std::uint8_t, 16>& bytes);

  // A strict literal: dotted-quad IPv4 ("93.184.216.34") or IPv6 text ("2001:db8::1", no
  // brackets, no zone). std::nullopt otherwise.
  static std::optional<IpAddress> parse(std::string_view text);

  // IPv4 the way inet_aton(3) reads it, which is also how getaddrinfo(3) and curl read a host
  // that looks numeric: one to four parts separated by dots, each decimal, octal (leading 0) or
  // hex (leading 0x), the last part filling the remaining bytes. So "127.1", "0x7f000001",
  // "2130706433", "017700000001" and "0x7f.0.0.1" are all 127.0.0.1. Unlike glibc, trailing text
  // after a space is refused. std::nullopt when the text is not such a number.
  static std::optional<IpAddress> parse_ipv4_loose(std::string_view text);

  // From an AF_INET or AF_INET6 socket address of `length` bytes (as in a curl_sockaddr);
  // std::nullopt for other families or a short length.
  static std::optional<IpAddress> from_sockaddr(const sockaddr* address, std::size_t length);

  bool is_v4() const { return v4_; }
  // 4 or 16 bytes.
  std::span<const std::uint8_t> bytes() const { return {bytes_.data(), v4_ ? 4u : 16u}; }
  // Canonical text: "127.0.0.1", "::ffff:127.0.0.1", "2001:db8::1".
  std::string to_string() const;

  friend bool operator==(const IpAddress&, const IpAddress&) = default;

 private:
  IpAddress() = default;
  bool v4_ = true;
  std::array<std::uint8_t, 16> bytes_{};
};

// Where an address points. Everything but `public_address` is refused unless private networks
// are allowed (ssrf_guard.h).
enum class AddressClass {
  public_address,   // none of the ranges below
  loopback,         // 127.0.0.0/8, ::1
  private_network,  // 10/8, 172.16/12, 192.168/16; fc00::/7 (unique local), fec0::/10
                    // (deprecated site-local), 64:ff9b:1::/48 (local-use NAT64)
  link_local,       // 169.254/16 (including cloud metadata 169.254.169.254), fe80::/10
  cgnat,            // 100.64.0.0/10, carrier-grade NAT shared address space
  multicast,        // 224.0.0.0/4, ff00::/8
  unspecified,      // 0.0.0.0/8 ("this network"; Linux connects 0.0.0.0 to the local host), ::
  documentation,    // 192.0.2/24, 198.51.100/24, 203.0.113/24, 2001:db8::/32, 3fff::/20
  benchmarking,     // 198.18.0.0/15, 2001:2::/48
  reserved,         // 192.0.0.0/24 (IETF protocol assignments), 240.0.0.0/4 (future use and
                    // the broadcast address 255.255.255.255), 100::/64 (discard-only)
};

// Stable name, e.g. "loopback", "private_network".
std::string_view to_string(AddressClass value) noexcept;
// A phrase for messages, e.g. "a loopback address", "a CGNAT (100.64.0.0/10) address".
std::string_view describe(AddressClass value) noexcept;

// The class of an address. IPv6 forms that carry an IPv4 address take the class of that address
// when it is not public: IPv4-mapped ::ffff:0:0/96 and IPv4-compatible ::/96 (so
// ::ffff:127.0.0.1 and ::127.0.0.1 are loopback; ::ffff:93.184.216.34 is public), NAT64
// 64:ff9b::/96, and 6to4 2002::/16 (the IPv4 address in bits 16..47). Pure; thread-safe.
AddressClass classify(const IpAddress& address);

// A network address and a prefix length. A value type.
class IpNetwork {
 public:
  // Reads "ADDRESS/LENGTH" or a single "ADDRESS" (/32 for IPv4, /128 for IPv6). ADDRESS is a
  // strict literal (IpAddress::parse: dotted quad or IPv6 text, no brackets, no zone); LENGTH is
  // 0 to 32 (IPv4) or 0 to 128 (IPv6) in decimal digits. The address must be the network's first
  // address: "10.1.2.3/8" is refused (did you mean 10.0.0.0/8?), so a typo cannot open a range
  // other than the one meant. An IPv4-mapped IPv6 network (::ffff:10.0.0.0/104) is kept as its
  // IPv4 network (10.0.0.0/8). Throws webhooks::Error(invalid_argument) whose message quotes
  // `text` and says what is wrong, e.g. "\"10.0.0.0/33\" has a prefix length over 32".
  static IpNetwork parse(std::string_view text);

  const IpAddress& address() const { return address_; }  // the first address
  unsigned prefix_length() const { return prefix_length_; }

  // True when `address` is in the network. An IPv4-mapped IPv6 address (::ffff:10.1.2.3, how a
  // dual-stack socket sees an IPv4 peer) is compared as its IPv4 address, and an IPv4 address
  // against an IPv6 network as its mapped form (so ::/0 holds every address). Pure; thread-safe.
  bool contains(const IpAddress& address) const;

  // "10.0.0.0/8", "fd00::/8".
  std::string to_string() const;

  friend bool operator==(const IpNetwork&, const IpNetwork&) = default;

 private:
  IpNetwork(IpAddress address, unsigned prefix_length)
      : address_(address), prefix_length_(prefix_length) {}
  IpAddress address_;
  unsigned prefix_length_ = 0;
};

}  // namespace webhooks::publisher
