#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <catch2/catch.hpp>
#include <cstring>

#include "webhooks/publisher/ip_network.h"

using namespace webhooks::publisher;

namespace {

std::string loose(const char* text) {
  const auto ip = IpAddress::parse_ipv4_loose(text);
  return ip ? ip->to_string() : "none";
}

AddressClass class_of(const char* text) {
  const auto ip = IpAddress::parse(text);
  REQUIRE(ip);
  return classify(*ip);
}

}  // namespace

TEST_CASE("IPv4 shorthand is read as inet_aton reads it") {
  CHECK(loose("127.0.0.1") == "127.0.0.1");
  CHECK(loose("127.1") == "127.0.0.1");
  CHECK(loose("127.0.1") == "127.0.0.1");
  CHECK(loose("0x7f000001") == "127.0.0.1");
  CHECK(loose("0X7F000001") == "127.0.0.1");
  CHECK(loose("2130706433") == "127.0.0.1");
  CHECK(loose("017700000001") == "127.0.0.1");
  CHECK(loose("0x7f.1") == "127.0.0.1");
  CHECK(loose("0177.0.0.01") == "127.0.0.1");
  CHECK(loose("0") == "0.0.0.0");
  CHECK(loose("4294967295") == "255.255.255.255");
  CHECK(loose("10.0x10.0377.00") == "10.16.255.0");
  CHECK(loose("1.2.65535") == "1.2.255.255");
  CHECK(loose("1.16777215") == "1.255.255.255");
  CHECK(loose("93.184.216.34") == "93.184.216.34");
  for (const char* junk :
       {"",           ".",          "1.2.3.4.5",   "256.1.1.1", "1.2.3.256", "1.2.65536",
        "1.16777216", "4294967296", "0x",          "08",        "09.1.1.1",  "1..2",
        "1.2.3.",     ".1",         "example.com", "1e2",       "0x1g",      "127.0.0.1 ",
        "-1",         "+1",         "0x100000000", "localhost"}) {
    INFO(junk);
    CHECK(loose(junk) == "none");
  }
}

TEST_CASE("the shorthand parser agrees with glibc's inet_aton") {
  for (const char* text : {"127.1",
                           "0x7f000001",
                           "2130706433",
                           "017700000001",
                           "0x7f.1",
                           "0",
                           "00",
                           "0x0",
                           "4294967295",
                           "4294967296",
                           "1.2.3.4.5",
                           "256.1.1.1",
                           "1.2.65536",
                           "1.16777216",
                           "0x",
                           "08",
                           "1..2",
                           "1.2.3.",
                           ".1",
                           "1e2",
                           "0xffffffff",
                           "0x1.0x2.0x3.0x4",
                           "0377.0377.0377.0377",
                           "0400.1.1.1",
                           "a.b.c.d",
                           "1.2.3.04",
                           "0x000000000000000001"}) {
    INFO(text);
    in_addr glibc{};
    const bool ok = inet_aton(text, &glibc) != 0;
    const auto ours = IpAddress::parse_ipv4_loose(text);
    REQUIRE(ok == ours.has_value());
    if (ok) CHECK(std::memcmp(&glibc, ours->bytes().data(), 4) == 0);
  }
}

TEST_CASE("strict literals, socket addresses and text") {
  CHECK(IpAddress::parse("93.184.216.34")->to_string() == "93.184.216.34");
  CHECK(IpAddress::parse("93.184.216.34")->is_v4());
  CHECK(IpAddress::parse("2001:DB8::1")->to_string() == "2001:db8::1");
  CHECK_FALSE(IpAddress::parse("2001:db8::1")->is_v4());
  CHECK(IpAddress::parse("::ffff:127.0.0.1")->to_string() == "::ffff:127.0.0.1");
  CHECK(IpAddress::parse("::ffff:7f00:1")->to_string() == "::ffff:127.0.0.1");
  CHECK(IpAddress::parse("::ffff:127.0.0.1")->bytes().size() == 16);
  for (const char* junk :
       {"", "127.1", "0x7f000001", "[::1]", "fe80::1%eth0", "::1::2", "1.2.3.4 "}) {
    INFO(junk);
    CHECK_FALSE(IpAddress::parse(junk));
  }
  CHECK(IpAddress::v4({10, 0, 0, 1}) == *IpAddress::parse("10.0.0.1"));
  CHECK_FALSE(IpAddress::v4({10, 0, 0, 1}) == *IpAddress::parse("::ffff:10.0.0.1"));

  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_port = htons(80);
  inet_pton(AF_INET, "127.0.0.1", &in.sin_addr);
  auto ip = IpAddress::from_sockaddr(reinterpret_cast<sockaddr*>(&in), sizeof(in));
  REQUIRE(ip);
  CHECK(ip->to_string() == "127.0.0.1");
  CHECK_FALSE(IpAddress::from_sockaddr(reinterpret_cast<sockaddr*>(&in), 4));

  sockaddr_in6 in6{};
  in6.sin6_family = AF_INET6;
  inet_pton(AF_INET6, "::1", &in6.sin6_addr);
  ip = IpAddress::from_sockaddr(reinterpret_cast<sockaddr*>(&in6), sizeof(in6));
  REQUIRE(ip);
  CHECK(ip->to_string() == "::1");

  sockaddr_un un{};
  un.sun_family = AF_UNIX;
  CHECK_FALSE(IpAddress::from_sockaddr(reinterpret_cast<sockaddr*>(&un), sizeof(un)));
  CHECK_FALSE(IpAddress::from_sockaddr(nullptr, 0));
}

