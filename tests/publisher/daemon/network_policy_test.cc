// The daemon's network policy as a real process on 127.0.0.1 (issue 28): --allow-network opens
// one range (here the loopback the test receiver listens on) at creation and at every connect,
// without --allow-private-networks; an endpoint whose host does not resolve yet is created with a
// warning, its deliveries fail and are retried until the URL is fixed. SQLite and PostgreSQL.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "daemon_client.h"
#include "process.h"
#include "publisher/receiver.h"
#include "support/test_env.h"

namespace webhooks::test {
namespace {

using nlohmann::json;

constexpr const char* kUnresolvable = "http://hooks.shop.invalid/in";  // RFC 6761: never resolves
const std::string kWarning =
    "url host \"hooks.shop.invalid\" does not resolve yet: deliveries fail until it does";

// No --allow-private-networks: only what `extra` allows.
std::vector<std::string> policy_daemon_args(const std::string& db,
                                            std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"--listen", "127.0.0.1:0", "--db", db, "--admin-token", kToken};
  for (const auto& [flag, value] :
       {std::pair{"--retry-schedule", "200ms,200ms,200ms,10s"},
        std::pair{"--poll-interval", "20ms"}, std::pair{"--log-level", "warn"}}) {
    args.insert(args.end(), {flag, value});
  }
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

std::string publish_created(Client& client, const std::string& key) {
  const auto res = client.post(
      "/v1/events", {{"merchant_id", "m1"}, {"type", "order.created"}, {"data", {{"n", 1}}}}, key);
  REQUIRE(res->status == 202);
  return body_of(res)["event_id"];
}

json attempts_of(Client& client, const std::string& event_id) {
  return body_of(client.get("/v1/events/" + event_id + "/attempts"))["attempts"];
}

TEST_CASE("--allow-network 127.0.0.0/8 opens loopback IPv4 only; without it, it is refused",
          "[daemon][network]") {
  const std::string dir = temp_dir("network-allow");
  const std::string db = database_target("network-allow");
  Receiver receiver;
  std::string event_id;
  {
    Daemon daemon(policy_daemon_args(db, {"--allow-network", "127.0.0.0/8"}), dir);
    Client client(daemon.wait_listening());
    const auto created =
        client.post("/v1/endpoints", {{"merchant_id", "m1"}, {"url", receiver.url()}});
    INFO(created->body);
    REQUIRE(created->status == 201);
    CHECK_FALSE(body_of(created).contains("warnings"));
    event_id = publish_created(client, "k1");
    REQUIRE(eventually([&] { return attempts_of(client, event_id).size() == 1; }));
    CHECK(attempts_of(client, event_id)[0]["status"] == 200);
    CHECK(receiver.count() == 1);

    const auto v6 =
        client.post("/v1/endpoints", {{"merchant_id", "m1"}, {"url", "http://[::1]:9/"}});
    CHECK(v6->status == 422);
    CHECK(body_of(v6)["error"] ==
          json{{"code", "url_not_allowed"},
               {"message",
                "URL host ::1 is a loopback address; private networks are not allowed outside "
                "127.0.0.0/8"}});
  }
  // The same database without the flag: creation is refused, and so is the connect of the
  // endpoint created before (the guard on every connect).
  Daemon daemon(policy_daemon_args(db), dir);
  Client client(daemon.wait_listening());
  const auto refused =
      client.post("/v1/endpoints", {{"merchant_id", "m1"}, {"url", receiver.url()}});
  CHECK(refused->status == 422);
  CHECK(body_of(refused)["error"] ==
        json{{"code", "url_not_allowed"},
             {"message",
              "URL host 127.0.0.1 is a loopback address; private networks are not allowed"}});
  // A name that resolves only to refused addresses is refused as before.
  const auto local =
      client.post("/v1/endpoints", {{"merchant_id", "m1"}, {"url", "http://localhost:9/"}});
  CHECK(local->status == 422);
  CHECK(body_of(local)["error"]["message"].get<std::string>().starts_with(
      "host \"localhost\" resolves to "));
  const std::string second = publish_created(client, "k2");
  REQUIRE(eventually([&] { return !attempts_of(client, second).empty(); }));
  const json attempt = attempts_of(client, second)[0];
  CHECK(attempt["status"] == 0);
  CHECK(attempt["error"] ==
        "address_refused: refused to connect to 127.0.0.1, a loopback address; private networks "
        "are not allowed");
  CHECK(receiver.count() == 1);
}

TEST_CASE("a bad --allow-network is a usage error naming the flag and the value",
          "[daemon][network]") {
  const std::string dir = temp_dir("network-bad");
  for (const auto& [value, message] : std::vector<std::pair<std::string, std::string>>{
           {"10.0.0.0/33", "--allow-network: \"10.0.0.0/33\" has a prefix length over 32"},
           {"10.1.2.3/8",
            "--allow-network: \"10.1.2.3/8\" has bits set past its prefix; did you mean "
            "10.0.0.0/8?"},
           {"vpc",
            "--allow-network: \"vpc\" is not a network: expected ADDRESS/LENGTH, e.g. "
            "10.20.0.0/16 or fd00::/8"}}) {
    INFO(value);
    const auto run = launcher::run_to_end("webhooks-publisherd",
                                          {"--db", dir + "/bad.db", "--allow-network", value}, dir);
    CHECK(run.exit_code == 2);
    CHECK(run.err == message + "\nRun with --help for more information.\n");
  }
}

TEST_CASE(
    "an endpoint whose host does not resolve yet is created with a warning; its deliveries fail "
    "and are retried until it does",
    "[daemon][network]") {
  const std::string dir = temp_dir("network-unresolvable");
  Receiver receiver;
  Daemon daemon(policy_daemon_args(database_target("network-unresolvable"),
                                   {"--allow-network", "127.0.0.0/8"}),
                dir);
  const int port = daemon.wait_listening();
  Client client(port);

  const auto created =
      client.post("/v1/endpoints", {{"merchant_id", "m1"}, {"url", kUnresolvable}});
  REQUIRE(created->status == 201);
  const json endpoint = body_of(created);
  CHECK(endpoint["warnings"] == json::array({kWarning}));
  CHECK(endpoint["url"] == kUnresolvable);
  const std::string id = endpoint["id"];
  CHECK(body_of(client.get("/v1/endpoints/" + id)).contains("warnings") == false);
  // The log line (queued, written by the logging thread).
  const std::string start =
      "{\"endpoint_id\":\"" + id + "\",\"event\":\"endpoint_url_unresolvable\"";
  REQUIRE(eventually([&] { return daemon.err().find(start) != std::string::npos; }));
  const std::string err = daemon.err();
  const std::size_t at = err.find(start);
  const json line = json::parse(err.substr(at, err.find('\n', at) - at));
  CHECK(line["event"] == "endpoint_url_unresolvable");
  CHECK(line["warning"] == kWarning);
  CHECK(line["level"] == "warning");

  // Delivery: each attempt fails with the resolver's error and is retried on the schedule.
  const std::string event_id = publish_created(client, "k1");
  REQUIRE(eventually([&] { return attempts_of(client, event_id).size() >= 2; }));
  for (const json& attempt : attempts_of(client, event_id)) {
    CHECK(attempt["status"] == 0);
    CHECK(attempt["error"] == "connect: Could not resolve host: hooks.shop.invalid");
  }
  const json event = body_of(client.get("/v1/events/" + event_id));
  CHECK(event["tasks"][0]["state"] != "dead");

  // The URL fixed (PATCH answers without warnings): the next retry is delivered.
  const auto patched = client.http.Patch(("/v1/endpoints/" + id).c_str(),
                                         {{"Authorization", std::string("Bearer ") + kToken}},
                                         json{{"url", receiver.url()}}.dump(), "application/json");
  REQUIRE(patched->status == 200);
  CHECK_FALSE(body_of(patched).contains("warnings"));
  REQUIRE(eventually([&] { return receiver.count() == 1; }));

  // PATCH to a name that does not resolve: 200 with the warning.
  const auto back = client.http.Patch(("/v1/endpoints/" + id).c_str(),
                                      {{"Authorization", std::string("Bearer ") + kToken}},
                                      json{{"url", kUnresolvable}}.dump(), "application/json");
  REQUIRE(back->status == 200);
  CHECK(body_of(back)["warnings"] == json::array({kWarning}));

  // webhooks endpoint create prints the answer (--json: the API's), and the warning on stderr.
  const auto cli = launcher::run_to_end(
      "webhooks",
      {"endpoint", "create", "--json", "--merchant", "m2", "--url", kUnresolvable,
       "--publisher-url", "http://127.0.0.1:" + std::to_string(port), "--admin-token", kToken},
      dir);
  CHECK(cli.exit_code == 0);
  CHECK(cli.err == "webhooks: warning: " + kWarning + "\n");
  CHECK(json::parse(cli.out)["warnings"] == json::array({kWarning}));
}

}  // namespace
}  // namespace webhooks::test
