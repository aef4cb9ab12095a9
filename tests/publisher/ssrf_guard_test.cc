#include "network/ssrf_guard.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <catch2/catch.hpp>
#include <map>

using namespace webhooks::publisher;

namespace {

// A resolver from a table; names not in it do not resolve. Never touches DNS.
SsrfOptions with_names(std::map<std::string, std::vector<std::string>> table) {
  SsrfOptions options;
  options.resolve = [table = std::move(table)](const std::string& host) {
    std::vector<IpAddress> out;
    if (auto it = table.find(host); it != table.end()) {
      for (const auto& text : it->second) out.push_back(*IpAddress::parse(text));
    }
    return out;
  };
  return options;
}

// A resolver that fails the test if it is called.
SsrfOptions no_resolution(bool allow_private = false) {
  SsrfOptions options;
  options.allow_private_networks = allow_private;
  options.resolve = [](const std::string& host) -> std::vector<IpAddress> {
    FAIL("resolved " << host);
    return {};
  };
  return options;
}

// check_connect_address on the socket address of `text` (an IPv4 or IPv6 literal), as curl
// hands it to the open-socket callback.
AddressCheck connect_to(const std::string& text, const SsrfOptions& options) {
  sockaddr_in in{};
  sockaddr_in6 in6{};
  if (inet_pton(AF_INET, text.c_str(), &in.sin_addr) == 1) {
    in.sin_family = AF_INET;
    return check_connect_address(reinterpret_cast<const sockaddr*>(&in), sizeof(in), options);
  }
  REQUIRE(inet_pton(AF_INET6, text.c_str(), &in6.sin6_addr) == 1);
  in6.sin6_family = AF_INET6;
  return check_connect_address(reinterpret_cast<const sockaddr*>(&in6), sizeof(in6), options);
}

}  // namespace

TEST_CASE("every spelling of loopback is refused") {
  for (const char* url :
       {"http://127.0.0.1/", "http://127.1/", "http://0x7f000001/", "http://2130706433/",
        "http://017700000001/", "http://0x7f.1/", "http://127.0.0.1./",
        "http://127.0.0.1:8080/hook?x=1", "https://127.000.000.001/", "http://[::ffff:127.0.0.1]/",
        "http://[::ffff:7f00:1]:80/", "http://[::127.0.0.1]/", "http://[::1]/"}) {
    INFO(url);
    const UrlCheck check = check_endpoint_url(url, no_resolution());
    CHECK(check.verdict == UrlVerdict::address_refused);
    CHECK(check.address_class == AddressClass::loopback);
    CHECK_FALSE(check);
  }
  const UrlCheck check = check_endpoint_url("http://0x7f000001:8080/", no_resolution());
  CHECK(check.host == "127.0.0.1");
  CHECK(check.port == 8080);
  CHECK(check.address->to_string() == "127.0.0.1");
  CHECK(check.message ==
        "URL host 127.0.0.1 is a loopback address; private networks are not allowed");
  const UrlCheck mapped = check_endpoint_url("http://[::ffff:127.0.0.1]/", no_resolution());
  CHECK(mapped.host == "::ffff:127.0.0.1");
  CHECK(mapped.message ==
        "URL host ::ffff:127.0.0.1 is a loopback address; private networks are not allowed");
}

TEST_CASE("localhost is refused because it resolves to loopback") {
  // getaddrinfo answers "localhost" from /etc/hosts; no DNS is involved.
  for (const char* url : {"http://localhost/", "http://LOCALHOST:9000/", "http://localhost./"}) {
    INFO(url);
    const UrlCheck check = check_endpoint_url(url);
    CHECK(check.verdict == UrlVerdict::address_refused);
    CHECK(check.address_class == AddressClass::loopback);
    CHECK(check.host == "localhost");
    CHECK_THAT(check.message, Catch::StartsWith("host \"localhost\" resolves to "));
    CHECK_THAT(check.message,
               Catch::EndsWith(", a loopback address; private networks are not allowed"));
  }
}

