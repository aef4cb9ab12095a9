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
            "<tr data-state=\"succeeded\"><td>succeeded (last hour's events)</td>"
            "<td class=\"count\">1</td></tr>"));
  CHECK(
      has(overview, "<tr data-state=\"pending\"><td>pending</td><td class=\"count\">0</td></tr>"));
  CHECK(has(overview, "<span id=\"oldest-pending\">none</span>"));
  CHECK(has(overview, "<p class=\"taken-at\">Counted at <span id=\"taken-at\">" +
                          format_rfc3339(c.f.clock.now_ms()) + "</span></p>"));
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

namespace {

int count_of(const std::string& page, const std::string& text) {
  int n = 0;
  for (std::size_t at = page.find(text); at != std::string::npos; at = page.find(text, at + 1)) ++n;
  return n;
}

// The href of a#next-page, unescaped (&amp; -> &), or "".
std::string next_page(const std::string& page) {
  const std::string start = "<a id=\"next-page\" href=\"";
  const std::size_t at = page.find(start);
  if (at == std::string::npos) return "";
  std::string href =
      page.substr(at + start.size(), page.find('"', at + start.size()) - at - start.size());
  for (std::size_t amp = href.find("&amp;"); amp != std::string::npos; amp = href.find("&amp;")) {
    href.replace(amp, 5, "&");
  }
  return href;
}

}  // namespace

TEST_CASE("console: the events page filters, searches and pages with a cursor") {
  Console c("console_paging");
  for (int i = 0; i < 51; ++i) c.f.publish("m_1", "t.a");
  const publisher::Accepted other = c.f.publish("m_2", "t.b");
  c.sign_in();
  const std::string first = c.get("/console/events");
  CHECK(count_of(first, "<tr data-event-id=") == 50);
  CHECK(first.find("<tr data-event-id=\"" + other.event_id + "\">") <
        first.find("<td class=\"type\">t.a"));
  const std::string href = next_page(first);
  REQUIRE(href.starts_with("/console/events?cursor="));
  const std::string second = c.get(href);
  CHECK(count_of(second, "<tr data-event-id=") == 2);
  CHECK(next_page(second).empty());
  const std::string by_type = c.get("/console/events?type=t.b");
  CHECK(count_of(by_type, "<tr data-event-id=") == 1);
  CHECK(has(by_type, "<input name=\"type\" id=\"filter-type\" value=\"t.b\""));
  const std::string by_id = c.get("/console/events?q=" + other.event_id);
  CHECK(count_of(by_id, "<tr data-event-id=\"" + other.event_id + "\">") == 1);
  CHECK(count_of(c.get("/console/events?merchant_id=m_1&type=t.a"), "<tr data-event-id=") == 50);
  CHECK(has(c.get("/console/events?state=dead"), "<p id=\"no-events\">No events match.</p>"));
  auto bad = c.client().Get("/console/events?state=lost", {{"Cookie", c.cookie}});
  REQUIRE(bad);
  CHECK(bad->status == 400);
  CHECK(has(bad->body,
            "<p id=\"filter-error\" class=\"error\">state must be pending, delivering, succeeded "
            "or dead</p>"));
  auto bad_time = c.client().Get("/console/events?since=yesterday", {{"Cookie", c.cookie}});
  CHECK(bad_time->status == 400);
}

TEST_CASE("console: an endpoint's figures, and a disabled one on the overview") {
  Receiver receiver;
  Console c("console_figures");
  const publisher::Endpoint endpoint = c.f.add_endpoint("m_1", receiver.url());
  const publisher::Accepted accepted = c.f.publish("m_1", "order.created");
  REQUIRE(c.f.dispatcher.run_once() == 1);
  const auto attempt = c.f.store.attempts_of_event(accepted.event_id).at(0);
  const publisher::Endpoint off = c.f.add_endpoint("m_2", receiver.url());
  const publisher::Accepted parked = c.f.publish("m_2", "order.created");
  REQUIRE(c.f.store.set_enabled(off.id, false, "410 Gone", c.f.clock.now_ms()));
  c.sign_in();
  const std::string endpoints = c.get("/console/endpoints");
  CHECK(has(endpoints, "<td class=\"success-rate\">100%</td><td class=\"p50\">" +
                           std::to_string(attempt.latency_ms) + " ms</td><td class=\"p99\">" +
                           std::to_string(attempt.latency_ms) +
                           " ms</td><td class=\"last-status\">200</td>"));
  CHECK(has(endpoints,
            "<td class=\"state disabled\">disabled</td><td class=\"reason\">410 Gone</td>"));
  const std::string page = c.get("/console/endpoints/" + off.id);
  CHECK(has(page, "<span id=\"endpoint-state\">disabled</span>"));
  CHECK(has(page, "<span id=\"disabled-reason\">410 Gone</span>"));
  const std::string overview = c.get("/console");
  CHECK(has(overview, "<li data-endpoint-id=\"" + off.id + "\">"));
  CHECK_FALSE(has(overview, "<li data-endpoint-id=\"" + endpoint.id + "\">"));
  CHECK(has(overview, "<text class=\"y-max\" x=\"44\" y=\"24\" text-anchor=\"end\">0.02/s</text>"));
  CHECK(has(overview, "<text class=\"y-max\" x=\"44\" y=\"24\" text-anchor=\"end\">0%</text>"));
  CHECK(has(c.get("/console/events/" + parked.event_id),
            "<td class=\"state\">pending</td><td class=\"parked\">parked (endpoint disabled)</td>"
            "<td class=\"attempts\">0</td>"));
  auto missing = c.client().Get("/console/endpoints/nope", {{"Cookie", c.cookie}});
  CHECK(missing->status == 404);
  CHECK(has(missing->body, "<p id=\"not-found\">No such endpoint.</p>"));
}

}  // namespace webhooks::test

