#include "webhooks/secret.h"

#include <catch2/catch.hpp>

#include "support/thrown_code.h"
#include "webhooks/error.h"

using namespace webhooks;
using Catch::Matchers::Message;

TEST_CASE("secrets parse with and without the whsec_ prefix") {
  const Secret a = Secret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
  const Secret b = Secret::parse("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
  CHECK(a.key().size() == 24);
  CHECK(std::equal(a.key().begin(), a.key().end(), b.key().begin(), b.key().end()));
  CHECK(a.to_string() == "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
  CHECK(b.to_string() == "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
}

TEST_CASE("bad secrets are refused with the reason") {
  CHECK_THROWS_MATCHES(Secret::parse(""), Error, Message("secret is empty"));
  CHECK_THROWS_MATCHES(Secret::parse("whsec_"), Error, Message("secret is empty after 'whsec_'"));
  CHECK_THROWS_MATCHES(Secret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n"), Error,
                       Message("secret contains whitespace; remove spaces and newlines"));
  CHECK_THROWS_MATCHES(Secret::parse(" whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"), Error,
                       Message("secret contains whitespace; remove spaces and newlines"));
  CHECK_THROWS_MATCHES(
      Secret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS!"), Error,
      Message("secret is not valid base64 (expected 'whsec_' followed by padded base64)"));
  CHECK_THROWS_MATCHES(
      Secret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS"), Error,
      Message("secret is not valid base64 (expected 'whsec_' followed by padded base64)"));
  // 16 bytes: too short; 68 bytes: too long.
  CHECK_THROWS_MATCHES(Secret::parse("whsec_AAAAAAAAAAAAAAAAAAAAAA=="), Error,
                       Message("secret decodes to 16 bytes; expected 24 to 64"));
  CHECK_THROWS_MATCHES(Secret::parse("whsec_" + std::string(92, 'A')), Error,
                       Message("secret decodes to 69 bytes; expected 24 to 64"));
  const ErrorCode code = webhooks::test::thrown_code([] { Secret::parse("x"); });
  CHECK(code == ErrorCode::invalid_secret);
  CHECK(to_string(code) == "invalid_secret");
}

TEST_CASE("the length bounds are inclusive") {
  CHECK(Secret::parse("whsec_" + std::string(32, 'A')).key().size() == 24);
  CHECK(Secret::parse("whsec_" + std::string(84, 'A') + "AA==").key().size() == 64);
}

TEST_CASE("generated secrets are 32 random bytes and round-trip") {
  const Secret s = Secret::generate();
  CHECK(s.key().size() == 32);
  CHECK(s.to_string().size() == 6 + 44);
  const Secret again = Secret::parse(s.to_string());
  CHECK(std::equal(s.key().begin(), s.key().end(), again.key().begin(), again.key().end()));
  CHECK(Secret::generate().to_string() != s.to_string());
  CHECK_THROWS_AS(Secret::generate(23), Error);
  CHECK_THROWS_AS(Secret::generate(65), Error);
}
