// webhooks-publisherd as a real process: the admin API over HTTP, SIGTERM, and a SIGKILL during a
// load followed by a restart on the same database. Runs on SQLite and PostgreSQL.
#include <signal.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "daemon_client.h"
#include "process.h"
#include "publisher/receiver.h"
#include "support/chunked_post.h"
#include "support/legacy_schema.h"
#include "support/test_env.h"

namespace webhooks::test {
namespace {

using nlohmann::json;

std::vector<std::string> daemon_args(const std::string& db, std::vector<std::string> extra = {}) {
  extra.insert(extra.begin(), {"--retry-schedule", "200ms,200ms,1s", "--timeout", "2s"});
  extra.insert(extra.end(), {"--delivery-lease", "3s", "--batch-size", "8"});
  return publisherd_args(db, std::move(extra));
}

// The admin API's endpoints: 401 with a wrong token, create (with its secret once), get, 404.
std::string check_endpoints(Client& client, const Receiver& receiver, json& endpoint) {
  CHECK(client.http.Get("/healthz")->status == 200);
  auto denied = client.post("/v1/endpoints", json::object(), "", "wrong");
  CHECK(denied->status == 401);
  CHECK(error_code(denied) == "unauthorized");

  auto created = client.post("/v1/endpoints", {{"merchant_id", "m1"}, {"url", receiver.url()}});
  REQUIRE(created->status == 201);
  endpoint = json::parse(created->body);
  CHECK(endpoint["secret"].get<std::string>().rfind("whsec_", 0) == 0);
  const std::string endpoint_id = endpoint["id"];
  CHECK(client.get("/v1/endpoints/" + endpoint_id)->body.find("whsec_") == std::string::npos);
  CHECK(client.get("/v1/endpoints/nope")->status == 404);
  return endpoint_id;
}

// One event accepted, delivered once and recorded, listed, then replayed and delivered again.
void check_event_delivered(Client& client, const Receiver& receiver) {
  auto accepted = client.post(
      "/v1/events", {{"merchant_id", "m1"}, {"type", "order.created"}, {"data", {{"a", 1}}}},
      "key-1");
  REQUIRE(accepted->status == 202);
  const std::string event_id = json::parse(accepted->body)["event_id"];
  // The receiver counts a delivery before the daemon records its attempt, so wait for the record.
  const auto task_state = [&] {
    auto event = client.get("/v1/events/" + event_id);
    REQUIRE(event->status == 200);
    return json::parse(event->body)["tasks"][0]["state"].get<std::string>();
  };
  REQUIRE(eventually([&] { return task_state() == "succeeded"; }));
  CHECK(receiver.count() == 1);
  auto attempts = json::parse(client.get("/v1/events/" + event_id + "/attempts")->body);
  CHECK(attempts["attempts"].size() == 1);
  CHECK(attempts["attempts"][0]["status"] == 200);
  auto listed = json::parse(client.get("/v1/events?merchant_id=m1&type=order.created")->body);
  CHECK(listed["events"].size() == 1);

  auto replayed = client.post("/v1/events/" + event_id + "/replay", json::object());
  CHECK(replayed->status == 202);
  REQUIRE(eventually([&] { return receiver.count() == 2 && task_state() == "succeeded"; }));
}

// rotate-secret, disable, recover (and recover with a bad `since`).
void check_endpoint_operations(Client& client, const std::string& endpoint_id,
                               const json& endpoint) {
  auto rotated = client.post("/v1/endpoints/" + endpoint_id + "/rotate-secret", json::object());
  REQUIRE(rotated->status == 200);
  CHECK(json::parse(rotated->body)["secret"] != endpoint["secret"]);
  auto disabled = client.post("/v1/endpoints/" + endpoint_id + "/disable", json::object());
  CHECK(json::parse(disabled->body)["enabled"] == false);
  auto recovered =
      client.post("/v1/endpoints/" + endpoint_id + "/recover", {{"since", "2020-01-01T00:00:00Z"}});
  CHECK(recovered->status == 202);
  CHECK(
      client.post("/v1/endpoints/" + endpoint_id + "/recover", {{"since", "yesterday"}})->status ==
      400);
}

// A body over the limit is 413 payload_too_large, a chunked one 411 length_required; /metrics.
void check_limits_and_metrics(Client& client, int port) {
  const std::string big(2 << 20, 'x');
  auto too_big = client.http.Post(
      "/v1/events", {{"Authorization", std::string("Bearer ") + kToken}}, big, "application/json");
  REQUIRE(too_big);
  CHECK(too_big->status == 413);
  CHECK(json::parse(too_big->body)["error"]["code"] == "payload_too_large");
  const std::string chunked =
      post_chunked_head(port, "/v1/events", {{"Authorization", std::string("Bearer ") + kToken}});
  CHECK(chunked.rfind("HTTP/1.1 411 ", 0) == 0);
  CHECK(json::parse(body_of(chunked))["error"]["code"] == "length_required");

  const std::string metrics = client.http.Get("/metrics")->body;
  for (const char* name :
       {"webhooks_events_accepted_total 1",
        "webhooks_attempts_total{outcome=", "webhooks_tasks{state=\"succeeded\"} 1",
        "webhooks_attempt_duration_seconds_bucket", "webhooks_endpoints_disabled 1"}) {
    CHECK(metrics.find(name) != std::string::npos);
  }
}

TEST_CASE("the daemon serves the admin API and delivers; SIGTERM exits 0", "[daemon]") {
  const std::string dir = temp_dir("publisherd-admin");
  Receiver receiver;
  Daemon daemon(daemon_args(database_target("admin")), dir);
  const int port = daemon.wait_listening();
  Client client(port);

  json endpoint;
  const std::string endpoint_id = check_endpoints(client, receiver, endpoint);
  check_event_delivered(client, receiver);
  check_endpoint_operations(client, endpoint_id, endpoint);
  check_limits_and_metrics(client, port);

  const int status = daemon.kill_and_wait(SIGTERM);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("the daemon's database holds its queue and idempotency records, no outbox", "[daemon]") {
  const std::string target = database_target("tables");
  Daemon daemon(daemon_args(target), temp_dir("publisherd-tables"));
  daemon.wait_listening();
  CHECK(daemon.kill_and_wait(SIGTERM) == 0);
  CHECK(table_names(*db::Database::open(target)) ==
        std::vector<std::string>{"idempotency_records", "publisher_attempts", "publisher_audit_log",
                                 "publisher_endpoint_secrets", "publisher_endpoints",
                                 "publisher_events", "publisher_rate_log",
                                 "publisher_revoked_sessions", "publisher_tasks",
                                 "webhooks_migrations"});
}

TEST_CASE("a database made by the old single-sequence schema code starts and serves its rows",
          "[daemon]") {
  const std::string target = database_target("legacy");
  {
    auto db = db::Database::open(target);
    migrate_as_before_components(*db, 5, 1000);
    db->exec(
        "INSERT INTO publisher_endpoints (id, merchant_id, url, created_at, updated_at) "
        "VALUES ('ep_old', 'm1', 'http://127.0.0.1:9/hook', 1000, 1000)");
  }
  Daemon daemon(daemon_args(target), temp_dir("publisherd-legacy"));
  Client client(daemon.wait_listening());
  const auto endpoint = client.get("/v1/endpoints/ep_old");
  REQUIRE(endpoint);
  CHECK(endpoint->status == 200);
  CHECK(json::parse(endpoint->body)["url"] == "http://127.0.0.1:9/hook");
  auto accepted = client.post(
      "/v1/events", {{"merchant_id", "m2"}, {"type", "order.created"}, {"data", json::object()}},
      "key-legacy");
  REQUIRE(accepted);
  CHECK(accepted->status == 202);
  CHECK(daemon.kill_and_wait(SIGTERM) == 0);
  auto db = db::Database::open(target);
  const std::string adopted = "SELECT COUNT(*) FROM webhooks_migrations WHERE applied_at = 1000";
  CHECK(db->exec(adopted).integer(0, 0) == 5);
  CHECK(db->exec("SELECT COUNT(*) FROM schema_migrations").integer(0, 0) == 5);
  CHECK(db->exec("SELECT COUNT(*) FROM idempotency_records").integer(0, 0) == 1);
}

TEST_CASE("GET /v1/events?limit= takes only 1 to 1000 in decimal digits, else 400", "[daemon]") {
  Receiver receiver;
  Daemon daemon(daemon_args(database_target("limit")), temp_dir("publisherd-limit"));
  Client client(daemon.wait_listening());
  for (int i = 0; i < 3; ++i) {
    REQUIRE(client
                .post("/v1/events",
                      {{"merchant_id", "m1"}, {"type", "t.x"}, {"data", json::object()}},
                      "k" + std::to_string(i))
                ->status == 202);
  }
  const json refused = {
      {"error",
       {{"code", "invalid_request"},
        {"message", "limit must be one integer from 1 to 1000, in decimal digits"}}}};
  // Read as 1 and 2 before (std::stoi stops at the first non-digit).
  for (const char* query : {"limit=1e3", "limit=2abc", "limit=0", "limit=1001", "limit=",
                            "limit=%2B2", "limit=%202", "limit=2%20", "limit=-1", "limit=0x10",
                            "limit=2.0", "limit=99999999999999999999", "limit=2&limit=3"}) {
    INFO(query);
    const auto res = client.get(std::string("/v1/events?") + query);
    REQUIRE(res);
    CHECK(res->status == 400);
    CHECK(json::parse(res->body) == refused);
  }
  for (const auto& [query, count] : std::vector<std::pair<std::string, std::size_t>>{
           {"limit=2", 2}, {"limit=1", 1}, {"limit=1000", 3}, {"limit=0002", 2}}) {
    INFO(query);
    const auto res = client.get("/v1/events?" + query);
    REQUIRE(res);
    CHECK(res->status == 200);
    CHECK(json::parse(res->body)["events"].size() == count);
  }
}

TEST_CASE("replay is refused past --replay-max-age", "[daemon]") {
  Receiver receiver;
  Daemon daemon(daemon_args(database_target("replay-age"), {"--replay-max-age", "1ms"}),
                temp_dir("publisherd-replay"));
  Client client(daemon.wait_listening());
  REQUIRE(client.post("/v1/endpoints", {{"merchant_id", "m1"}, {"url", receiver.url()}})->status ==
          201);
  auto accepted = client.post(
      "/v1/events", {{"merchant_id", "m1"}, {"type", "t.x"}, {"data", json::object()}}, "k");
  REQUIRE(accepted->status == 202);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  auto refused = client.post(
      "/v1/events/" + json::parse(accepted->body)["event_id"].get<std::string>() + "/replay",
      json::object());
  CHECK(refused->status == 422);
  CHECK(error_code(refused) == "replay_too_old");
}

TEST_CASE("rotate-secret: grace_seconds from 0 to 315360000 (10 years), else 400 invalid_request",
          "[daemon]") {
  Receiver receiver;
  Daemon daemon(daemon_args(database_target("grace")), temp_dir("publisherd-grace"));
  Client client(daemon.wait_listening());
  auto created = client.post("/v1/endpoints", {{"merchant_id", "m1"}, {"url", receiver.url()}});
  REQUIRE(created->status == 201);
  const std::string rotate =
      "/v1/endpoints/" + json::parse(created->body)["id"].get<std::string>() + "/rotate-secret";
  // Unbounded before: 9223372036854775807 s overflowed now + grace in milliseconds.
  const json refused = {
      {"error",
       {{"code", "invalid_request"},
        {"message", "grace_seconds must be a whole number from 0 to 315360000 (10 years)"}}}};
  for (const char* grace :
       {"315360001", "9223372036854775807", "18446744073709551615", "-1", "1.5", "\"60\""}) {
    INFO(grace);
    const auto res =
        client.http.Post(rotate.c_str(), {{"Authorization", std::string("Bearer ") + kToken}},
                         std::string(R"({"grace_seconds":)") + grace + "}", "application/json");
    REQUIRE(res);
    CHECK(res->status == 400);
    CHECK(json::parse(res->body) == refused);
  }
  const auto expires_in = [&](std::int64_t grace) {
    const auto before = std::chrono::system_clock::now();
    const auto res = client.post(rotate, {{"grace_seconds", grace}});
    REQUIRE(res->status == 200);
    const std::string at = json::parse(res->body)["old_secrets_expire_at"];
    std::tm tm{};
    REQUIRE(strptime(at.c_str(), "%Y-%m-%dT%H:%M:%S", &tm) != nullptr);
    return std::chrono::system_clock::from_time_t(timegm(&tm)) - before;
  };
  const auto zero = expires_in(0);
  CHECK(zero > -std::chrono::seconds(2));
  CHECK(zero < std::chrono::seconds(2));
  const auto ten_years = expires_in(315360000) - std::chrono::seconds(315360000);
  CHECK(ten_years > -std::chrono::seconds(2));
  CHECK(ten_years < std::chrono::seconds(2));
}

TEST_CASE("a SIGKILLed daemon restarted on the same database delivers every accepted event",
          "[daemon][crash]") {
  const std::string dir = temp_dir("publisherd-crash");
  const std::string db = database_target("crash");
  std::mutex mutex;
  std::set<std::string> delivered;
  Receiver receiver([&](std::size_t, const Received& r) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // a backlog builds up
    std::lock_guard lock(mutex);
    delivered.insert(r.header("webhook-id"));
    return Receiver::Reply{200, {}};
  });
  std::set<std::string> accepted;
  constexpr int kEvents = 2000;
  auto daemon = std::make_unique<Daemon>(daemon_args(db, {"--workers", "2"}), dir);
  auto client = std::make_unique<Client>(daemon->wait_listening());
  REQUIRE(client->post("/v1/endpoints", {{"merchant_id", "m1"}, {"url", receiver.url()}})->status ==
          201);
  for (int i = 0; i < kEvents; ++i) {
    if (i == kEvents / 2) {  // mid-load: kill, restart on the same database
      daemon->kill_and_wait(SIGKILL);
      daemon = std::make_unique<Daemon>(daemon_args(db, {"--workers", "2"}), dir);
      client = std::make_unique<Client>(daemon->wait_listening());
    }
    auto res = client->post(
        "/v1/events", {{"merchant_id", "m1"}, {"type", "order.created"}, {"data", {{"n", i}}}},
        "event-" + std::to_string(i));
    REQUIRE(res);
    REQUIRE(res->status == 202);
    accepted.insert(json::parse(res->body)["event_id"].get<std::string>());
  }
  // A retried ingest after the restart is a replay of the event accepted before the kill.
  auto again = client->post(
      "/v1/events", {{"merchant_id", "m1"}, {"type", "order.created"}, {"data", {{"n", 0}}}},
      "event-0");
  REQUIRE(again->status == 202);
  CHECK(accepted.count(json::parse(again->body)["event_id"].get<std::string>()) == 1);
  CHECK(accepted.size() == kEvents);

  const bool all = eventually([&] {
    std::lock_guard lock(mutex);
    return std::includes(delivered.begin(), delivered.end(), accepted.begin(), accepted.end());
  });
  std::size_t missing = 0;
  {
    std::lock_guard lock(mutex);
    for (const auto& id : accepted) missing += delivered.count(id) == 0;
  }
  CHECK(missing == 0);
  CHECK(all);
  CHECK(WEXITSTATUS(daemon->kill_and_wait(SIGTERM)) == 0);
}

TEST_CASE("--permanent-status makes a listed 4xx dead after one attempt; others are retried",
          "[daemon]") {
  Receiver receiver([](std::size_t, const Received& r) {
    return Receiver::Reply{r.body.find("\"gone_for_good\"") != std::string::npos ? 403 : 404, {}};
  });
  Daemon daemon(daemon_args(database_target("permanent"), {"--permanent-status", "400,403"}),
                temp_dir("publisherd-permanent"));
  Client client(daemon.wait_listening());
  REQUIRE(client.post("/v1/endpoints", {{"merchant_id", "m1"}, {"url", receiver.url()}})->status ==
          201);
  const auto ingest = [&](const char* kind, const std::string& key) {
    auto res = client.post("/v1/events",
                           {{"merchant_id", "m1"}, {"type", "t.x"}, {"data", {{kind, 1}}}}, key);
    REQUIRE(res->status == 202);
    return json::parse(res->body)["event_id"].get<std::string>();
  };
  const std::string permanent = ingest("gone_for_good", "p-1");
  const std::string retried = ingest("not_found_yet", "p-2");
  const auto task = [&](const std::string& id) {
    return json::parse(client.get("/v1/events/" + id)->body)["tasks"][0];
  };
  // The schedule 200ms,200ms,1s allows 4 attempts: the 404 uses them all, the 403 only one.
  REQUIRE(eventually(
      [&] { return task(permanent)["state"] == "dead" && task(retried)["state"] == "dead"; }));
  CHECK(json::parse(client.get("/v1/events/" + permanent + "/attempts")->body)["attempts"].size() ==
        1);
  CHECK(json::parse(client.get("/v1/events/" + retried + "/attempts")->body)["attempts"].size() ==
        4);

  Daemon bad({"--permanent-status", "500"}, temp_dir("publisherd-permanent-bad"));
  const int status = bad.kill_and_wait(0);
  CHECK(WEXITSTATUS(status) == 2);
  CHECK(bad.err().find("--permanent-status") != std::string::npos);
}

}  // namespace
}  // namespace webhooks::test
