// What every server's --listen (app: HOST:PORT, split at the first ':') answers to an address it
// cannot take, for the flag tests of each executable: the value and CLI11's message after
// "--listen: ", before " (expected HOST:PORT)".
#pragma once

namespace webhooks::test {

struct BadListenAddress {
  const char* value;
  const char* message;
};

inline constexpr BadListenAddress kBadListenAddresses[] = {
    // Bound 127.0.0.1:0 and exited 1 before.
    {"127.0.0.1:0:0",
     "127.0.0.1:0:0 has more than one ':'; write an IPv6 host in brackets, e.g. [::1]:8080"},
    {"[::1]:80:80", "the port of [::1]:80:80 must be a number from 0 to 65535"},
    {":80", ":80 has no host"},
    {"127.0.0.1:", "the port of 127.0.0.1: must be a number from 0 to 65535"}};

}  // namespace webhooks::test
