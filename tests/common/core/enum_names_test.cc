// webhooks::EnumNames (enum_names.h): one list gives both directions, and the enums that use it
// keep their stored and logged names.
#include "webhooks/enum_names.h"

#include <catch2/catch.hpp>

#include "webhooks/error.h"

using namespace webhooks;

namespace {

enum class Color { red, green, blue };
constexpr EnumNames<Color, 3> kColors{{"red", "green", "blue"}, "unknown"};

}  // namespace

TEST_CASE("a name for each value, the value of each name") {
  STATIC_REQUIRE(kColors.name(Color::green) == "green");
  CHECK(kColors.name(Color::red) == "red");
  CHECK(kColors.name(Color::blue) == "blue");
  CHECK(kColors.name(static_cast<Color>(7)) == "unknown");
  CHECK(kColors.parse("blue") == Color::blue);
  CHECK(kColors.parse("red") == Color::red);
  CHECK(kColors.parse("Blue") == std::nullopt);  // exact
  CHECK(kColors.parse("") == std::nullopt);
  CHECK(kColors.parse("unknown") == std::nullopt);
}

TEST_CASE("error codes keep their names") {
  CHECK(to_string(ErrorCode::invalid_secret) == "invalid_secret");
  CHECK(to_string(ErrorCode::invalid_key) == "invalid_key");
  CHECK(to_string(ErrorCode::invalid_json) == "invalid_json");
  CHECK(to_string(ErrorCode::invalid_argument) == "invalid_argument");
  CHECK(to_string(ErrorCode::crypto) == "crypto");
  CHECK(to_string(ErrorCode::storage) == "storage");
  CHECK(to_string(ErrorCode::conflict) == "conflict");
  CHECK(to_string(ErrorCode::io) == "io");
}
