// webhooks::EnumNames (enum_names.h): one list gives both directions, and the enums that use it
// keep their stored and logged names.
#include "webhooks/enum_names.h"

#include <catch2/catch.hpp>
#include <string_view>
#include <vector>

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

TEST_CASE("error codes keep their names, in the enum's order") {
  std::vector<std::string_view> names;
  for (int i = 0; i <= static_cast<int>(ErrorCode::io); ++i) {
    names.push_back(to_string(static_cast<ErrorCode>(i)));
  }
  CHECK(names == std::vector<std::string_view>{"invalid_secret", "invalid_key", "invalid_json",
                                               "invalid_argument", "crypto", "storage", "conflict",
                                               "io"});
}
