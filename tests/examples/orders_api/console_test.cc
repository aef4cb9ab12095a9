// orders-api's console over real HTTP (no browser: tests/browser does that): sign-in with the
// merchant's API key, 303 without a session, exactly the merchant's keys listed and escaped,
// filters, the key page, and sign-out that needs the CSRF token.
#include <catch2/catch.hpp>

#include "harness.h"
#include "webhooks/console/html.h"

using webhooks::test::kOrder;
using webhooks::test::Stack;

namespace {

// A key with every character HTML escapes.
const std::string kOdd = R"(o<b>&"'1)";

struct Browser {
  explicit Browser(int port) : client("127.0.0.1", port) {}
  // Signs in with `token`; the status of the answer. Keeps the cookie of a 303.
  int sign_in(const std::string& token) {
    const auto answer =
        client.Post("/console/login", "token=" + webhooks::console::url_encode(token),
                    "application/x-www-form-urlencoded");
    REQUIRE(answer);
    const std::string set = answer->get_header_value("Set-Cookie");
    if (answer->status == 303) cookie = set.substr(0, set.find(';'));
    last_body = answer->body;
    return answer->status;
  }
  httplib::Result get(const std::string& path) {
    httplib::Headers headers;
    if (!cookie.empty()) headers.emplace("Cookie", cookie);
    return client.Get(path.c_str(), headers);
  }
  httplib::Client client;
  std::string cookie, last_body;
};

std::size_t rows(const std::string& html) {
  std::size_t n = 0;
  for (auto at = html.find("<tr data-key="); at != std::string::npos;
       at = html.find("<tr data-key=", at + 1)) {
    ++n;
  }
  return n;
}

bool has(const std::string& html, const std::string& text) {
  return html.find(text) != std::string::npos;
}

// The page's CSRF token, from its meta tag.
std::string csrf_of(const std::string& html) {
  const std::string tag = R"(<meta name="csrf-token" content=")";
  const std::size_t at = html.find(tag);
  REQUIRE(at != std::string::npos);
  return html.substr(at + tag.size(), html.find('"', at + tag.size()) - at - tag.size());
}

}  // namespace

TEST_CASE("console: no session is a 303 to the sign-in form; a wrong key is 401") {
  Stack s;
  s.start_api();
  Browser b(s.api_port);
  for (const char* path : {"/console", "/console/keys/k1", "/console?state=failed"}) {
    const auto answer = b.get(path);
    REQUIRE(answer);
    CHECK(answer->status == 303);
    CHECK(answer->get_header_value("Location") == "/console/login");
    CHECK(answer->body.find("data-key") == std::string::npos);
  }
  CHECK(b.sign_in("key-m3") == 401);
  CHECK(has(b.last_body, R"(id="login-error")"));
  CHECK(b.cookie.empty());
  const auto forged = httplib::Client("127.0.0.1", s.api_port)
                          .Get("/console", {{"Cookie", "orders_console=99999999999.00.00"}});
  REQUIRE(forged);
  CHECK(forged->status == 303);
}

