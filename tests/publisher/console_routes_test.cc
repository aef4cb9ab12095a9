// The console's admin routes over real HTTP on loopback (a Publisher with a fake clock mounted on
// a server), with their errors: GET /v1/events's paging and filters, POST
// /v1/endpoints/{id}/replay-missing, GET /v1/endpoints/{id}/stats, GET /v1/overview.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "console_support.h"

namespace webhooks::test {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

std::vector<std::string> ids_of(const json& answer) {
  std::vector<std::string> ids;
  for (const auto& e : answer.at("events")) ids.push_back(e.at("event_id").get<std::string>());
  return ids;
}

TEST_CASE("GET /v1/events pages by cursor, filters, searches keys; bad parameters are 400",
          "[console]") {
  ServedFixture s("console_routes_events");
  s.f.add_endpoint("m1", "http://127.0.0.1:9/a");
  const std::string e1 = ingest_with_key(s.f, "m1", "order.created", "key-1");
  s.f.advance(1s);
  const std::string e2 = s.f.publish("m1", "order.paid").event_id;
  s.f.advance(1s);
  const std::string e3 = s.f.publish("m2", "order.paid").event_id;

  auto [status, page] = s.call("GET", "/v1/events?limit=2");
  CHECK(status == 200);
  CHECK(ids_of(page) == std::vector<std::string>{e3, e2});
  CHECK(page.at("events")[1].at("task_states") == json{{"pending", 1}});
  CHECK(page.at("events")[0].at("task_states") == json::object());
  CHECK(page.at("events")[0].at("idempotency_key").is_null());
  const std::string cursor = page.at("next_cursor").get<std::string>();
  std::tie(status, page) = s.call("GET", "/v1/events?limit=2&cursor=" + cursor);
  CHECK(ids_of(page) == std::vector<std::string>{e1});
  CHECK(page.at("next_cursor").is_null());
  CHECK(page.at("events")[0].at("idempotency_key") == "key-1");

  CHECK(ids_of(s.call("GET", "/v1/events?q=key-1").second) == std::vector<std::string>{e1});
  CHECK(ids_of(s.call("GET", "/v1/events?q=" + e2).second) == std::vector<std::string>{e2});
  CHECK(ids_of(s.call("GET", "/v1/events?state=pending&merchant_id=m1").second) ==
        std::vector<std::string>{e2, e1});
  CHECK(ids_of(s.call("GET", "/v1/events?since=2023-11-14T22:13:21Z&until=2023-11-14T22:13:22Z")
                   .second) == std::vector<std::string>{e2});

  for (const char* bad :
       {"state=lost", "until=yesterday", "since=soon", "cursor=nope", "limit=0"}) {
    const auto [code, error] = s.call("GET", std::string("/v1/events?") + bad);
    CHECK(code == 400);
    CHECK(error.at("error").at("code") == "invalid_request");
  }
}

TEST_CASE("POST /v1/endpoints/{id}/replay-missing: 202 with the count; 400, 404, 422",
          "[console]") {
  ServedFixture s("console_routes_replay");
  const std::string before = s.f.publish("m1", "order.created").event_id;
  const auto e = s.f.add_endpoint("m1", "http://127.0.0.1:9/a");
  const std::string path = "/v1/endpoints/" + e.id + "/replay-missing";
  s.f.advance(24h);
  const json since{{"since", "2023-11-14T22:13:20Z"}};  // the fixture clock's start
  auto [status, body] = s.call("POST", path, since.dump());
  CHECK(status == 202);
  CHECK(body == json{{"endpoint_id", e.id}, {"tasks", 1}});
  CHECK(s.f.tasks(before).size() == 1);
  CHECK(s.call("POST", path, since.dump()).second.at("tasks") == 0);

  CHECK(s.call("POST", "/v1/endpoints/nope/replay-missing", since.dump()).first == 404);
  const auto [bad_json, e1] = s.call("POST", path, "{");
  CHECK(bad_json == 400);
  CHECK(e1.at("error").at("code") == "invalid_json");
  for (const char* body_text : {R"({})", R"({"since":"yesterday"})", R"({"since":5})"}) {
    const auto [code, error] = s.call("POST", path, body_text);
    CHECK(code == 400);
    CHECK(error.at("error").at("code") == "invalid_request");
  }
  // Past --replay-max-age (7 days by default): refused.
  const auto [old_code, old] = s.call("POST", path, R"({"since":"2023-11-01T00:00:00Z"})");
  CHECK(old_code == 422);
  CHECK(old.at("error").at("code") == "replay_too_old");
}

TEST_CASE("GET /v1/endpoints/{id}/stats and GET /v1/overview", "[console]") {
  ServedFixture s("console_routes_stats");
  const auto e = s.f.add_endpoint("m1", "http://127.0.0.1:9/a");
  s.f.publish("m1", "order.created");
  const UnixMillis t0 = s.f.clock.now_ms();
  attempt_once(s.f, 500, 40, t0);
  attempt_once(s.f, 200, 20, t0 + 1);

  auto [status, stats] = s.call("GET", "/v1/endpoints/" + e.id + "/stats");
  CHECK(status == 200);
  CHECK(stats == json{{"endpoint_id", e.id},
                      {"window", 100},
                      {"attempts", 2},
                      {"succeeded", 1},
                      {"success_rate", 0.5},
                      {"p50_ms", 20},
                      {"p99_ms", 40},
                      {"last_status", 200},
                      {"last_attempt_at", "2023-11-14T22:13:20.001Z"}});
  CHECK(s.call("GET", "/v1/endpoints/nope/stats").first == 404);

  s.f.advance(90s);
  auto [code, overview] = s.call("GET", "/v1/overview");
  CHECK(code == 200);
  CHECK(overview.at("now") == "2023-11-14T22:14:50.000Z");
  CHECK(overview.at("taken_at") == "2023-11-14T22:14:50.000Z");  // a small queue: counted now
  REQUIRE(overview.at("minutes").size() == 60);
  CHECK(overview.at("minutes")[58] ==
        json{{"start", "2023-11-14T22:13:00.000Z"}, {"attempts", 2}, {"failures", 1}});
  CHECK(overview.at("minutes")[59] ==
        json{{"start", "2023-11-14T22:14:00.000Z"}, {"attempts", 0}, {"failures", 0}});
  CHECK(overview.at("tasks") ==
        json{{"pending", 1}, {"delivering", 0}, {"succeeded", 0}, {"dead", 0}});
  CHECK(overview.at("succeeded_since") == "2023-11-14T21:15:00.000Z");
  CHECK(overview.at("oldest_pending_since") == "2023-11-14T22:13:20.000Z");
  CHECK(overview.at("oldest_pending_age_ms") == 90'000);
  CHECK(overview.at("attention") == json::array());
}

TEST_CASE("the admin API's bearer check: the 11th failure in a minute is 429 with Retry-After",
          "[console]") {
  ServedFixture s("console_routes_throttle");
  httplib::Client client("127.0.0.1", s.port);
  const auto get = [&](const std::string& token) {
    auto res = client.Get("/v1/endpoints", httplib::Headers{{"Authorization", "Bearer " + token}});
    REQUIRE(res);
    return res;
  };
  for (int i = 0; i < 10; ++i) {
    const auto wrong = get("wrong-" + std::to_string(i));
    CHECK(wrong->status == 401);
    CHECK(json::parse(wrong->body).at("error").at("code") == "unauthorized");
    s.f.advance(2s);
  }
  const auto refused = get(kToken);  // the right token too, 20 s into the window
  CHECK(refused->status == 429);
  CHECK(refused->get_header_value("Retry-After") == "40");
  CHECK(
      json::parse(refused->body) ==
      json{{"error",
            {{"code", "too_many_failures"},
             {"message", "too many failed authentications from this address: retry after 40 s"}}}});
  CHECK(client.Get("/healthz")->status == 200);  // the open routes stay open
  s.f.advance(40s);
  CHECK(get(kToken)->status == 200);
}

TEST_CASE("console sign-out revokes the session: a copy of the cookie is 401 on the API",
          "[console]") {
  ServedFixture s("console_routes_sign_out");
  httplib::Client client("127.0.0.1", s.port);
  auto in = client.Post("/console/login", std::string("token=") + kToken,
                        "application/x-www-form-urlencoded");
  REQUIRE(in);
  REQUIRE(in->status == 303);
  const std::string set = in->get_header_value("Set-Cookie");
  const httplib::Headers cookie{{"Cookie", set.substr(0, set.find(';'))}};
  CHECK(client.Get("/v1/endpoints", cookie)->status == 200);
  const std::string page = client.Get("/console", cookie)->body;
  const std::string tag = R"(<meta name="csrf-token" content=")";
  const std::size_t at = page.find(tag) + tag.size();
  const std::string csrf = page.substr(at, page.find('"', at) - at);
  auto out =
      client.Post("/console/logout", cookie, "csrf=" + csrf, "application/x-www-form-urlencoded");
  REQUIRE(out);
  CHECK(out->status == 303);
  const auto copied = client.Get("/v1/endpoints", cookie);  // the cookie kept by someone
  CHECK(copied->status == 401);
  CHECK(json::parse(copied->body).at("error").at("code") == "unauthorized");
  const auto page_again = client.Get("/console", cookie);
  CHECK(page_again->status == 303);
  CHECK(page_again->get_header_value("Location") == "/console/login");
  CHECK(s.f.db.exec("SELECT COUNT(*) FROM publisher_revoked_sessions").integer(0, 0) == 1);
}

TEST_CASE("a viewer's token and session only read: 403 forbidden on a change, no action buttons",
          "[console]") {
  using publisher::Role;
  ServedFixture s("console_routes_viewer",
                  {{"alice", "alice-token", Role::admin}, {"ops", "ops-token", Role::viewer}});
  const std::string id = s.f.add_endpoint("m1", "http://127.0.0.1:9/a").id;
  httplib::Client client("127.0.0.1", s.port);
  const auto bearer = [](const std::string& token) {
    return httplib::Headers{{"Authorization", "Bearer " + token}};
  };
  const json forbidden = {
      {"error",
       {{"code", "forbidden"}, {"message", "the viewer token ops may only read (GET and HEAD)"}}}};
  CHECK(client.Get("/v1/endpoints", bearer("ops-token"))->status == 200);
  const auto refused = client.Post("/v1/endpoints/" + id + "/disable", bearer("ops-token"), "{}",
                                   "application/json");
  REQUIRE(refused);
  CHECK(refused->status == 403);
  CHECK(json::parse(refused->body) == forbidden);
  CHECK(
      client
          .Post("/v1/endpoints/" + id + "/disable", bearer("alice-token"), "{}", "application/json")
          ->status == 200);

  // Signed in to the console: the session remembers the name (hex "ops") and so the role.
  const auto signed_in = [&](const std::string& token) {
    auto in = client.Post("/console/login", "token=" + token, "application/x-www-form-urlencoded");
    REQUIRE(in);
    REQUIRE(in->status == 303);
    const std::string set = in->get_header_value("Set-Cookie");
    return set.substr(0, set.find(';'));
  };
  const std::string viewer = signed_in("ops-token");
  CHECK(viewer.find("." + std::string("6f7073") + ".") != std::string::npos);
  const auto page = client.Get("/console/endpoints/" + id, {{"Cookie", viewer}});
  CHECK(page->status == 200);
  CHECK(page->body.find("data-action") == std::string::npos);
  const std::string tag = R"(<meta name="csrf-token" content=")";
  const std::size_t at = page->body.find(tag) + tag.size();
  const std::string csrf = page->body.substr(at, page->body.find('"', at) - at);
  const auto by_cookie =
      client.Post("/v1/endpoints/" + id + "/enable", {{"Cookie", viewer}, {"X-CSRF-Token", csrf}},
                  "{}", "application/json");
  CHECK(by_cookie->status == 403);
  CHECK(json::parse(by_cookie->body) == forbidden);
  const std::string admin = signed_in("alice-token");
  CHECK(admin.find("." + std::string("616c696365") + ".") != std::string::npos);  // "alice"
  const auto admin_page = client.Get("/console/endpoints/" + id, {{"Cookie", admin}});
  CHECK(admin_page->body.find(R"(data-action="enable")") != std::string::npos);
}

}  // namespace
}  // namespace webhooks::test
