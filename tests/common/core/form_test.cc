// webhooks::parse_form (webhooks/form.h): the WHATWG application/x-www-form-urlencoded parsing.
#include "webhooks/form.h"

#include <catch2/catch.hpp>

using webhooks::parse_form;
using Fields = std::vector<std::pair<std::string, std::string>>;

TEST_CASE("parse_form: pairs in order, repeated names kept, '+' and %XX decoded") {
  CHECK(parse_form("payload=%7B%22a%22%3A1%7D") == Fields{{"payload", R"({"a":1})"}});
  CHECK(parse_form("a=1&b=x+y&a=2") == Fields{{"a", "1"}, {"b", "x y"}, {"a", "2"}});
  CHECK(parse_form("%41%6a=%2B%2b") == Fields{{"Aj", "++"}});
  CHECK(parse_form("&&flag&=v&") == Fields{{"flag", ""}, {"", "v"}});
  CHECK(parse_form("k=a=b") == Fields{{"k", "a=b"}});
  CHECK(parse_form("").empty());
}

TEST_CASE("parse_form: a '%' without two hex digits is kept as it is; bytes pass unchecked") {
  CHECK(parse_form("k=%") == Fields{{"k", "%"}});
  CHECK(parse_form("k=%7") == Fields{{"k", "%7"}});
  CHECK(parse_form("k=%zz%41") == Fields{{"k", "%zzA"}});
  CHECK(parse_form("k=%FF%00") == Fields{{"k", std::string("\xff\0", 2)}});
}