TEST_CASE("console: lists exactly the merchant's keys, escaped, filtered, with a key page") {
  Stack s;
  s.start_api();
  REQUIRE(s.post("/orders", "plain", kOrder).status == 201);
  const std::string odd_order = s.post("/orders", kOdd, kOrder).json()["id"];
  REQUIRE(s.post("/orders", "theirs", kOrder, "key-m2").status == 201);
  Browser b(s.api_port);
  REQUIRE(b.sign_in("key-m1") == 303);
  // Its own cookie name: the publisher's console (webhooks_console) on the same host stays signed
  // in, and never receives this session.
  CHECK(b.cookie.starts_with("orders_console="));
  const auto page = b.get("/console");
  REQUIRE(page);
  CHECK(page->status == 200);
  CHECK(rows(page->body) == 2);
  CHECK(has(page->body, R"(<tr data-key="o&lt;b&gt;&amp;&quot;&#39;1">)"));
  CHECK(has(page->body, R"(<tr data-key="plain">)"));
  CHECK(has(page->body, R"(<td class="state">completed</td><td class="route">POST /orders</td>)"
                        R"(<td class="status">201</td>)"));
  CHECK(has(page->body, "<td class=\"resource\">" + odd_order + "</td>"));
  CHECK_FALSE(has(page->body, "theirs"));
  CHECK_FALSE(has(page->body, "<b>"));
  CHECK(rows(b.get("/console?state=failed")->body) == 0);
  CHECK(rows(b.get("/console?state=completed")->body) == 2);
  CHECK(rows(b.get("/console?since=2999-01-01T00:00")->body) == 0);
  CHECK(rows(b.get("/console?until=2000-01-01T00:00")->body) == 0);
  const auto bad = b.get("/console?since=yesterday");
  CHECK(bad->status == 400);
  CHECK(rows(bad->body) == 0);  // a bad filter lists nothing, not every key
  CHECK(rows(b.get("/console?state=bogus")->body) == 0);

  const auto detail = b.get("/console/keys/" + webhooks::console::url_encode(kOdd));
  REQUIRE(detail);
  CHECK(detail->status == 200);
  CHECK(has(detail->body, R"(<dd id="key-state">completed</dd>)"));
  CHECK(has(detail->body, R"(<dd id="key-route">POST /orders</dd>)"));
  CHECK(has(detail->body, R"(<dd id="key-status">201</dd>)"));
  CHECK(has(detail->body, R"(<dd id="key-attempts">1</dd>)"));
  CHECK(has(detail->body, "<dd id=\"resource-id\">" + odd_order + "</dd>"));
  CHECK_FALSE(has(detail->body, "<b>"));
  CHECK(b.get("/console/keys/theirs")->status == 404);
  CHECK(has(b.get("/console/keys/theirs")->body, R"(id="key-missing")"));

  Browser m2(s.api_port);
  REQUIRE(m2.sign_in("key-m2") == 303);
  const auto theirs = m2.get("/console");
  CHECK(rows(theirs->body) == 1);
  CHECK(has(theirs->body, R"(<tr data-key="theirs">)"));
}

TEST_CASE("console: sign-out needs the page's CSRF token and revokes the session") {
  Stack s;
  s.start_api();
  Browser b(s.api_port);
  REQUIRE(b.sign_in("key-m1") == 303);
  const std::string csrf = csrf_of(b.get("/console")->body);
  httplib::Headers with_cookie = {{"Cookie", b.cookie}};
  const auto refused = b.client.Post("/console/logout", with_cookie, "csrf=wrong",
                                     "application/x-www-form-urlencoded");
  REQUIRE(refused);
  CHECK(refused->status == 403);
  CHECK(b.get("/console")->status == 200);  // still signed in
  const auto out = b.client.Post("/console/logout", with_cookie, "csrf=" + csrf,
                                 "application/x-www-form-urlencoded");
  REQUIRE(out);
  CHECK(out->status == 303);
  CHECK(out->get_header_value("Location") == "/console/login");
  CHECK(out->get_header_value("Set-Cookie").starts_with("orders_console=;"));
  // Revoked on the server (orders_revoked_sessions): a copy of the cookie no longer signs in.
  const auto copied = b.get("/console");
  REQUIRE(copied);
  CHECK(copied->status == 303);
  CHECK(copied->get_header_value("Location") == "/console/login");
}

TEST_CASE("console and API: 10 failures of an address in a minute make it wait (429)") {
  Stack s;
  s.start_api();
  Browser b(s.api_port);
  for (int i = 0; i < 5; ++i) {
    CHECK(b.sign_in("wrong-" + std::to_string(i)) == 401);
    CHECK(s.get("/orders/o1", "wrong-" + std::to_string(i)).status == 401);
  }
  // The 11th attempt, the right key too, within the first second of the minute: 60 s to wait.
  const auto refused = s.get("/orders/o1", "key-m1");
  CHECK(refused.status == 429);
  CHECK(refused.header("Retry-After") == "60");
  CHECK(refused.error_code() == "too_many_failures");
  CHECK(refused.json()["error"]["message"] ==
        "too many failed authentications from this address: retry after 60 s");
  CHECK(b.sign_in("key-m1") == 429);
  CHECK(b.cookie.empty());
  CHECK(has(b.last_body, R"(<p id="login-error" class="error">Too many failed sign-ins from this )"
                         R"(address: try again in 60 s.</p>)"));
  CHECK(s.get("/healthz").status == 200);
}

TEST_CASE("console --behind-tls-proxy: a Secure cookie; sign-in from another origin is 403") {
  Stack s;
  s.start_api({"--behind-tls-proxy"});
  Browser b(s.api_port);
  const std::string host = "127.0.0.1:" + std::to_string(s.api_port);
  b.client.set_default_headers({{"Origin", "https://evil.example"}});
  CHECK(b.sign_in("key-m1") == 403);
  CHECK(b.cookie.empty());
  CHECK(has(b.last_body,
            "Refused: this form was posted from https://evil.example, not from this "
            "console (https://" +
                host + ")."));
  b.client.set_default_headers({{"Origin", "https://" + host}});
  const auto in =
      b.client.Post("/console/login", "token=key-m1", "application/x-www-form-urlencoded");
  REQUIRE(in);
  CHECK(in->status == 303);
  CHECK(in->get_header_value("Set-Cookie")
            .ends_with("; Path=/; HttpOnly; SameSite=Strict; Secure; Max-Age=43200"));
}
