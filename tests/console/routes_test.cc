// The sign-in routes, the page guard and the assets over real HTTP on 127.0.0.1, on a JSON server
// (Bodies::json) as the publisher's and orders-api's are.
#include <httplib.h>

#include <catch2/catch.hpp>
#include <thread>

#include "webhooks/console/assets.h"
#include "webhooks/console/page.h"
#include "webhooks/console/session.h"

using webhooks::console::Session;
using webhooks::console::Sessions;

namespace {

struct Console {
  // `tls`: served over TLS or behind a TLS proxy (Sessions::use_tls).
  explicit Console(bool tls = false) : sessions(Sessions::single_token("admin-token", clock)) {
    sessions.use_tls(tls);
    webhooks::http::limit_request_bodies(server, 1 << 20, nullptr, webhooks::http::Bodies::json);
    sessions.mount(server, "Test console");
    server.Get("/console", [this](const httplib::Request& req, httplib::Response& res) {
      const std::optional<Session> session = sessions.require(req, res);
      if (!session) return;
      webhooks::console::send_html(res, 200, "page for " + session->csrf_token);
    });
    port = webhooks::http::bind_server(server, "127.0.0.1", 0);
    serving = std::thread([this] { server.listen_after_bind(); });
  }
  ~Console() {
    server.stop();
    serving.join();
  }
  // Signs in and returns the cookie value.
  std::string sign_in() {
    auto answer =
        client().Post("/console/login", "token=admin-token", "application/x-www-form-urlencoded");
    REQUIRE(answer);
    REQUIRE(answer->status == 303);
    const std::string cookie = answer->get_header_value("Set-Cookie");
    return cookie.substr(17, cookie.find(';') - 17);  // after "webhooks_console="
  }
  httplib::Client client() { return httplib::Client("127.0.0.1", port); }

  webhooks::FakeClock clock;
  Sessions sessions;
  webhooks::http::Server server;
  int port = 0;
  std::thread serving;
};

}  // namespace

TEST_CASE("console sign-in: the right token sets the cookie and redirects, a wrong one is 401") {
  Console console;
  auto client = console.client();
  auto form = client.Get("/console/login");
  REQUIRE(form);
  CHECK(form->status == 200);
  CHECK(form->body.find(R"(<form id="login-form" method="post" action="/console/login">)") !=
        std::string::npos);
  CHECK(form->body.find(R"(<input id="token" name="token" type="password")") != std::string::npos);
  CHECK(form->body.find("login-error") == std::string::npos);
  auto wrong =
      client.Post("/console/login", "token=admin-tokem", "application/x-www-form-urlencoded");
  REQUIRE(wrong);
  CHECK(wrong->status == 401);
  CHECK(wrong->has_header("Set-Cookie") == false);
  CHECK(wrong->body.find(R"(<p id="login-error" class="error">That token is not right.</p>)") !=
        std::string::npos);
  auto right =
      client.Post("/console/login", "token=admin-token", "application/x-www-form-urlencoded");
  REQUIRE(right);
  CHECK(right->status == 303);
  CHECK(right->get_header_value("Location") == "/console");
  const std::string cookie = right->get_header_value("Set-Cookie");
  CHECK(cookie.starts_with("webhooks_console=1700043200."));
  CHECK(cookie.ends_with("; Path=/; HttpOnly; SameSite=Strict; Max-Age=43200"));
}

TEST_CASE("console pages redirect without a valid session and render with one") {
  Console console;
  auto client = console.client();
  auto anonymous = client.Get("/console");
  REQUIRE(anonymous);
  CHECK(anonymous->status == 303);
  CHECK(anonymous->get_header_value("Location") == "/console/login");
  CHECK(anonymous->body.empty());
  const std::string value = console.sign_in();
  auto page = client.Get("/console", {{"Cookie", "other=1; webhooks_console=" + value}});
  REQUIRE(page);
  CHECK(page->status == 200);
  CHECK(page->body == "page for " + console.sessions.verify(value)->csrf_token);
  CHECK(page->get_header_value("Cache-Control") == "no-store");
  auto forged = client.Get("/console", {{"Cookie", "webhooks_console=" + value + "0"}});
  CHECK(forged->status == 303);
  console.clock.advance(std::chrono::hours(12));
  auto expired = client.Get("/console", {{"Cookie", "webhooks_console=" + value}});
  CHECK(expired->status == 303);
}