TEST_CASE("other non-public ranges are refused and say which") {
  const std::pair<const char*, AddressClass> cases[] = {
      {"http://10.0.0.1/", AddressClass::private_network},
      {"http://172.16.5.4/", AddressClass::private_network},
      {"http://192.168.1.1/", AddressClass::private_network},
      {"http://169.254.169.254/latest/meta-data/", AddressClass::link_local},
      {"http://100.64.0.1/", AddressClass::cgnat},
      {"http://0.0.0.0/", AddressClass::unspecified},
      {"http://0/", AddressClass::unspecified},
      {"http://224.0.0.1/", AddressClass::multicast},
      {"http://255.255.255.255/", AddressClass::reserved},
      {"http://192.0.2.10/", AddressClass::documentation},
      {"http://198.18.0.1/", AddressClass::benchmarking},
      {"http://[fd00::1]/", AddressClass::private_network},
      {"http://[fe80::1]/", AddressClass::link_local},
      {"http://[::]/", AddressClass::unspecified},
      {"http://[ff02::1]/", AddressClass::multicast},
      {"http://[::ffff:10.0.0.1]/", AddressClass::private_network},
      {"http://[::ffff:169.254.169.254]/", AddressClass::link_local},
  };
  for (const auto& [url, expected] : cases) {
    INFO(url);
    const UrlCheck check = check_endpoint_url(url, no_resolution());
    CHECK(check.verdict == UrlVerdict::address_refused);
    CHECK(check.address_class == expected);
  }
  CHECK(check_endpoint_url("http://100.64.0.1/", no_resolution()).message ==
        "URL host 100.64.0.1 is a CGNAT (100.64.0.0/10) address; private networks are not allowed");
}

TEST_CASE("public addresses are allowed") {
  UrlCheck check = check_endpoint_url("https://93.184.216.34/webhooks", no_resolution());
  CHECK(check.verdict == UrlVerdict::allowed);
  CHECK(check);
  CHECK(check.scheme == "https");
  CHECK(check.host == "93.184.216.34");
  CHECK(check.port == 443);
  CHECK(check.message.empty());
  CHECK_FALSE(check.address);

  check = check_endpoint_url("HTTP://93.184.216.34:8443/x?y=1#z", no_resolution());
  CHECK(check);
  CHECK(check.scheme == "http");
  CHECK(check.port == 8443);
  check = check_endpoint_url("http://93.184.216.34?a=b", no_resolution());
  CHECK(check);
  CHECK(check.port == 80);
  check = check_endpoint_url("https://[2606:2800:220:1:248:1893:25c8:1946]:444/", no_resolution());
  CHECK(check);
  CHECK(check.host == "2606:2800:220:1:248:1893:25c8:1946");
  CHECK(check.port == 444);
  CHECK(check_endpoint_url("http://[::ffff:93.184.216.34]/", no_resolution()));
  CHECK(check_endpoint_url("http://1572395042/", no_resolution()).host == "93.184.216.34");
}

TEST_CASE("names are checked against every address they resolve to") {
  const SsrfOptions options = with_names({
      {"hooks.example.test", {"93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"}},
      {"rebind.example.test", {"93.184.216.34", "10.0.0.5"}},
      {"v6.example.test", {"fd00::7"}},
  });
  UrlCheck check = check_endpoint_url("https://Hooks.Example.Test/in", options);
  CHECK(check);
  CHECK(check.host == "hooks.example.test");

  check = check_endpoint_url("https://rebind.example.test/", options);
  CHECK(check.verdict == UrlVerdict::address_refused);
  CHECK(check.address_class == AddressClass::private_network);
  CHECK(check.address->to_string() == "10.0.0.5");
  CHECK(check.message ==
        "host \"rebind.example.test\" resolves to 10.0.0.5, a private-network address; private "
        "networks are not allowed");

  CHECK(check_endpoint_url("https://v6.example.test/", options).address_class ==
        AddressClass::private_network);

  check = check_endpoint_url("https://nowhere.example.test/", options);
  CHECK(check.verdict == UrlVerdict::unresolvable);
  CHECK(check.message == "host \"nowhere.example.test\" does not resolve to any address");
}

TEST_CASE("allowing private networks allows any well-formed http(s) URL, unresolved") {
  const SsrfOptions allow = no_resolution(true);
  CHECK(check_endpoint_url("http://127.0.0.1:8783/webhooks", allow));
  CHECK(check_endpoint_url("http://localhost:8783/webhooks", allow));
  CHECK(check_endpoint_url("http://10.1.2.3/", allow));
  CHECK(check_endpoint_url("http://[::1]:80/", allow));
  CHECK(check_endpoint_url("ftp://127.0.0.1/", allow).verdict == UrlVerdict::scheme_not_allowed);
  CHECK(check_endpoint_url("http://user@127.0.0.1/", allow).verdict == UrlVerdict::malformed);
}

