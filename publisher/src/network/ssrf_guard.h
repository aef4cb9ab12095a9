// Refusing endpoint URLs that point into our own network (server-side request forgery), twice:
// when an endpoint is created (check_endpoint_url) and when curl opens each socket
// (check_connect_address, from a CURLOPT_OPENSOCKETFUNCTION callback; http_delivery.h does this),
// so a name that resolves to a public address at creation and to 127.0.0.1 later (DNS rebinding)
// is still caught. Source: docs/publisher-delivery.md, "SSRF". Ranges:
// webhooks/publisher/ip_network.h.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "webhooks/publisher/ip_network.h"

namespace webhooks::publisher {

struct SsrfOptions {
  // true allows every address class (the daemon's --allow-private-networks; tests and demos on
  // loopback need it). Default false: only public addresses.
  bool allow_private_networks = false;
  // Networks whose addresses are allowed whatever their class (the daemon's --allow-network, e.g.
  // the merchants' VPC range 10.20.0.0/16); everything else not public stays refused. Default:
  // none.
  std::vector<IpNetwork> allowed_networks;
  // The addresses a host name resolves to; an empty result means it does not resolve. Default
  // (empty function): getaddrinfo(3) with AF_UNSPEC, every address it returns, except for names
  // under the special-use TLD "invalid" (RFC 6761, section 6.4), which never resolve and are not
  // looked up. Tests inject one so that they never use DNS. Called only for names, never for
  // address literals.
  std::function<std::vector<IpAddress>(const std::string& host)> resolve;
};

enum class UrlVerdict {
  allowed,             // http or https to a public address or one in allowed_networks (or any, when
                       // private networks are allowed)
  malformed,           // not an absolute http(s) URL we can read unambiguously (see below)
  scheme_not_allowed,  // a scheme other than http and https
  unresolvable,        // a host name with no address now; not shown unsafe (the connect-time
                       // check still applies); the caller decides whether to accept it (the
                       // admin API does, with a warning: its DNS may not exist yet)
  address_refused,     // the host is, or resolves to, a non-public address outside
                       // allowed_networks
};

// Stable name, e.g. "address_refused".
std::string_view to_string(UrlVerdict verdict) noexcept;

struct UrlCheck {
  UrlVerdict verdict = UrlVerdict::malformed;
  std::string scheme;  // "http" or "https" (lowercased) once read
  // The host once read: a lowercased name without a trailing dot, or an address literal in
  // canonical form ("127.0.0.1" for "0x7f000001", "::ffff:127.0.0.1" for "[::ffff:127.0.0.1]").
  std::string host;
  int port = 0;                      // explicit, else 80 or 443
  std::optional<IpAddress> address;  // the refused address, for address_refused
  AddressClass address_class = AddressClass::public_address;  // its class, for address_refused
  std::string message;                                        // why, for humans; empty when allowed
  explicit operator bool() const { return verdict == UrlVerdict::allowed; }
};

// Reads `url` and decides whether the publisher may deliver to it.
// Malformed: empty; spaces, control characters, backslashes or non-ASCII bytes anywhere; no
// "scheme://"; credentials ("user:pass@"), refused so that no reader can take a different host;
// an empty host; host characters other than letters, digits, '-', '_' and '.'; an invalid
// bracketed IPv6 literal or one with a zone ("%25eth0"); a port that is not 1..65535.
// A host is an address when IpAddress::parse_ipv4_loose accepts it (inet_aton semantics, so
// "127.1", "0x7f000001", "2130706433" and "017700000001" are 127.0.0.1) or when it is a bracketed
// IPv6 literal; otherwise it is a name and is resolved, and it is refused if any of its addresses
// is neither public nor in allowed_networks (curl may connect to any of them). With
// allow_private_networks nothing is resolved and every well-formed http(s) URL is allowed.
// Thread-safe if `resolve` is.
UrlCheck check_endpoint_url(std::string_view url, const SsrfOptions& options = {});

struct AddressCheck {
  bool allowed = false;
  std::optional<IpAddress> address;  // std::nullopt when the family is not AF_INET/AF_INET6
  AddressClass address_class = AddressClass::public_address;
  std::string message;  // why it was refused; empty when allowed
  explicit operator bool() const { return allowed; }
};

// The connect-time check for the socket address curl is about to connect to. Usable from a
// CURLOPT_OPENSOCKETFUNCTION callback: pass `&curl_sockaddr->addr` and `curl_sockaddr->addrlen`
// and return CURL_SOCKET_BAD when refused (curl then fails with CURLE_COULDNT_CONNECT). Allowed:
// a public address, one in allowed_networks, or any with allow_private_networks. Families other
// than AF_INET and AF_INET6 (e.g. AF_UNIX) are refused even when private networks are allowed.
// Thread-safe; no allocation beyond the message; never blocks.
AddressCheck check_connect_address(const sockaddr* address, std::size_t length,
                                   const SsrfOptions& options = {});

}  // namespace webhooks::publisher