TEST_CASE("IPv4 ranges, at their edges") {
  using C = AddressClass;
  const std::pair<const char*, AddressClass> cases[] = {
      {"0.0.0.0", C::unspecified},
      {"0.255.255.255", C::unspecified},
      {"1.0.0.0", C::public_address},
      {"9.255.255.255", C::public_address},
      {"10.0.0.0", C::private_network},
      {"10.255.255.255", C::private_network},
      {"11.0.0.0", C::public_address},
      {"100.63.255.255", C::public_address},
      {"100.64.0.0", C::cgnat},
      {"100.127.255.255", C::cgnat},
      {"100.128.0.0", C::public_address},
      {"126.255.255.255", C::public_address},
      {"127.0.0.1", C::loopback},
      {"127.255.255.255", C::loopback},
      {"128.0.0.0", C::public_address},
      {"169.253.255.255", C::public_address},
      {"169.254.0.0", C::link_local},
      {"169.254.169.254", C::link_local},
      {"169.255.0.0", C::public_address},
      {"172.15.255.255", C::public_address},
      {"172.16.0.0", C::private_network},
      {"172.31.255.255", C::private_network},
      {"172.32.0.0", C::public_address},
      {"192.0.0.8", C::reserved},
      {"192.0.1.0", C::public_address},
      {"192.0.2.1", C::documentation},
      {"192.88.99.1", C::public_address},
      {"192.167.255.255", C::public_address},
      {"192.168.0.0", C::private_network},
      {"192.168.255.255", C::private_network},
      {"192.169.0.0", C::public_address},
      {"198.17.255.255", C::public_address},
      {"198.18.0.0", C::benchmarking},
      {"198.19.255.255", C::benchmarking},
      {"198.20.0.0", C::public_address},
      {"198.51.100.7", C::documentation},
      {"203.0.113.9", C::documentation},
      {"223.255.255.255", C::public_address},
      {"224.0.0.1", C::multicast},
      {"239.255.255.255", C::multicast},
      {"240.0.0.1", C::reserved},
      {"255.255.255.255", C::reserved},
      {"93.184.216.34", C::public_address},
      {"8.8.8.8", C::public_address},
  };
  for (const auto& [text, expected] : cases) {
    INFO(text);
    CHECK(class_of(text) == expected);
  }
}

TEST_CASE("IPv6 ranges, and IPv4 carried inside IPv6") {
  using C = AddressClass;
  const std::pair<const char*, AddressClass> cases[] = {
      {"::", C::unspecified},
      {"::1", C::loopback},
      {"::ffff:127.0.0.1", C::loopback},
      {"::ffff:10.0.0.1", C::private_network},
      {"::ffff:169.254.169.254", C::link_local},
      {"::ffff:0.0.0.0", C::unspecified},
      {"::ffff:93.184.216.34", C::public_address},
      {"::127.0.0.1", C::loopback},
      {"::2", C::unspecified},  // IPv4-compatible 0.0.0.2
      {"::93.184.216.34", C::public_address},
      {"64:ff9b::7f00:1", C::loopback},
      {"64:ff9b::a00:1", C::private_network},
      {"64:ff9b::5db8:d822", C::public_address},
      {"64:ff9b:1::1", C::private_network},
      {"2002:7f00:1::", C::loopback},
      {"2002:c0a8:101::1", C::private_network},
      {"2002:5db8:d822::1", C::public_address},
      {"100::1", C::reserved},
      {"100:0:0:1::1", C::public_address},
      {"2001:2::1", C::benchmarking},
      {"2001:2:1::1", C::public_address},
      {"2001:db8::1", C::documentation},
      {"2001:db9::1", C::public_address},
      {"3fff::1", C::documentation},
      {"3fff:fff::1", C::documentation},
      {"3fff:1000::1", C::public_address},
      {"fbff:ffff::1", C::public_address},
      {"fc00::1", C::private_network},
      {"fd12:3456::1", C::private_network},
      {"fe80::1", C::link_local},
      {"febf::1", C::link_local},
      {"fec0::1", C::private_network},
      {"ff02::1", C::multicast},
      {"2606:2800:220:1:248:1893:25c8:1946", C::public_address},
      {"2001:4860:4860::8888", C::public_address},
  };
  for (const auto& [text, expected] : cases) {
    INFO(text);
    CHECK(class_of(text) == expected);
  }
}

TEST_CASE("address classes have stable names and phrases") {
  CHECK(to_string(AddressClass::public_address) == "public_address");
  CHECK(to_string(AddressClass::loopback) == "loopback");
  CHECK(to_string(AddressClass::private_network) == "private_network");
  CHECK(to_string(AddressClass::link_local) == "link_local");
  CHECK(to_string(AddressClass::cgnat) == "cgnat");
  CHECK(to_string(AddressClass::multicast) == "multicast");
  CHECK(to_string(AddressClass::unspecified) == "unspecified");
  CHECK(to_string(AddressClass::documentation) == "documentation");
  CHECK(to_string(AddressClass::benchmarking) == "benchmarking");
  CHECK(to_string(AddressClass::reserved) == "reserved");
  CHECK(describe(AddressClass::loopback) == "a loopback address");
  CHECK(describe(AddressClass::cgnat) == "a CGNAT (100.64.0.0/10) address");
}
