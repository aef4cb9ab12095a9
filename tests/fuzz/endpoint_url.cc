// Endpoint URLs and IP literals (publisher/src/network/ssrf_guard.h,
// webhooks/publisher/ip_network.h). Input: "URL\nRESOLVED\nSOCKADDR..." : a URL for
// check_endpoint_url, an address literal that every host name "resolves" to (no DNS is ever used),
// and raw bytes taken as a socket address. Properties: nothing throws; a verdict other than
// malformed and scheme_not_allowed comes with a lowercased host and a port from 1 to 65535; with
// private networks allowed every URL that is not malformed or of another scheme is allowed;
// address_refused names a non-public address; a strict literal prints in a canonical form that
// parses back to itself; a loose IPv4 literal is IPv4.
#include <sys/socket.h>

#include <cstring>
#include <string>

#include "fuzz_check.h"
#include "network/ssrf_guard.h"
#include "webhooks/publisher/ip_network.h"

namespace {

using namespace webhooks::publisher;

void check_literal(std::string_view text) {
  if (const auto address = IpAddress::parse(text)) {
    const std::string canonical = address->to_string();
    FUZZ_CHECK(IpAddress::parse(canonical) == address);
    FUZZ_CHECK(address->bytes().size() == (address->is_v4() ? 4u : 16u));
    FUZZ_CHECK(!describe(classify(*address)).empty());
  }
  if (const auto loose = IpAddress::parse_ipv4_loose(text)) {
    FUZZ_CHECK(loose->is_v4());
    FUZZ_CHECK(IpAddress::parse(loose->to_string()) == loose);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view rest = fuzz::text(data, size);
  const std::string_view url = fuzz::take(rest);
  const std::string resolved(fuzz::take(rest));
  const std::string_view raw = rest;

  check_literal(url);
  check_literal(resolved);

  SsrfOptions options;
  options.resolve = [&resolved](const std::string&) {
    std::vector<IpAddress> addresses;
    if (auto a = IpAddress::parse(resolved)) addresses.push_back(*a);
    return addresses;
  };
  const UrlCheck check = check_endpoint_url(url, options);
  FUZZ_CHECK(to_string(check.verdict) != "unknown");
  if (check.verdict != UrlVerdict::malformed && check.verdict != UrlVerdict::scheme_not_allowed) {
    FUZZ_CHECK(check.scheme == "http" || check.scheme == "https");
    FUZZ_CHECK(!check.host.empty());
    for (const char c : check.host) FUZZ_CHECK(!(c >= 'A' && c <= 'Z'));
    FUZZ_CHECK(check.port >= 1 && check.port <= 65535);
  }
  if (check.verdict == UrlVerdict::allowed)
    FUZZ_CHECK(check.message.empty());
  else
    FUZZ_CHECK(!check.message.empty());
  if (check.verdict == UrlVerdict::address_refused) {
    FUZZ_CHECK(check.address.has_value());
    FUZZ_CHECK(check.address_class != AddressClass::public_address);
  }

  SsrfOptions open;
  open.allow_private_networks = true;
  const UrlCheck open_check = check_endpoint_url(url, open);
  if (check.verdict == UrlVerdict::malformed || check.verdict == UrlVerdict::scheme_not_allowed) {
    FUZZ_CHECK(open_check.verdict == check.verdict);
  } else {
    FUZZ_CHECK(open_check.verdict == UrlVerdict::allowed);
    FUZZ_CHECK(open_check.host == check.host && open_check.port == check.port);
  }

  // The connect-time check on raw socket-address bytes, as curl would hand them over.
  sockaddr_storage storage{};
  const std::size_t length = std::min(raw.size(), sizeof storage);
  if (length > 0) std::memcpy(&storage, raw.data(), length);
  const auto* address = reinterpret_cast<const sockaddr*>(&storage);
  const AddressCheck connect = check_connect_address(address, length);
  if (connect) {
    FUZZ_CHECK(connect.address.has_value());
    FUZZ_CHECK(classify(*connect.address) == AddressClass::public_address);
  }
  const AddressCheck connect_open = check_connect_address(address, length, open);
  FUZZ_CHECK(connect_open.allowed == IpAddress::from_sockaddr(address, length).has_value());
  return 0;
}
