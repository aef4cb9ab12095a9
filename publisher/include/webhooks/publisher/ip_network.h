// An IP network in CIDR notation ("10.20.0.0/16", "fd00:ab::/32"): the ranges an operator opens
// to deliveries beside the public Internet (webhooks-publisherd --allow-network, ssrf_guard.h).
#pragma once

#include <string>
#include <string_view>

#include "webhooks/publisher/ip_address.h"

namespace webhooks::publisher {

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