TEST_CASE("only http and https") {
  for (const char* url : {"ftp://93.184.216.34/", "file:///etc/passwd", "gopher://93.184.216.34/",
                          "dict://93.184.216.34:11211/", "httpx://93.184.216.34/"}) {
    INFO(url);
    CHECK(check_endpoint_url(url, no_resolution()).verdict == UrlVerdict::scheme_not_allowed);
  }
  CHECK(check_endpoint_url("file:///etc/passwd", no_resolution()).message ==
        "scheme \"file\" is not allowed; use http or https");
}

TEST_CASE("malformed URLs are refused with the reason") {
  const std::pair<const char*, const char*> cases[] = {
      {"", "URL is empty"},
      {"93.184.216.34", "URL must start with http:// or https://"},
      {"//93.184.216.34/", "URL must start with http:// or https://"},
      {"http:/93.184.216.34", "URL must start with http:// or https://"},
      {"http://", "URL has no host"},
      {"http:///x", "URL has no host"},
      {"http://:80/", "URL has no host"},
      {"http://./", "URL has no host"},
      {"http://user:pw@93.184.216.34/", "URL must not contain credentials (user:password@)"},
      {"http://93.184.216.34@127.0.0.1/", "URL must not contain credentials (user:password@)"},
      {"http://exa mple.com/",
       "URL contains a space, control character, backslash or non-ASCII byte"},
      {"http://93.184.216.34\\@127.0.0.1/",
       "URL contains a space, control character, backslash or non-ASCII byte"},
      {"http://ex\xc3\xa4mple.com/",
       "URL contains a space, control character, backslash or non-ASCII byte"},
      {"http://93.184.216.34\t/",
       "URL contains a space, control character, backslash or non-ASCII byte"},
      {"http://93.184.216.34:0/", "URL has an invalid port \"0\"; expected 1 to 65535"},
      {"http://93.184.216.34:65536/", "URL has an invalid port \"65536\"; expected 1 to 65535"},
      {"http://93.184.216.34:8o/", "URL has an invalid port \"8o\"; expected 1 to 65535"},
      {"http://93.184.216.34:/", "URL has an empty port"},
      {"http://[::1/", "URL has an unterminated IPv6 literal"},
      {"http://[::1]x/", "URL has text after its IPv6 literal"},
      {"http://[127.0.0.1]/", "URL has an invalid IPv6 literal \"[127.0.0.1]\""},
      {"http://[fe80::1%25eth0]/", "URL has an invalid IPv6 literal \"[fe80::1%25eth0]\""},
      {"http://exam%70le.com/",
       "URL host \"exam%70le.com\" has characters other than letters, digits, '-', '_' and '.'"},
      {"http://::1/", "URL host \":\" has characters other than letters, digits, '-', '_' and '.'"},
  };
  for (const auto& [url, message] : cases) {
    INFO(url);
    const UrlCheck check = check_endpoint_url(url, no_resolution());
    CHECK(check.verdict == UrlVerdict::malformed);
    CHECK(check.message == message);
  }
  CHECK(to_string(UrlVerdict::allowed) == "allowed");
  CHECK(to_string(UrlVerdict::malformed) == "malformed");
  CHECK(to_string(UrlVerdict::scheme_not_allowed) == "scheme_not_allowed");
  CHECK(to_string(UrlVerdict::unresolvable) == "unresolvable");
  CHECK(to_string(UrlVerdict::address_refused) == "address_refused");
}

