// The publisher console (docs/console.md) over real HTTP on 127.0.0.1: an in-process Publisher
// (fixture.h) mounted on a webhooks::http::Server, signed in with the admin token; events
// delivered to a real receiver; the engine under test.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <thread>

#include "fixture.h"
#include "receiver.h"
#include "webhooks/http_server.h"
#include "webhooks/rfc3339.h"

namespace webhooks::test {
namespace {

constexpr const char* kToken = "console-token";
const std::string kForm = "application/x-www-form-urlencoded";

struct Console {
  explicit Console(const std::string& label)
      : f(label, [](publisher::Options& o) { o.admin_token = kToken; }) {
    f.publisher->mount(server);
    port = http::bind_server(server, "127.0.0.1", 0);
    thread = std::thread([this] { server.listen_after_bind(); });
  }
  ~Console() {
    http::stop_server(server, port);
    thread.join();
  }
  httplib::Client client() const { return httplib::Client("127.0.0.1", port); }
  // Signs in; keeps the cookie and the CSRF token of the overview page.
  void sign_in() {
    auto answer = client().Post("/console/login", std::string("token=") + kToken, kForm);
    REQUIRE(answer);
    REQUIRE(answer->status == 303);
    const std::string set = answer->get_header_value("Set-Cookie");
    cookie = set.substr(0, set.find(';'));
    const std::string page = get("/console");
    const std::string meta = "<meta name=\"csrf-token\" content=\"";
    const std::size_t at = page.find(meta);
    REQUIRE(at != std::string::npos);
    csrf = page.substr(at + meta.size(), 64);
  }
  // A page's body, REQUIRE-ing 200.
  std::string get(const std::string& path) const {
    auto answer = client().Get(path.c_str(), {{"Cookie", cookie}});
    REQUIRE(answer);
    INFO(path << " -> " << answer->status << " " << answer->body);
    REQUIRE(answer->status == 200);
    CHECK(answer->get_header_value("Content-Type") == "text/html; charset=utf-8");
    return answer->body;
  }

