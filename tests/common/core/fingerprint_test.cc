#include "webhooks/fingerprint.h"

#include <catch2/catch.hpp>

#include "webhooks/error.h"

using namespace webhooks;

TEST_CASE("sha256_hex matches FIPS 180-2's abc vector") {
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST_CASE("the fingerprint hashes METHOD, path and the canonical body") {
  CHECK(request_fingerprint("POST", "/orders", "{ \"b\": 1, \"a\": 2 }") ==
        sha256_hex("POST\n/orders\n{\"a\":2,\"b\":1}"));
  CHECK(request_fingerprint("GET", "/orders/1", "") == sha256_hex("GET\n/orders/1\n"));
}

TEST_CASE("bodies that differ only in spelling give one fingerprint") {
  const std::string a = request_fingerprint(
      "POST", "/orders", "{\"amount\":1000,\"currency\":\"EUR\",\"reference\":\"r1\"}");
  CHECK(request_fingerprint(
            "POST", "/orders",
            "{\n  \"reference\": \"r1\",\n  \"currency\": \"EUR\",\n  \"amount\": 1000.0\n}") == a);
  CHECK(request_fingerprint("POST", "/orders",
                            "{\"amount\":1e3,\"currency\":\"\\u0045UR\",\"reference\":\"r1\"}") ==
        a);
  CHECK(request_fingerprint("POST", "/orders",
                            "{\"amount\":1001,\"currency\":\"EUR\",\"reference\":\"r1\"}") != a);
  CHECK(request_fingerprint("POST", "/payouts",
                            "{\"amount\":1000,\"currency\":\"EUR\",\"reference\":\"r1\"}") != a);
  CHECK(request_fingerprint("POST", "/orders", "{\"amount\":9007199254740993}") !=
        request_fingerprint("POST", "/orders", "{\"amount\":9007199254740992}"));
}

TEST_CASE("a body that is not JSON cannot be fingerprinted") {
  CHECK_THROWS_AS(request_fingerprint("POST", "/orders", "amount=1000"), Error);
  CHECK_THROWS_AS(request_fingerprint("POST", "/orders", "{\"a\":1,\"a\":1}"), Error);
  // Found by tests/fuzz/canonical_json: "{\"a\":1}\0{\"b\":2}" had the fingerprint of {"a":1}.
  CHECK_THROWS_AS(request_fingerprint("POST", "/orders", std::string("{\"a\":1}\0{\"b\":2}", 15)),
                  Error);
}
