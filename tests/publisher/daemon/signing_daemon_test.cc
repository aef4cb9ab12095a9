// webhooks-publisherd signing with Ed25519 ("signing": "v1a" and "both") and delivering to
// merchant-receiver --public-key as real processes; rotation with and without a grace period; the
// admin API's answers and errors for signing. SQLite and PostgreSQL.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "daemon_client.h"
#include "process.h"
#include "support/test_env.h"

namespace webhooks::test {
namespace {

using nlohmann::json;

std::vector<std::string> args(const std::string& db) {
  return publisherd_args(db, {"--retry-schedule", "200ms,200ms,1s", "--timeout", "2s"});
}

// merchant-receiver with `keys` (flag, value pairs) on its own SQLite file; its /webhooks URL.
struct Merchant {
  Merchant(const std::string& dir, const std::string& name, std::vector<std::string> keys)
      : process("merchant-receiver",
                with(keys, {"--listen", "127.0.0.1:0", "--db", dir + "/" + name + ".db",
                            "--consumer", name}),
                dir),
        port(process.wait_listening()),
        url("http://127.0.0.1:" + std::to_string(port) + "/webhooks") {}
  static std::vector<std::string> with(std::vector<std::string> a, std::vector<std::string> b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  }
  // The handled event ids, from GET /handled.
  bool handled(const std::string& event_id) {
    httplib::Client c("127.0.0.1", port);
    const auto res = c.Get("/handled");
    return res && res->body.find("\"" + event_id + "\"") != std::string::npos;
  }
  launcher::ChildProcess process;
  int port;
  std::string url;
};

std::string publish(Client& client, const std::string& key) {
  auto accepted = client.post(
      "/v1/events", {{"merchant_id", "m1"}, {"type", "order.created"}, {"data", {{"a", 1}}}}, key);
  REQUIRE(accepted->status == 202);
  return json::parse(accepted->body)["event_id"];
}

std::string task_state(Client& client, const std::string& event_id) {
  const auto event = client.get("/v1/events/" + event_id);
  REQUIRE(event->status == 200);
  return json::parse(event->body)["tasks"][0]["state"];
}

json patch_url(Client& client, const std::string& id, const std::string& url) {
  auto res = client.http.Patch(("/v1/endpoints/" + id).c_str(),
                               {{"Authorization", std::string("Bearer ") + kToken}},
                               json{{"url", url}}.dump(), "application/json");
  REQUIRE(res->status == 200);
  return json::parse(res->body);
}

// The admin API's refusals for signing: exact codes and messages.
void check_refusals(Client& client) {
  const auto refused = [&](const json& extra, const std::string& code, const std::string& msg) {
    json body = {{"merchant_id", "m1"}, {"url", "http://127.0.0.1:9/hook"}};
    body.update(extra);
    auto res = client.post("/v1/endpoints", body);
    CHECK(res->status == 400);
    CHECK(error_code(res) == code);
    CHECK(json::parse(res->body)["error"]["message"] == msg);
  };
  refused({{"signing", "v2"}}, "invalid_request", R"(signing must be "v1", "v1a" or "both")");
  refused({{"signing", 1}}, "invalid_request", R"(signing must be "v1", "v1a" or "both")");
  refused({{"signing", "v1a"}, {"secret", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}},
          "invalid_request", R"(secret does not apply to signing "v1a")");
  refused({{"signing_key", "whsk_nWGxne/9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A="}}, "invalid_request",
          R"(signing_key does not apply to signing "v1")");
  refused(
      {{"signing", "v1a"}, {"signing_key", "whpk_11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="}},
      "invalid_key", "Ed25519 signing key must start with 'whsk_'");
}

// A v1a endpoint: its answer shows the whpk_ public key, no secret and never the whsk_ key.
json create_v1a(Client& client) {
  auto created =
      client.post("/v1/endpoints",
                  {{"merchant_id", "m1"}, {"url", "http://127.0.0.1:9/hook"}, {"signing", "v1a"}});
  REQUIRE(created->status == 201);
  CHECK(created->body.find("whsk_") == std::string::npos);
  const json endpoint = json::parse(created->body);
  const std::string id = endpoint["id"], pk1 = endpoint["public_key"];
  CHECK(pk1.rfind("whpk_", 0) == 0);
  CHECK_FALSE(endpoint.contains("secret"));
  CHECK(endpoint["signing"] == "v1a");
  CHECK(endpoint["secrets"][0]["scheme"] == "v1a");
  CHECK(endpoint["secrets"][0]["public_key"] == pk1);
  const auto fetched = client.get("/v1/endpoints/" + id);
  CHECK(fetched->body.find("whsk_") == std::string::npos);
  CHECK(json::parse(fetched->body)["secrets"] == endpoint["secrets"]);
  return endpoint;
}

TEST_CASE(
    "a v1a endpoint delivers to merchant-receiver --public-key; rotation keeps the old key "
    "through the grace, and both carries a v1 entry",
    "[daemon][signing]") {
  const std::string dir = temp_dir("publisherd-signing");
  Daemon daemon(args(database_target("signing")), dir);
  Client client(daemon.wait_listening());
  check_refusals(client);

  const json endpoint = create_v1a(client);
  const std::string id = endpoint["id"], pk1 = endpoint["public_key"];

  Merchant a(dir, "a", {"--public-key", pk1});
  patch_url(client, id, a.url);
  const std::string e1 = publish(client, "k1");
  REQUIRE(eventually([&] { return a.handled(e1); }));

  auto rotated = client.post("/v1/endpoints/" + id + "/rotate-secret",
                             {{"signing", "both"}, {"grace_seconds", 3600}});
  REQUIRE(rotated->status == 200);
  CHECK(rotated->body.find("whsk_") == std::string::npos);
  const json r2 = json::parse(rotated->body);
  CHECK(r2["signing"] == "both");
  CHECK(r2["secret"].get<std::string>().rfind("whsec_", 0) == 0);
  CHECK(r2["public_key"] != pk1);
  const std::string e2 = publish(client, "k2");  // the old key still signs: a still accepts
  REQUIRE(eventually([&] { return a.handled(e2); }));

  // No grace: keeps "both" (the endpoint's scheme), and pk1 stops signing at once.
  auto again = client.post("/v1/endpoints/" + id + "/rotate-secret", {{"grace_seconds", 0}});
  REQUIRE(again->status == 200);
  const json r3 = json::parse(again->body);
  CHECK(r3["signing"] == "both");
  const std::string e3 = publish(client, "k3");
  REQUIRE(eventually([&] { return task_state(client, e3) == "dead"; }));  // 4 attempts, 401 each
  const json attempts = json::parse(client.get("/v1/events/" + e3 + "/attempts")->body);
  REQUIRE(attempts["attempts"].size() == 4);
  for (const json& attempt : attempts["attempts"]) CHECK(attempt["status"] == 401);
  CHECK_FALSE(a.handled(e3));
  // The v1 entry of "both": a receiver holding only the new secret accepts the replay.
  Merchant b(dir, "b", {"--secret", r3["secret"]});
  patch_url(client, id, b.url);
  REQUIRE(client.post("/v1/events/" + e3 + "/replay", json::object())->status == 202);
  REQUIRE(eventually([&] { return b.handled(e3) && task_state(client, e3) == "succeeded"; }));
  Merchant c(dir, "c", {"--public-key", r3["public_key"]});
  patch_url(client, id, c.url);
  REQUIRE(client.post("/v1/events/" + e3 + "/replay", json::object())->status == 202);
  REQUIRE(eventually([&] { return c.handled(e3); }));
}

TEST_CASE("webhooks endpoint create --signing v1a and rotate --signing both", "[daemon][signing]") {
  const std::string dir = temp_dir("publisherd-signing-cli");
  Daemon daemon(args(database_target("signing_cli")), dir);
  const std::string url = "http://127.0.0.1:" + std::to_string(daemon.wait_listening());
  const PublisherCli cli{url, kToken, dir, {"--json"}};
  auto created = cli({"endpoint", "create", "--merchant", "m1", "--url", "http://127.0.0.1:9/h",
                      "--signing", "v1a"});
  REQUIRE(created.exit_code == 0);
  CHECK(created.out.find("whsk_") == std::string::npos);
  const json endpoint = json::parse(created.out);
  CHECK(endpoint["signing"] == "v1a");
  CHECK(endpoint["public_key"].get<std::string>().rfind("whpk_", 0) == 0);
  auto rotated = cli(
      {"endpoint", "rotate", "--endpoint", endpoint["id"], "--signing", "both", "--grace", "1m"});
  REQUIRE(rotated.exit_code == 0);
  const json answer = json::parse(rotated.out);
  CHECK(answer["signing"] == "both");
  CHECK(answer["secret"].get<std::string>().rfind("whsec_", 0) == 0);
  CHECK(answer["public_key"] != endpoint["public_key"]);
  auto plain = cli({"endpoint", "create", "--merchant", "m1", "--url", "http://127.0.0.1:9/h"});
  REQUIRE(plain.exit_code == 0);
  const json v1 = json::parse(plain.out);  // the default, as before: v1 with its secret
  CHECK(v1["signing"] == "v1");
  CHECK(v1["secret"].get<std::string>().rfind("whsec_", 0) == 0);
  CHECK_FALSE(v1.contains("public_key"));
  CHECK(
      v1["secrets"] ==
      json::array({{{"scheme", "v1"}, {"created_at", v1["created_at"]}, {"expires_at", nullptr}}}));
  auto bad = cli({"endpoint", "create", "--merchant", "m1", "--url", "http://127.0.0.1:9/h",
                  "--signing", "v2"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("v2 not in {v1,v1a,both}") != std::string::npos);
  auto missing = cli({"endpoint", "rotate", "--endpoint", "nope"});
  CHECK(missing.exit_code == 1);
  CHECK(missing.err.find("the publisher answered 404") != std::string::npos);
}

}  // namespace
}  // namespace webhooks::test
