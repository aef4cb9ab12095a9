// Named tokens (principals.h): NAME:TOKEN and a bare TOKEN named admin, the name rule, duplicate
// names and tokens refused, lookups by token and by name.
#include "webhooks/publisher/principals.h"

#include <catch2/catch.hpp>

#include "webhooks/error.h"

using webhooks::publisher::parse_principal;
using webhooks::publisher::Principal;
using webhooks::publisher::Principals;
using webhooks::publisher::Role;

namespace {

std::string refusal(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const webhooks::Error& e) {
    CHECK(e.code() == webhooks::ErrorCode::invalid_argument);
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("principals: NAME:TOKEN, and a bare TOKEN named admin") {
  const Principal ops = parse_principal("ops-1.bot_2:s3cret:with:colons", Role::viewer);
  CHECK(ops.name == "ops-1.bot_2");
  CHECK(ops.token == "s3cret:with:colons");
  CHECK(ops.role == Role::viewer);
  const Principal bare = parse_principal("s3cret", Role::admin);
  CHECK(bare.name == "admin");
  CHECK(bare.token == "s3cret");
  CHECK(bare.role == Role::admin);
  const std::string bad_name = "NAME in NAME:TOKEN must be 1 to 64 of A-Z a-z 0-9 _ . -";
  CHECK(refusal([] { parse_principal("bad name:tok", Role::admin); }) == bad_name);
  CHECK(refusal([] { parse_principal(":tok", Role::admin); }) == bad_name);
  CHECK(refusal([] { parse_principal(std::string(65, 'a') + ":tok", Role::admin); }) == bad_name);
  CHECK(parse_principal(std::string(64, 'a') + ":tok", Role::admin).name == std::string(64, 'a'));
  CHECK(refusal([] { parse_principal("alice:", Role::admin); }) ==
        "the token after NAME: is empty");
}

TEST_CASE("principals: duplicate names and tokens are refused; lookups by token and name") {
  CHECK(refusal([] {
          Principals({{"alice", "t1", Role::admin}, {"alice", "t2", Role::viewer}});
        }) == "the token name alice is given twice");
  CHECK(refusal([] {
          Principals({{"alice", "t1", Role::admin}, {"bob", "t1", Role::viewer}});
        }) == "tokens alice and bob are the same");
  const Principals all({{"alice", "t1", Role::admin}, {"bob", "t2", Role::viewer}});
  REQUIRE(all.by_token("t2") != nullptr);
  CHECK(all.by_token("t2")->name == "bob");
  CHECK(all.by_token("t2")->role == Role::viewer);
  CHECK(all.by_token("t3") == nullptr);
  CHECK(all.by_token("") == nullptr);
  CHECK(all.by_name("alice")->token == "t1");
  CHECK(all.by_name("carol") == nullptr);
  CHECK(Principals().empty());
}
