#include "webhooks/publisher/ip_network.h"

#include <catch2/catch.hpp>

#include "webhooks/error.h"

using namespace webhooks::publisher;

namespace {

IpAddress ip(const char* text) { return *IpAddress::parse(text); }

}  // namespace

TEST_CASE("an IPv4 network holds its first and last address and nothing beside them") {
  const IpNetwork vpc = IpNetwork::parse("10.20.0.0/16");
  CHECK(vpc.to_string() == "10.20.0.0/16");
  CHECK(vpc.prefix_length() == 16);
  CHECK(vpc.contains(ip("10.20.0.0")));
  CHECK(vpc.contains(ip("10.20.255.255")));
  CHECK_FALSE(vpc.contains(ip("10.19.255.255")));
  CHECK_FALSE(vpc.contains(ip("10.21.0.0")));
  // How a dual-stack socket sees an IPv4 peer: compared as its IPv4 address.
  CHECK(vpc.contains(ip("::ffff:10.20.7.8")));
  CHECK_FALSE(vpc.contains(ip("::ffff:10.21.7.8")));
  CHECK_FALSE(vpc.contains(ip("::10.20.7.8")));  // IPv4-compatible is another address
  CHECK_FALSE(vpc.contains(ip("fd00::a14:708")));

  const IpNetwork odd = IpNetwork::parse("192.168.4.0/23");
  CHECK(odd.contains(ip("192.168.4.0")));
  CHECK(odd.contains(ip("192.168.5.255")));
  CHECK_FALSE(odd.contains(ip("192.168.3.255")));
  CHECK_FALSE(odd.contains(ip("192.168.6.0")));
}

TEST_CASE("an IPv6 network holds its first and last address and nothing beside them") {
  const IpNetwork ula = IpNetwork::parse("fd00:ab::/32");
  CHECK(ula.to_string() == "fd00:ab::/32");
  CHECK(ula.contains(ip("fd00:ab::")));
  CHECK(ula.contains(ip("fd00:ab:ffff:ffff:ffff:ffff:ffff:ffff")));
  CHECK_FALSE(ula.contains(ip("fd00:aa:ffff:ffff:ffff:ffff:ffff:ffff")));
  CHECK_FALSE(ula.contains(ip("fd00:ac::")));
  CHECK_FALSE(ula.contains(ip("10.0.0.1")));

  const IpNetwork every = IpNetwork::parse("::/0");
  CHECK(every.contains(ip("2001:db8::1")));
  CHECK(every.contains(ip("10.0.0.1")));  // as ::ffff:10.0.0.1
  const IpNetwork every_v4 = IpNetwork::parse("0.0.0.0/0");
  CHECK(every_v4.contains(ip("255.255.255.255")));
  CHECK(every_v4.contains(ip("::ffff:1.2.3.4")));
  CHECK_FALSE(every_v4.contains(ip("2001:db8::1")));
}

TEST_CASE("an address alone is a /32 or /128; an IPv4-mapped network is kept as IPv4") {
  const IpNetwork one = IpNetwork::parse("192.168.1.7");
  CHECK(one.to_string() == "192.168.1.7/32");
  CHECK(one.contains(ip("192.168.1.7")));
  CHECK_FALSE(one.contains(ip("192.168.1.6")));
  CHECK_FALSE(one.contains(ip("192.168.1.8")));
  CHECK(IpNetwork::parse("::1").to_string() == "::1/128");
  CHECK(IpNetwork::parse("::1").contains(ip("::1")));
  CHECK_FALSE(IpNetwork::parse("::1").contains(ip("::2")));

  const IpNetwork mapped = IpNetwork::parse("::ffff:10.0.0.0/104");
  CHECK(mapped.to_string() == "10.0.0.0/8");
  CHECK(mapped.contains(ip("10.255.255.255")));
  CHECK(mapped == IpNetwork::parse("10.0.0.0/8"));
  CHECK(IpNetwork::parse("::ffff:0:0/96").to_string() == "0.0.0.0/0");
}

TEST_CASE("a bad network is refused, quoting it and saying why") {
  const std::pair<const char*, const char*> cases[] = {
      {"10.0.0.0/33", "\"10.0.0.0/33\" has a prefix length over 32"},
      {"fd00::/129", "\"fd00::/129\" has a prefix length over 128"},
      {"10.1.2.3/8", "\"10.1.2.3/8\" has bits set past its prefix; did you mean 10.0.0.0/8?"},
      {"fd00::1/8", "\"fd00::1/8\" has bits set past its prefix; did you mean fd00::/8?"},
      {"10.0.0.0/", "\"10.0.0.0/\" has no prefix length after '/': expected 0 to 32"},
      {"10.0.0.0/-1", "\"10.0.0.0/-1\" has no prefix length after '/': expected 0 to 32"},
      {"::/1000", "\"::/1000\" has no prefix length after '/': expected 0 to 128"},
      {"10.0.0/8",
       "\"10.0.0/8\" is not a network: expected ADDRESS/LENGTH, e.g. 10.20.0.0/16 or fd00::/8"},
      {"[::1]/128",
       "\"[::1]/128\" is not a network: expected ADDRESS/LENGTH, e.g. 10.20.0.0/16 or fd00::/8"},
      {"", "\"\" is not a network: expected ADDRESS/LENGTH, e.g. 10.20.0.0/16 or fd00::/8"},
  };
  for (const auto& [text, message] : cases) {
    INFO(text);
    CHECK_THROWS_MATCHES(IpNetwork::parse(text), webhooks::Error,
                         Catch::Matchers::Message(message));
  }
}
