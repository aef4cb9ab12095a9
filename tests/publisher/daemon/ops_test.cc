// webhooks-publisherd's warning before an endpoint is disabled, as a real process with real
// receivers on 127.0.0.1: the gauge webhooks_endpoint_failing_seconds on /metrics, the log line
// endpoint_failing once, and the ops events endpoint.failing then endpoint.disabled delivered
// signed to --ops-url (secret from WEBHOOKS_OPS_SECRET). Runs on SQLite and PostgreSQL.
#include <signal.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <ctime>
#include <nlohmann/json.hpp>
#include <sstream>

#include "daemon_client.h"
#include "process.h"
#include "publisher/receiver.h"
#include "support/test_env.h"
#include "webhooks/secret.h"
#include "webhooks/verifier.h"

namespace webhooks::test {
namespace {

using nlohmann::json;

// The JSON lines of `text` whose "event" is `event`.
std::vector<json> log_lines(const std::string& text, const std::string& event) {
  std::vector<json> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const json j = json::parse(line, nullptr, false);
    if (j.is_object() && j.value("event", "") == event) out.push_back(j);
  }
  return out;
}

// The data of ops delivery `r` after checking its signature (real time) and type.
json ops_data(const Received& r, const std::string& secret, const std::string& type) {
  const Verifier verifier({Secret::parse(secret)});
  CHECK(verifier.verify(
      {r.header("webhook-id"), r.header("webhook-timestamp"), r.header("webhook-signature")},
      r.body, std::time(nullptr)));
  CHECK(r.header("webhook-event-type") == type);
  return json::parse(r.body)["data"];
}

std::vector<std::string> ops_args(const std::string& db, const std::string& ops_url) {
  // A failing delivery is retried every 200 ms for 4 s: the streak outlasts --disable-after 2s.
  std::string schedule = "200ms";
  for (int i = 1; i < 20; ++i) schedule += ",200ms";
  return publisherd_args(db,
                         {"--retry-schedule", schedule, "--timeout", "2s", "--delivery-lease", "3s",
                          "--batch-size", "8", "--disable-after", "2s", "--ops-url", ops_url});
}

TEST_CASE("a failing endpoint: gauge, one endpoint_failing line, signed ops events, disabled",
          "[daemon]") {
  Receiver ops, failing(statuses({500}));
  const std::string secret = Secret::generate().to_string();
  Daemon daemon(ops_args(database_target("ops"), ops.url()), temp_dir("publisherd-ops"),
                {"WEBHOOKS_OPS_SECRET=" + secret});
  Client client(daemon.wait_listening());
  auto created = client.post("/v1/endpoints", {{"merchant_id", "m1"}, {"url", failing.url()}});
  REQUIRE(created->status == 201);
  const std::string id = json::parse(created->body)["id"];
  REQUIRE(client
              .post("/v1/events",
                    {{"merchant_id", "m1"}, {"type", "order.created"}, {"data", json::object()}},
                    "key-ops")
              ->status == 202);
  const std::string gauge = "webhooks_endpoint_failing_seconds{endpoint=\"" + id + "\"} ";
  CHECK(eventually(
      [&] { return client.http.Get("/metrics")->body.find(gauge) != std::string::npos; }));

  REQUIRE(eventually([&] { return ops.count() == 2; }));
  const auto got = ops.received();
  const json failing_data = ops_data(got[0], secret, "endpoint.failing");
  const json disabled_data = ops_data(got[1], secret, "endpoint.disabled");
  CHECK(failing_data["endpoint_id"] == id);
  CHECK(failing_data["merchant_id"] == "m1");
  CHECK(failing_data["url"] == failing.url());
  CHECK(failing_data["reason"] == "HTTP 500");
  CHECK(disabled_data["reason"] == "failing continuously");
  CHECK(disabled_data["failing_since"] == failing_data["failing_since"]);
  CHECK(json::parse(client.get("/v1/endpoints/" + id)->body)["enabled"] == false);
  CHECK(client.http.Get("/metrics")->body.find(gauge) == std::string::npos);  // disabled now

  CHECK(daemon.kill_and_wait(SIGTERM) != -1);
  const auto lines = log_lines(daemon.err(), "endpoint_failing");
  REQUIRE(lines.size() == 1);
  CHECK(lines[0]["endpoint_id"] == id);
  CHECK(lines[0]["failing_since"] == failing_data["failing_since"]);
  CHECK(lines[0]["disable_after"] == "2s");
  CHECK(ops.count() == 2);  // nothing more
}

TEST_CASE("--ops-url needs a secret; bad retention values exit 2", "[daemon]") {
  const std::string dir = temp_dir("publisherd-ops-flags");
  const auto refused = [&](const std::vector<std::string>& args, const std::string& message) {
    INFO(args.front());
    const launcher::Finished run = launcher::run_to_end("webhooks-publisherd", args, dir);
    CHECK(run.exit_code == 2);
    CHECK(run.err.find(message) != std::string::npos);
  };
  refused({"--ops-url", "http://127.0.0.1:9/ops"},
          "--ops-url: needs a signing secret: give --ops-secret, --ops-secret-file or "
          "WEBHOOKS_OPS_SECRET");
  refused({"--ops-url", "ftp://x"}, "--ops-url: must be an http:// or https:// URL without spaces");
  refused({"--ops-url", "http://x/ops", "--ops-secret", "nope"}, "--ops-secret: ");
  refused({"--retention", "30x"},
          "--retention: duration \"30x\" has unknown unit \"x\"; use ms, s, m, h or d\n");
  refused({"--retention", "-1d"}, "--retention: ");
  refused({"--retention", "366d"}, "--retention: duration \"366d\" is longer than the maximum");
  refused({"--retention-batch", "0"},
          "--retention-batch: must be a whole number from 1 to 100000, not 0\n");
  refused({"--retention-pause", "soon"}, "--retention-pause: ");
  refused({"--ops-secret", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"},
          "--ops-secret: signs the operational webhook: give --ops-url too, or drop it");
  refused({"--overview-refresh", "0s"}, "--overview-refresh: ");
}

}  // namespace
}  // namespace webhooks::test