TEST_CASE("the connect-time check reads the socket address curl is about to use") {
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_port = htons(443);
  inet_pton(AF_INET, "127.0.0.1", &in.sin_addr);
  const auto* loopback = reinterpret_cast<const sockaddr*>(&in);
  AddressCheck check = check_connect_address(loopback, sizeof(in));
  CHECK_FALSE(check);
  CHECK(check.address_class == AddressClass::loopback);
  CHECK(check.address->to_string() == "127.0.0.1");
  CHECK(check.message ==
        "refused to connect to 127.0.0.1, a loopback address; private networks are not allowed");
  SsrfOptions allow;
  allow.allow_private_networks = true;
  CHECK(check_connect_address(loopback, sizeof(in), allow));

  inet_pton(AF_INET, "93.184.216.34", &in.sin_addr);
  check = check_connect_address(reinterpret_cast<const sockaddr*>(&in), sizeof(in));
  CHECK(check);
  CHECK(check.message.empty());

  sockaddr_in6 in6{};
  in6.sin6_family = AF_INET6;
  inet_pton(AF_INET6, "::ffff:10.0.0.1", &in6.sin6_addr);
  check = check_connect_address(reinterpret_cast<const sockaddr*>(&in6), sizeof(in6));
  CHECK_FALSE(check);
  CHECK(check.address_class == AddressClass::private_network);
  CHECK(check.message ==
        "refused to connect to ::ffff:10.0.0.1, a private-network address; private networks are "
        "not allowed");

  sockaddr_un un{};
  un.sun_family = AF_UNIX;
  check = check_connect_address(reinterpret_cast<const sockaddr*>(&un), sizeof(un), allow);
  CHECK_FALSE(check);
  CHECK_FALSE(check.address);
  CHECK(check.message == "refused to connect: not an IPv4 or IPv6 socket address");
  CHECK_FALSE(check_connect_address(nullptr, 0, allow));
}

TEST_CASE("an allowed network opens its addresses only, at creation and at connect") {
  SsrfOptions vpc = with_names({
      {"in.vpc.test", {"10.20.0.9"}},
      {"split.vpc.test", {"10.20.0.9", "10.30.0.1"}},
  });
  vpc.allowed_networks = {IpNetwork::parse("10.20.0.0/16"), IpNetwork::parse("fd00:ab::/32")};
  CHECK(check_endpoint_url("http://10.20.0.0/", vpc));
  CHECK(check_endpoint_url("http://10.20.255.255:8443/hook", vpc));
  CHECK(check_endpoint_url("http://[fd00:ab::7]/", vpc));
  CHECK(check_endpoint_url("http://[::ffff:10.20.1.1]/", vpc));
  CHECK(check_endpoint_url("https://in.vpc.test/", vpc));
  CHECK(check_endpoint_url("https://93.184.216.34/", vpc));  // public stays allowed

  UrlCheck check = check_endpoint_url("http://10.21.0.0/", vpc);
  CHECK(check.verdict == UrlVerdict::address_refused);
  CHECK(check.message ==
        "URL host 10.21.0.0 is a private-network address; private networks are not allowed "
        "outside 10.20.0.0/16, fd00:ab::/32");
  check = check_endpoint_url("http://127.0.0.1/", vpc);
  CHECK(check.address_class == AddressClass::loopback);
  // curl may connect to any address of a name: one outside the network refuses the name.
  check = check_endpoint_url("https://split.vpc.test/", vpc);
  CHECK(check.verdict == UrlVerdict::address_refused);
  CHECK(check.message ==
        "host \"split.vpc.test\" resolves to 10.30.0.1, a private-network address; private "
        "networks are not allowed outside 10.20.0.0/16, fd00:ab::/32");

  CHECK(connect_to("10.20.0.9", vpc));
  const AddressCheck refused = connect_to("10.21.0.9", vpc);
  CHECK_FALSE(refused);
  CHECK(refused.message ==
        "refused to connect to 10.21.0.9, a private-network address; private networks are not "
        "allowed outside 10.20.0.0/16, fd00:ab::/32");
  CHECK(connect_to("::ffff:10.20.3.3", vpc));
  CHECK(connect_to("fd00:ab::1", vpc));
  CHECK_FALSE(connect_to("fd00:ac::1", vpc));
}

TEST_CASE("names under .invalid never resolve, without a DNS query (RFC 6761)") {
  for (const char* url :
       {"https://hooks.shop.invalid/in", "http://invalid/", "http://X.INVALID./"}) {
    INFO(url);
    const UrlCheck check = check_endpoint_url(url);  // the default resolver
    CHECK(check.verdict == UrlVerdict::unresolvable);
  }
  CHECK(check_endpoint_url("https://hooks.shop.invalid/in").message ==
        "host \"hooks.shop.invalid\" does not resolve to any address");
}
