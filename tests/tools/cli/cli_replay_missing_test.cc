// `webhooks replay --missing`: what it asks the publisher (a stand-in admin API on loopback that
// records the request), what it prints, its exit codes, and its usage errors.
#include <httplib.h>

#include <catch2/catch.hpp>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli_run.h"
#include "webhooks/http_server.h"

using namespace webhooks;
using namespace webhooks::test;

TEST_CASE(
    "replay --missing posts {since} to /v1/endpoints/ID/replay-missing and prints the answer") {
  httplib::Server publisher;
  std::mutex mutex;
  std::vector<std::string> seen;  // "PATH BODY AUTHORIZATION"
  publisher.Post(R"(/v1/endpoints/([^/]+)/replay-missing)", [&](const httplib::Request& req,
                                                                httplib::Response& res) {
    std::lock_guard lock(mutex);
    seen.push_back(req.path + " " + req.body + " " + req.get_header_value("Authorization"));
    if (req.matches[1] == "ep_unknown") {
      res.status = 404;
      res.set_content(R"({"error":{"code":"not_found"}})", "application/json");
      return;
    }
    res.status = 202;
    res.set_content(R"({"endpoint_id":"ep_1","tasks":3})", "application/json");
  });
  const int port = webhooks::http::bind_server(publisher, "127.0.0.1", 0);
  std::thread serving([&] { publisher.listen_after_bind(); });
  const std::string url =
      " --admin-token tok --publisher-url http://127.0.0.1:" + std::to_string(port);
  Run run = cli("replay --missing --endpoint ep_1 --since 2026-01-01T00:00:00Z --json" + url);
  CHECK(run.code == 0);
  CHECK(nlohmann::json::parse(run.out) == nlohmann::json{{"endpoint_id", "ep_1"}, {"tasks", 3}});
  check_cli("replay --missing --endpoint ep_unknown --since 2026-01-01T00:00:00Z" + url, 1,
            "webhooks: the publisher answered 404: {\"error\":{\"code\":\"not_found\"}}\n");
  publisher.stop();
  serving.join();
  CHECK(
      seen ==
      std::vector<std::string>{
          R"(/v1/endpoints/ep_1/replay-missing {"since":"2026-01-01T00:00:00Z"} Bearer tok)",
          R"(/v1/endpoints/ep_unknown/replay-missing {"since":"2026-01-01T00:00:00Z"} Bearer tok)"});
}

TEST_CASE("replay --missing needs --endpoint and --since, and no --event") {
  const std::string expected =
      "webhooks: --missing needs --endpoint ID --since TIME (and no --event)\n";
  for (const char* args :
       {"replay --missing --endpoint ep_1", "replay --missing --since 2026-01-01T00:00:00Z",
        "replay --missing --event ev_1 --endpoint ep_1 --since 2026-01-01T00:00:00Z"}) {
    INFO(args);
    const Run run =
        cli(std::string(args) + " --admin-token tok --publisher-url http://127.0.0.1:1");
    CHECK(run.code == 2);
    CHECK(run.out == expected);
  }
  const Run help = cli("replay --help");
  CHECK(help.code == 0);
  CHECK(help.out.find("--missing") != std::string::npos);
}

TEST_CASE(
    "events passes --state, --until, --q and --cursor on, and prints the next page's cursor") {
  httplib::Server publisher;
  std::mutex mutex;
  std::vector<std::string> seen;
  publisher.Get("/v1/events", [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(mutex);
    std::string query;
    for (const char* name : {"limit", "state", "until", "q", "cursor"}) {
      if (req.has_param(name)) query += std::string(name) + "=" + req.get_param_value(name) + ";";
    }
    seen.push_back(query);
    res.set_content(
        R"({"events":[{"event_id":"ev_2","merchant_id":"m1","type":"t","created_at":"c"}],)"
        R"("next_cursor":"17.ev_2"})",
        "application/json");
  });
  const int port = webhooks::http::bind_server(publisher, "127.0.0.1", 0);
  std::thread serving([&] { publisher.listen_after_bind(); });
  const Run run =
      cli("events --limit 1 --state dead --until 2026-01-01T00:00:00Z --q key-1 --cursor 18.ev_3 "
          "--admin-token tok --publisher-url http://127.0.0.1:" +
          std::to_string(port));
  publisher.stop();
  serving.join();
  CHECK(run.code == 0);
  CHECK(run.out ==
        "event_id  merchant_id  type  created_at  task_states\n"
        "ev_2      m1           t     c           -\n"
        "more: --cursor 17.ev_2\n");
  CHECK(seen == std::vector<std::string>{
                    "limit=1;state=dead;until=2026-01-01T00:00:00Z;q=key-1;cursor=18.ev_3;"});
}