  PublisherFixture f;
  http::Server server;
  int port = 0;
  std::thread thread;
  std::string cookie, csrf;
};

bool has(const std::string& page, const std::string& text) {
  return page.find(text) != std::string::npos;
}

}  // namespace

TEST_CASE("console: signing in takes the admin token; without a session every page redirects") {
  Console c("console_sign_in");
  auto client = c.client();
  for (const char* path : {"/console", "/console/endpoints", "/console/endpoints/e1",
                           "/console/events", "/console/events/x", "/"}) {
    auto answer = client.Get(path);
    REQUIRE(answer);
    CHECK(answer->status == 303);
    CHECK(answer->get_header_value("Location") ==
          (std::string(path) == "/" ? "/console" : "/console/login"));
  }
  auto wrong = client.Post("/console/login", "token=console-tokem", kForm);
  REQUIRE(wrong);
  CHECK(wrong->status == 401);
  CHECK(has(wrong->body, "<p id=\"login-error\""));
  CHECK_FALSE(wrong->has_header("Set-Cookie"));
  c.sign_in();
  CHECK(c.cookie.starts_with("webhooks_console="));
  const std::string overview = c.get("/console");
  CHECK(has(overview, "<a id=\"nav-events\" href=\"/console/events\">Events</a>"));
  CHECK(has(overview, "<button id=\"sign-out\" type=\"submit\">Sign out</button>"));
  auto api = client.Get("/v1/endpoints", {{"Cookie", c.cookie}});
  REQUIRE(api);
  CHECK(api->status == 200);
  auto forged = client.Get("/v1/endpoints", {{"Cookie", c.cookie + "0"}});
  CHECK(forged->status == 401);
}

TEST_CASE("console: each page shows a delivered event, its endpoint and its attempt") {
  Receiver receiver;
  Console c("console_pages");
  const publisher::Endpoint endpoint = c.f.add_endpoint("m_1", receiver.url());
  const publisher::Accepted accepted =
      c.f.publish("m_1", "order.created", R"({"amount":100,"items":[1,2]})");
  REQUIRE(c.f.dispatcher.run_once() == 1);
  const auto attempts = c.f.store.attempts_of_event(accepted.event_id);
  REQUIRE(attempts.size() == 1);
  c.sign_in();
  const std::string overview = c.get("/console");
  CHECK(has(overview, "<svg id=\"chart-deliveries\""));
  CHECK(has(overview, "<svg id=\"chart-failures\""));
  CHECK(has(overview,
            "<tr data-state=\"succeeded\"><td>succeeded</td><td class=\"count\">1</td></tr>"));
  CHECK(
      has(overview, "<tr data-state=\"pending\"><td>pending</td><td class=\"count\">0</td></tr>"));
  CHECK(has(overview, "<span id=\"oldest-pending\">none</span>"));
  const std::string endpoints = c.get("/console/endpoints");
  const std::string row = "<tr data-endpoint-id=\"" + endpoint.id + "\">";
  REQUIRE(has(endpoints, row));
  CHECK(has(endpoints, "<td class=\"merchant\">m_1</td><td class=\"url\">" + receiver.url() +
                           "</td><td class=\"filters\">*</td><td class=\"state\">enabled</td>"));
  const std::string page = c.get("/console/endpoints/" + endpoint.id);
  CHECK(has(page, "<span id=\"endpoint-state\">enabled</span>"));
  for (const char* action :
       {"enable", "disable", "rotate-secret", "send-test", "recover", "replay-missing"}) {
    CHECK(has(page, std::string("data-action=\"") + action + "\""));
  }
  const std::string events = c.get("/console/events");
  CHECK(has(events, "<tr data-event-id=\"" + accepted.event_id + "\">"));
  CHECK(has(events, "<td class=\"type\">order.created</td><td class=\"merchant\">m_1</td>"));
  CHECK(has(events, "<td class=\"states\">succeeded: 1</td>"));
  const std::string event = c.get("/console/events/" + accepted.event_id);
  CHECK(has(event, "<span id=\"event-type\">order.created</span>"));
  CHECK(has(event,
            "<pre id=\"payload\">{\n  &quot;amount&quot;: 100,\n  &quot;items&quot;: [\n    1,\n   "
            " 2\n  ]\n}</pre>"));
  CHECK(has(event, "<tr data-delivery-id=\"" + attempts[0].delivery_id + "\">"));
  CHECK(has(event, "<td class=\"trigger\">scheduled</td><td class=\"started\">" +
                       format_rfc3339(attempts[0].started_at) +
                       "</td><td class=\"status\">200</td>"));
  CHECK(has(event,
            "data-action=\"replay\" data-url=\"/v1/events/" + accepted.event_id + "/replay\""));
}

TEST_CASE("console: a type and payload holding <script> and quotes render as text") {
  Console c("console_escaping");
  const std::string type = R"(<script>alert("x")</script>)";
  const publisher::Accepted accepted =
      c.f.publish("m_'1'", type, R"({"html":"<script>alert('y')</script>\""})");
  c.sign_in();
  const std::string event = c.get("/console/events/" + accepted.event_id);
  CHECK(has(event,
            "<span id=\"event-type\">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;</span>"));
  CHECK(has(event, "<span id=\"event-merchant\">m_&#39;1&#39;</span>"));
  CHECK(
      has(event,
          "&quot;html&quot;: &quot;&lt;script&gt;alert(&#39;y&#39;)&lt;/script&gt;\\&quot;&quot;"));
  CHECK_FALSE(has(event, "<script>alert"));
  const std::string events = c.get("/console/events");
  CHECK(has(events, "<td class=\"type\">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;</td>"));
  CHECK_FALSE(has(events, "<script>alert"));
}

TEST_CASE("console: a cookie-authenticated change needs the session's X-CSRF-Token") {
  Receiver receiver;
  Console c("console_csrf");
  c.f.add_endpoint("m_1", receiver.url());
  const publisher::Accepted accepted = c.f.publish("m_1", "order.created");
  c.sign_in();
  auto client = c.client();
  const std::string path = "/v1/events/" + accepted.event_id + "/replay";
  auto without = client.Post(path.c_str(), {{"Cookie", c.cookie}}, "{}", "application/json");
  REQUIRE(without);
  CHECK(without->status == 403);
  CHECK(nlohmann::json::parse(without->body)["error"]["code"] == "csrf_failed");
  auto wrong =
      client.Post(path.c_str(), {{"Cookie", c.cookie}, {"X-CSRF-Token", std::string(64, 'a')}},
                  "{}", "application/json");
  CHECK(wrong->status == 403);
  auto with = client.Post(path.c_str(), {{"Cookie", c.cookie}, {"X-CSRF-Token", c.csrf}}, "{}",
                          "application/json");
  REQUIRE(with);
  CHECK(with->status == 202);
  auto anonymous = client.Post(path.c_str(), httplib::Headers{}, "{}", "application/json");
  CHECK(anonymous->status == 401);
  auto out = client.Post("/console/logout", {{"Cookie", c.cookie}}, "csrf=" + c.csrf, kForm);
  REQUIRE(out);
  CHECK(out->status == 303);
  CHECK(out->get_header_value("Location") == "/console/login");
}

}  // namespace webhooks::test