TEST_CASE("console sign-out needs the session's CSRF token and clears the cookie") {
  Console console;
  auto client = console.client();
  const std::string value = console.sign_in();
  const httplib::Headers cookie{{"Cookie", "webhooks_console=" + value}};
  auto refused =
      client.Post("/console/logout", cookie, "csrf=nope", "application/x-www-form-urlencoded");
  REQUIRE(refused);
  CHECK(refused->status == 403);
  const std::string csrf = console.sessions.verify(value)->csrf_token;
  auto out =
      client.Post("/console/logout", cookie, "csrf=" + csrf, "application/x-www-form-urlencoded");
  REQUIRE(out);
  CHECK(out->status == 303);
  CHECK(out->get_header_value("Location") == "/console/login");
  CHECK(out->get_header_value("Set-Cookie") ==
        "webhooks_console=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0");
}

TEST_CASE("console assets are served from the binary with caching headers") {
  Console console;
  auto client = console.client();
  auto css = client.Get("/console/assets/console.css");
  REQUIRE(css);
  CHECK(css->status == 200);
  CHECK(css->body == webhooks::console::stylesheet());
  CHECK(css->get_header_value("Content-Type") == "text/css; charset=utf-8");
  CHECK(css->get_header_value("Cache-Control") == "public, max-age=3600");
  const std::string etag = css->get_header_value("ETag");
  CHECK(etag.size() == 18);
  auto again = client.Get("/console/assets/console.css", {{"If-None-Match", etag}});
  CHECK(again->status == 304);
  CHECK(again->body.empty());
  auto js = client.Get("/console/assets/console.js");
  CHECK(js->status == 200);
  CHECK(js->body == webhooks::console::script());
  CHECK(js->body.find("X-CSRF-Token") != std::string::npos);
  CHECK(js->get_header_value("Content-Type") == "text/javascript; charset=utf-8");
}

TEST_CASE("the session cookie authorizes the API, with X-CSRF-Token for changes") {
  Console console;
  const std::string value = console.sign_in();
  const Session session = *console.sessions.verify(value);
  httplib::Request req;
  req.method = "GET";
  CHECK(console.sessions.authorize_api(req) == webhooks::console::ApiSession::none);
  req.headers.emplace("Cookie", "webhooks_console=" + value);
  CHECK(console.sessions.authorize_api(req) == webhooks::console::ApiSession::ok);
  req.method = "POST";
  CHECK(console.sessions.authorize_api(req) == webhooks::console::ApiSession::csrf_failed);
  req.headers.emplace("X-CSRF-Token", session.csrf_token);
  CHECK(console.sessions.authorize_api(req) == webhooks::console::ApiSession::ok);
}

