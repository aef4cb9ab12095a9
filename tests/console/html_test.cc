#include "webhooks/console/html.h"

#include <catch2/catch.hpp>

using webhooks::console::escape_html;
using webhooks::console::parse_form;
using webhooks::console::url_encode;

TEST_CASE("escape_html replaces exactly & < > \" ' and keeps every other byte") {
  CHECK(escape_html(R"(<script>alert("x" + 'y') & </script>)") ==
        "&lt;script&gt;alert(&quot;x&quot; + &#39;y&#39;) &amp; &lt;/script&gt;");
  CHECK(escape_html("plain text, é ü → 1/2 = ;") == "plain text, é ü → 1/2 = ;");
  CHECK(escape_html("") == "");
  CHECK(escape_html("&amp;") == "&amp;amp;");
  CHECK(escape_html(std::string("a\0b", 3)) == std::string("a\0b", 3));
}

TEST_CASE("url_encode keeps unreserved bytes and percent-encodes the rest") {
  CHECK(url_encode("abc-XYZ_0.9~") == "abc-XYZ_0.9~");
  CHECK(url_encode("a b&c=d/é") == "a%20b%26c%3Dd%2F%C3%A9");
  CHECK(url_encode("") == "");
}

TEST_CASE("parse_form decodes an x-www-form-urlencoded body") {
  const auto fields = parse_form("token=a%2Bb+c&csrf=&token=second&flag&bad=%zz%4");
  CHECK(fields.size() == 4);
  CHECK(fields.at("token") == "a+b c");
  CHECK(fields.at("csrf").empty());
  CHECK(fields.at("flag").empty());
  CHECK(fields.at("bad") == "%zz%4");
  CHECK(parse_form("").empty());
  CHECK(parse_form("&&").empty());
}