namespace webhooks::test {
namespace {

TEST_CASE("console: the payload is shown as stored: numbers, key order and strings unchanged") {
  Console c("console_payload");
  c.f.add_endpoint("m_1", "http://127.0.0.1:9/hook");
  const publisher::Accepted accepted =
      c.f.publish("m_1", "payout.created",
                  R"({"z":36893488147419103233, "fee":1.50,"e":1E3,"a":[ ],"o":{},"s":"q\"},\\"})");
  c.sign_in();
  const std::string event = c.get("/console/events/" + accepted.event_id);
  CHECK(has(event,
            "<pre id=\"payload\">{\n  &quot;z&quot;: 36893488147419103233,\n  &quot;fee&quot;: "
            "1.50,\n  &quot;e&quot;: 1E3,\n  &quot;a&quot;: [],\n  &quot;o&quot;: {},\n  "
            "&quot;s&quot;: &quot;q\\&quot;},\\\\&quot;\n}</pre>"));
}

TEST_CASE(
    "console: an endpoint's delivery control, a FIFO sequence's skipped and waiting tasks, "
    "trace ids") {
  Receiver receiver(statuses({422, 200}));
  Console c("console_control");
  publisher::Endpoint endpoint = c.f.add_endpoint("m_1", receiver.url());
  endpoint.control.rate_limit = 20;
  endpoint.control.ordering = publisher::Ordering::fifo;
  endpoint.control.headers = {{"X-Api-Key", "k1"}, {"X-Tenant", "t1"}};
  endpoint.control.auth.type = publisher::EndpointAuth::Type::bearer;
  endpoint.control.auth.token = "console-hidden-token";
  REQUIRE(c.f.store.update_endpoint(endpoint, c.f.clock.now_ms()));
  publisher::EventContext context;
  context.ordering_key = "order_1";
  context.traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  const auto first = c.f.ingest.publish("m_1", "order.created", "{}", context);
  const auto second = c.f.ingest.publish("m_1", "order.paid", "{}", context);
  c.sign_in();
  const std::string waiting = c.get("/console/events/" + second.event_id);
  CHECK(has(waiting,
            "<td class=\"parked\">waiting (FIFO: behind an earlier event of its ordering "
            "key)</td>"));
  CHECK(has(waiting, "<span id=\"event-ordering-key\">order_1</span>"));
  // Answered 422, which this fixture retries: make it dead by running out the test schedule.
  for (int i = 0; i < 4; ++i) {
    receiver.set_script(statuses({422}));
    c.f.dispatcher.run_once();
    c.f.advance(std::chrono::seconds(30));
  }
  REQUIRE(c.f.tasks(first.event_id)[0].state == publisher::TaskState::dead);
  const std::string skipped = c.get("/console/events/" + first.event_id);
  CHECK(has(skipped, "<td class=\"parked\">skipped (FIFO: the sequence went on)</td>"));
  CHECK(has(skipped, "<code id=\"event-trace-id\">4bf92f3577b34da6a3ce929d0e0e4736</code>"));
  CHECK(has(skipped, "<td class=\"trace\">4bf92f3577b34da6a3ce929d0e0e4736</td>"));
  CHECK_FALSE(c.f.tasks(second.event_id)[0].waiting);

  const std::string page = c.get("/console/endpoints/" + endpoint.id);
  CHECK(has(page, "<span id=\"rate-limit\">20 per second</span>"));
  CHECK(has(page, "<span id=\"ordering\">fifo (one event at a time per ordering key)</span>"));
  CHECK(has(page, "<span id=\"static-headers\">X-Api-Key, X-Tenant</span>"));
  CHECK(has(page, "<span id=\"auth\">bearer (not shown)</span>"));
  CHECK(has(page, "<span id=\"client-certificate\">none</span>"));
  CHECK_FALSE(has(page, "console-hidden-token"));
}

}  // namespace
}  // namespace webhooks::test