TEST_CASE("console sign-in: the 11th wrong token in a minute is 429 with Retry-After") {
  using namespace std::chrono_literals;
  Console console;
  auto client = console.client();
  const auto post = [&](const std::string& token) {
    auto answer =
        client.Post("/console/login", "token=" + token, "application/x-www-form-urlencoded");
    REQUIRE(answer);
    return answer;
  };
  for (int i = 0; i < 10; ++i) {
    CHECK(post("wrong-" + std::to_string(i))->status == 401);
    console.clock.advance(1s);
  }
  const auto refused = post("admin-token");  // the right token too, 10 s into the window
  CHECK(refused->status == 429);
  CHECK(refused->get_header_value("Retry-After") == "50");
  CHECK(refused->has_header("Set-Cookie") == false);
  CHECK(refused->body.find(R"(<p id="login-error" class="error">Too many failed sign-ins from )"
                           R"(this address: try again in 50 s.</p>)") != std::string::npos);
  console.clock.advance(49'001ms);
  CHECK(post("admin-token")->get_header_value("Retry-After") == "1");
  console.clock.advance(999ms);
  CHECK(post("admin-token")->status == 303);
}

TEST_CASE("console behind TLS: the session cookie and its clearing are Secure") {
  Console console(true);
  auto client = console.client();
  const std::string origin = "https://127.0.0.1:" + std::to_string(console.port);
  auto in = client.Post("/console/login", {{"Origin", origin}}, "token=admin-token",
                        "application/x-www-form-urlencoded");
  REQUIRE(in);
  CHECK(in->status == 303);
  const std::string cookie = in->get_header_value("Set-Cookie");
  CHECK(cookie.ends_with("; Path=/; HttpOnly; SameSite=Strict; Secure; Max-Age=43200"));
  const std::string value = cookie.substr(17, cookie.find(';') - 17);
  const std::string csrf = console.sessions.verify(value)->csrf_token;
  auto out =
      client.Post("/console/logout", {{"Origin", origin}, {"Cookie", "webhooks_console=" + value}},
                  "csrf=" + csrf, "application/x-www-form-urlencoded");
  REQUIRE(out);
  CHECK(out->status == 303);
  CHECK(out->get_header_value("Set-Cookie") ==
        "webhooks_console=; Path=/; HttpOnly; SameSite=Strict; Secure; Max-Age=0");
}

TEST_CASE("console sign-in and sign-out posted from another origin are 403") {
  Console console;
  auto client = console.client();
  const std::string own = "http://127.0.0.1:" + std::to_string(console.port);
  const auto sign_in = [&](const httplib::Headers& headers) {
    auto answer = client.Post("/console/login", headers, "token=admin-token",
                              "application/x-www-form-urlencoded");
    REQUIRE(answer);
    return answer;
  };
  const std::string refused_from_evil =
      R"(<p id="login-error" class="error">Refused: this form was posted from )"
      R"(https://evil.example, not from this console ()" +
      own + "). Open the console at " + own + " and sign in there.</p>";
  auto evil = sign_in({{"Origin", "https://evil.example"}});
  CHECK(evil->status == 403);
  CHECK(evil->has_header("Set-Cookie") == false);
  CHECK(evil->body.find(refused_from_evil) != std::string::npos);
  auto by_referer = sign_in({{"Referer", "https://evil.example/login?x=1"}});
  CHECK(by_referer->status == 403);
  CHECK(by_referer->body.find(refused_from_evil) != std::string::npos);
  auto opaque = sign_in({{"Origin", "null"}});
  CHECK(opaque->status == 403);
  CHECK(opaque->body.find("posted from null, not from this console") != std::string::npos);
  auto junk = sign_in({{"Referer", "about:blank"}});
  CHECK(junk->status == 403);
  CHECK(junk->body.find("posted from (unreadable), not from this console") != std::string::npos);
  // The console served over plain HTTP is not the same origin as https:// on the same host.
  CHECK(sign_in({{"Origin", "https://127.0.0.1:" + std::to_string(console.port)}})->status == 403);
  CHECK(sign_in({{"Origin", own}})->status == 303);
  CHECK(sign_in({{"Referer", own + "/console/login"}})->status == 303);
  CHECK(sign_in({})->status == 303);  // no Origin, no Referer: not a browser's cross-site post

  const std::string value = console.sign_in();
  const std::string csrf = console.sessions.verify(value)->csrf_token;
  auto out =
      client.Post("/console/logout",
                  {{"Origin", "https://evil.example"}, {"Cookie", "webhooks_console=" + value}},
                  "csrf=" + csrf, "application/x-www-form-urlencoded");
  REQUIRE(out);
  CHECK(out->status == 403);
  CHECK(out->body ==
        "<!DOCTYPE html><title>Forbidden</title><p id=\"origin-error\">Refused: this form was "
        "posted from https://evil.example, not from this console (" +
            own + "). Open the console at " + own + " and sign in there.</p>");
  CHECK(out->has_header("Set-Cookie") == false);
}
