#include "network/ssrf_guard.h"

#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>

#include "network/ascii.h"
#include "webhooks/enum_names.h"

namespace webhooks::publisher {
namespace {

using detail::lowercase;

UrlCheck reject(UrlCheck check, UrlVerdict verdict, std::string message) {
  check.verdict = verdict;
  check.message = std::move(message);
  return check;
}

bool is_host_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
}

std::optional<int> parse_port(std::string_view s) {
  if (s.empty() || s.size() > 5) return std::nullopt;
  int port = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    port = port * 10 + (c - '0');
  }
  if (port < 1 || port > 65535) return std::nullopt;
  return port;
}

// RFC 6761, section 6.4: "invalid" and the names under it never resolve; resolvers should answer
// at once, without a query.
bool special_invalid(std::string_view host) {
  return host == "invalid" || host.ends_with(".invalid");
}

std::vector<IpAddress> getaddrinfo_resolve(const std::string& host) {
  if (special_invalid(host)) return {};
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* results = nullptr;
  std::vector<IpAddress> addresses;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &results) != 0) return addresses;
  for (const addrinfo* ai = results; ai != nullptr; ai = ai->ai_next) {
    auto ip = IpAddress::from_sockaddr(ai->ai_addr, ai->ai_addrlen);
    if (ip && std::find(addresses.begin(), addresses.end(), *ip) == addresses.end()) {
      addresses.push_back(*ip);
    }
  }
  freeaddrinfo(results);
  return addresses;
}

// "; private networks are not allowed", then the networks that are, if any.
std::string not_allowed(const SsrfOptions& options) {
  std::string text = "; private networks are not allowed";
  for (std::size_t i = 0; i < options.allowed_networks.size(); ++i) {
    text += (i == 0 ? " outside " : ", ") + options.allowed_networks[i].to_string();
  }
  return text;
}

// Public, or in one of the networks the operator allowed.
bool allowed_address(const IpAddress& ip, AddressClass cls, const SsrfOptions& options) {
  if (options.allow_private_networks || cls == AddressClass::public_address) return true;
  return std::any_of(options.allowed_networks.begin(), options.allowed_networks.end(),
                     [&ip](const IpNetwork& network) { return network.contains(ip); });
}

// "127.0.0.1, a loopback address"
std::string address_phrase(const IpAddress& ip, AddressClass cls) {
  return ip.to_string() + ", " + std::string(describe(cls));
}

// Splits "host[:port]" or "[v6]:port" into check.host / check.port, or says why not.
std::optional<std::string> read_authority(std::string_view authority, UrlCheck& check,
                                          std::optional<IpAddress>& literal) {
  if (authority.find('@') != std::string_view::npos) {
    return "URL must not contain credentials (user:password@)";
  }
  std::string_view host = authority, port;
  if (authority.starts_with('[')) {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return "URL has an unterminated IPv6 literal";
    host = authority.substr(1, close - 1);
    const std::string_view rest = authority.substr(close + 1);
    if (!rest.empty() && !rest.starts_with(':')) return "URL has text after its IPv6 literal";
    if (!rest.empty()) port = rest.substr(1);
    literal = IpAddress::parse(host);
    if (!literal || literal->is_v4()) {
      return "URL has an invalid IPv6 literal \"[" + std::string(host) + "]\"";
    }
  } else {
    const std::size_t colon = authority.rfind(':');
    if (colon != std::string_view::npos) {
      host = authority.substr(0, colon);
      port = authority.substr(colon + 1);
      if (port.empty()) return "URL has an empty port";
    }
    if (host.ends_with('.')) host.remove_suffix(1);  // "127.0.0.1." and "example.com." are FQDNs
    if (host.empty()) return "URL has no host";
    if (!std::all_of(host.begin(), host.end(), is_host_char)) {
      return "URL host \"" + std::string(host) +
             "\" has characters other than letters, digits, "
             "'-', '_' and '.'";
    }
    literal = IpAddress::parse_ipv4_loose(host);
  }
  check.host = literal ? literal->to_string() : lowercase(host);
  check.port = check.scheme == "https" ? 443 : 80;
  if (!port.empty()) {
    const auto p = parse_port(port);
    if (!p) return "URL has an invalid port \"" + std::string(port) + "\"; expected 1 to 65535";
    check.port = *p;
  }
  return std::nullopt;
}

}  // namespace

constexpr EnumNames<UrlVerdict, 5> kUrlVerdictNames{
    {"allowed", "malformed", "scheme_not_allowed", "unresolvable", "address_refused"}, "unknown"};
std::string_view to_string(UrlVerdict verdict) noexcept { return kUrlVerdictNames.name(verdict); }

UrlCheck check_endpoint_url(std::string_view url, const SsrfOptions& options) {
  UrlCheck check;
  if (url.empty()) return reject(check, UrlVerdict::malformed, "URL is empty");
  for (unsigned char c : url) {
    if (c <= 0x20 || c >= 0x7f || c == '\\') {
      return reject(check, UrlVerdict::malformed,
                    "URL contains a space, control character, backslash or non-ASCII byte");
    }
  }
  const std::size_t sep = url.find("://");
  if (sep == std::string_view::npos || sep == 0) {
    return reject(check, UrlVerdict::malformed, "URL must start with http:// or https://");
  }
  check.scheme = lowercase(url.substr(0, sep));
  if (check.scheme != "http" && check.scheme != "https") {
    return reject(check, UrlVerdict::scheme_not_allowed,
                  "scheme \"" + check.scheme + "\" is not allowed; use http or https");
  }
  const std::string_view rest = url.substr(sep + 3);
  const std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  if (authority.empty()) return reject(check, UrlVerdict::malformed, "URL has no host");
  std::optional<IpAddress> literal;
  if (auto problem = read_authority(authority, check, literal)) {
    return reject(check, UrlVerdict::malformed, std::move(*problem));
  }
  if (options.allow_private_networks) {
    check.verdict = UrlVerdict::allowed;
    return check;
  }
  std::vector<IpAddress> addresses;
  if (literal) {
    addresses.push_back(*literal);
  } else {
    addresses = options.resolve ? options.resolve(check.host) : getaddrinfo_resolve(check.host);
    if (addresses.empty()) {
      return reject(check, UrlVerdict::unresolvable,
                    "host \"" + check.host + "\" does not resolve to any address");
    }
  }
  for (const IpAddress& ip : addresses) {
    const AddressClass cls = classify(ip);
    if (allowed_address(ip, cls, options)) continue;
    check.address = ip;
    check.address_class = cls;
    std::string message =
        literal ? "URL host " + ip.to_string() + " is " + std::string(describe(cls))
                : "host \"" + check.host + "\" resolves to " + address_phrase(ip, cls);
    return reject(check, UrlVerdict::address_refused, message + not_allowed(options));
  }
  check.verdict = UrlVerdict::allowed;
  return check;
}

AddressCheck check_connect_address(const sockaddr* address, std::size_t length,
                                   const SsrfOptions& options) {
  AddressCheck check;
  check.address = IpAddress::from_sockaddr(address, length);
  if (!check.address) {
    check.message = "refused to connect: not an IPv4 or IPv6 socket address";
    return check;
  }
  check.address_class = classify(*check.address);
  if (allowed_address(*check.address, check.address_class, options)) {
    check.allowed = true;
    return check;
  }
  check.message = "refused to connect to " + address_phrase(*check.address, check.address_class) +
                  not_allowed(options);
  return check;
}

}  // namespace webhooks::publisher
