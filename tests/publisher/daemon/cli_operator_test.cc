// The `webhooks` CLI driving a real webhooks-publisherd (real processes, real HTTP on loopback):
// publish with and without an idempotency key, endpoint list / show / create --secret /
// update / disable / enable / delete, and the audit log they leave (webhooks audit), as tables,
// name: value lines and --json. SQLite and PostgreSQL.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "daemon_client.h"
#include "process.h"
#include "publisher/receiver.h"
#include "support/test_env.h"
#include "webhooks/rfc3339.h"
#include "webhooks/signer.h"
#include "webhooks/uuid.h"

namespace webhooks::test {
namespace {

using nlohmann::json;

const std::string kEndpointSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

struct Platform {
  explicit Platform(const std::string& name)
      : dir(temp_dir(name)),
        daemon(publisherd_args(database_target(name)), dir),
        url("http://127.0.0.1:" + std::to_string(daemon.wait_listening())) {}

  launcher::Finished cli(std::vector<std::string> args) const {
    return PublisherCli{url, kToken, dir, {}}(std::move(args));
  }

  std::string dir;
  Daemon daemon;
  std::string url;
};

// The value of the "name: value" line `name` of `out`, or "" when there is none.
std::string line_value(const std::string& out, const std::string& name) {
  const std::string prefix = name + ":";
  std::size_t at = out.rfind("\n" + prefix) != std::string::npos ? out.rfind("\n" + prefix) + 1
                   : out.starts_with(prefix)                     ? 0
                                                                 : std::string::npos;
  if (at == std::string::npos) return "";
  const std::size_t start = out.find_first_not_of(' ', at + prefix.size());
  return out.substr(start, out.find('\n', start) - start);
}

TEST_CASE("webhooks publish: an event delivered once; its key again is the same event",
          "[daemon][cli]") {
  Platform platform("cli-publish");
  Receiver receiver;
  auto created = platform.cli({"endpoint", "create", "--merchant", "m1", "--url", receiver.url(),
                               "--secret", kEndpointSecret, "--event-type", "order.*"});
  INFO(created.err);
  REQUIRE(created.exit_code == 0);
  CHECK(line_value(created.out, "secret") == kEndpointSecret);
  CHECK(created.out.ends_with(
      "(the secret is shown only now: store it where the receiver reads it)\n"));

  // No key given: a new UUIDv7, printed.
  auto first = platform.cli(
      {"publish", "--merchant", "m1", "--type", "order.created", "--data", R"({"amount": 1.50})"});
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  const std::string event_id = line_value(first.out, "event_id");
  const std::string key = line_value(first.out, "idempotency_key");
  CHECK(is_uuid_v7(event_id));
  CHECK(is_uuid_v7(key));
  CHECK(first.out == "event_id:        " + event_id + "\ntasks:           1\nidempotency_key: " +
                         key + "\nreplayed:        false\n");
  REQUIRE(eventually([&] { return receiver.count() == 1; }));
  const Received delivered = receiver.received()[0];
  CHECK(delivered.header("webhook-id") == event_id);
  CHECK(delivered.body.find(R"("data":{"amount":1.50})") != std::string::npos);
  // Signed with the secret given at creation.
  const std::int64_t ts = std::stoll(delivered.header("webhook-timestamp"));
  CHECK(delivered.header("webhook-signature") ==
        Signer(Secret::parse(kEndpointSecret)).sign(event_id, ts, delivered.body));

  // The same key and data: the first answer, no second event.
  auto again = platform.cli({"publish", "--merchant", "m1", "--type", "order.created", "--data",
                             R"({"amount": 1.50})", "--idempotency-key", key, "--json"});
  REQUIRE(again.exit_code == 0);
  CHECK(json::parse(again.out) ==
        json{{"event_id", event_id}, {"tasks", 1}, {"idempotency_key", key}, {"replayed", true}});
  // The same key with other data: 422, exit 1, the key named for a retry.
  auto reused = platform.cli({"publish", "--merchant", "m1", "--type", "order.created", "--data",
                              R"({"amount": 2})", "--idempotency-key", key});
  CHECK(reused.exit_code == 1);
  CHECK(reused.out.empty());
  CHECK(reused.err ==
        "webhooks: the publisher answered 422: "
        R"({"error":{"code":"idempotency_key_reused","message":"this Idempotency-Key was used )"
        R"(with a different request"}})"
        "\n");

  // --data-file; a type the filter does not select: no task.
  const std::string data = write_secret_file(platform.dir + "/data.json", "{\"n\": 7}\n");
  auto from_file = platform.cli({"publish", "--merchant", "m1", "--type", "payout.paid",
                                 "--data-file", data, "--idempotency-key", "k-file"});
  REQUIRE(from_file.exit_code == 0);
  CHECK(line_value(from_file.out, "tasks") == "0");
  CHECK(line_value(from_file.out, "idempotency_key") == "k-file");
  CHECK(from_file.err ==
        "webhooks: no enabled endpoint of merchant m1 takes payout.paid events: nothing will be "
        "delivered (webhooks endpoint list --merchant m1)\n");

  // Usage errors, nothing sent (exit 2).
  auto both = platform.cli(
      {"publish", "--merchant", "m1", "--type", "t", "--data", "{}", "--data-file", data});
  CHECK(both.exit_code == 2);
  CHECK(both.err == "webhooks: --data and --data-file were both given; give one of them\n");
  auto none = platform.cli({"publish", "--merchant", "m1", "--type", "t"});
  CHECK(none.exit_code == 2);
  CHECK(none.err ==
        "webhooks: give the event's data: --data JSON (or @FILE) or --data-file FILE\n");
  auto array = platform.cli({"publish", "--merchant", "m1", "--type", "t", "--data", "[1]"});
  CHECK(array.exit_code == 2);
  CHECK(array.err == "webhooks: --data must be a JSON object\n");
  const std::string text = write_secret_file(platform.dir + "/text.txt", "hello\n");
  auto not_json =
      platform.cli({"publish", "--merchant", "m1", "--type", "t", "--data", "@" + text});
  CHECK(not_json.exit_code == 2);
  CHECK(not_json.err.starts_with("webhooks: --data @" + text + " is not JSON: "));
  auto injected = platform.cli({"publish", "--merchant", "m1", "--type", "t", "--data", "{}",
                                "--idempotency-key", "a\r\nX-Evil: 1"});
  CHECK(injected.exit_code == 2);
  CHECK(injected.err ==
        "webhooks: --idempotency-key must be 1 to 255 printable ASCII characters\n");
  auto empty_key = platform.cli(
      {"publish", "--merchant", "m1", "--type", "t", "--data", "{}", "--ordering-key", ""});
  CHECK(empty_key.exit_code == 2);
  CHECK(empty_key.err ==
        "webhooks: --ordering-key must be 1 to 255 bytes without control characters\n");
  auto zero =
      platform.cli({"publish", "--merchant", "m1", "--type", "t", "--data-file", "/dev/zero"});
  CHECK(zero.exit_code == 2);
  CHECK(zero.err == "webhooks: /dev/zero is larger than 64 MiB\n");
  auto directory =
      platform.cli({"publish", "--merchant", "m1", "--type", "t", "--data", "@" + platform.dir});
  CHECK(directory.exit_code == 2);
  CHECK(directory.err == "webhooks: cannot read " + platform.dir + ": Is a directory\n");
  auto broken = platform.cli({"publish", "--merchant", "m1", "--type", "t", "--data", "{"});
  CHECK(broken.exit_code == 2);
  CHECK(broken.err.starts_with("webhooks: --data is not JSON: "));
  // No publisher: the reason, where to look, and the key to retry with.
  auto down = launcher::run_to_end(
      "webhooks",
      {"publish", "--publisher-url", "http://127.0.0.1:1", "--admin-token", kToken, "--merchant",
       "m1", "--type", "t", "--data", "{}", "--idempotency-key", "k-down"},
      platform.dir);
  CHECK(down.exit_code == 1);
  CHECK(down.err ==
        "webhooks: no answer from the publisher at http://127.0.0.1:1: cannot connect (connection "
        "refused or unreachable)\nwebhooks: is webhooks-publisherd running there? "
        "(--publisher-url, WEBHOOKS_PUBLISHER_URL)\nwebhooks: to retry without a second event, "
        "publish the same data again with --idempotency-key k-down\n");
  CHECK(eventually([&] { return receiver.count() == 1; }));
}

TEST_CASE("webhooks endpoint list, show, update, disable, enable and delete", "[daemon][cli]") {
  Platform platform("cli-endpoints");
  auto created = platform.cli({"endpoint", "create", "--merchant", "m1", "--url",
                               "http://127.0.0.1:9/h", "--description", "shop", "--json"});
  REQUIRE(created.exit_code == 0);
  const json endpoint = json::parse(created.out);
  const std::string id = endpoint["id"];
  CHECK(endpoint["description"] == "shop");
  CHECK(endpoint["secret"].get<std::string>().starts_with("whsec_"));
  REQUIRE(platform
              .cli({"endpoint", "create", "--merchant", "m2", "--url", "http://127.0.0.1:9/x",
                    "--event-type", "order.*", "--event-type", "payout.paid"})
              .exit_code == 0);

  auto list = platform.cli({"endpoint", "list", "--merchant", "m1"});
  REQUIRE(list.exit_code == 0);
  const std::string pad(id.size() - 2, ' ');
  CHECK(list.out == "id" + pad +
                        "  merchant_id  url                   event_types  enabled  "
                        "failing_since\n" +
                        id + "  m1           http://127.0.0.1:9/h  -            true     -\n");
  auto all = platform.cli({"endpoint", "list", "--json"});
  REQUIRE(all.exit_code == 0);
  const json endpoints = json::parse(all.out)["endpoints"];
  REQUIRE(endpoints.size() == 2);
  CHECK(endpoints[1]["event_types"] == json{"order.*", "payout.paid"});

  // show: the id first, then the API's members; never a secret.
  auto show = platform.cli({"endpoint", "show", id});
  REQUIRE(show.exit_code == 0);
  CHECK(show.out.starts_with("id:                 " + id + "\n"));
  CHECK(line_value(show.out, "description") == "shop");
  CHECK(line_value(show.out, "enabled") == "true");
  CHECK(line_value(show.out, "url") == "http://127.0.0.1:9/h");
  CHECK(show.out.find("whsec_") == std::string::npos);
  auto shown = platform.cli({"endpoint", "show", "--endpoint", id, "--json"});
  REQUIRE(shown.exit_code == 0);
  CHECK(json::parse(shown.out)["id"] == id);

  auto updated = platform.cli({"endpoint", "update", id, "--description", "shop eu", "--event-type",
                               "order.created", "--json"});
  REQUIRE(updated.exit_code == 0);
  CHECK(json::parse(updated.out)["description"] == "shop eu");
  CHECK(json::parse(updated.out)["event_types"] == json{"order.created"});

  auto disabled = platform.cli({"endpoint", "disable", id, "--reason", "merchant asked"});
  REQUIRE(disabled.exit_code == 0);
  CHECK(line_value(disabled.out, "enabled") == "false");
  CHECK(line_value(disabled.out, "disabled_reason") == "merchant asked");
  auto enabled = platform.cli({"endpoint", "enable", id, "--json"});
  REQUIRE(enabled.exit_code == 0);
  CHECK(json::parse(enabled.out)["enabled"] == true);
  CHECK(json::parse(enabled.out)["disabled_reason"].is_null());

  // --grace takes a unit; a bare number of seconds is the deprecated spelling, warned about.
  auto rotated = platform.cli({"endpoint", "rotate", id, "--grace", "90", "--json"});
  REQUIRE(rotated.exit_code == 0);
  CHECK(rotated.err == "webhooks: --grace 90 without a unit is deprecated; use --grace 90s\n");
  // The old key (the second) signs 90 s past the new one's creation.
  const json keys = json::parse(platform.cli({"endpoint", "show", id, "--json"}).out)["secrets"];
  REQUIRE(keys.size() == 2);
  const auto time_of = [&](int key, const char* name) {
    return *parse_rfc3339(keys[key][name].get<std::string>());
  };
  CHECK(json::parse(rotated.out)["old_secrets_expire_at"] == keys[1]["expires_at"]);
  CHECK(time_of(1, "expires_at") - time_of(0, "created_at") == 90'000);

  auto deleted = platform.cli({"endpoint", "delete", id});
  REQUIRE(deleted.exit_code == 0);
  CHECK(deleted.out == "deleted endpoint " + id + "\n");
  auto gone = platform.cli({"endpoint", "delete", id, "--json"});
  CHECK(gone.exit_code == 1);
  CHECK(gone.err ==
        "webhooks: the publisher answered 404: "
        R"({"error":{"code":"not_found","message":"no such endpoint"}})"
        "\n");
  auto missing = platform.cli({"endpoint", "show", "nope"});
  CHECK(missing.exit_code == 1);
  CHECK(missing.err ==
        "webhooks: the publisher answered 404: "
        R"({"error":{"code":"not_found","message":"no such endpoint"}})"
        "\n");
  auto no_id = platform.cli({"endpoint", "enable"});
  CHECK(no_id.exit_code == 2);
  CHECK(no_id.err ==
        "webhooks: give the endpoint's id: webhooks endpoint COMMAND ID (webhooks endpoint list "
        "shows them)\n");
  // Values that would break the name: value lines are escaped.
  auto odd = platform.cli({"endpoint", "create", "--merchant", "m1", "--url",
                           "http://127.0.0.1:9/h", "--description", "line1\nline2\x1b[31m\u0085"});
  REQUIRE(odd.exit_code == 0);
  CHECK(line_value(odd.out, "description") == "line1\\nline2\\x1b[31m\\u0085");
  auto bad_secret = platform.cli({"endpoint", "create", "--merchant", "m1", "--url",
                                  "http://127.0.0.1:9/h", "--secret", "not-a-secret"});
  CHECK(bad_secret.exit_code == 2);
  CHECK(bad_secret.err.starts_with("--secret: "));

  // webhooks audit: each change above, newest first, by the token named admin.
  auto audit = platform.cli({"audit", "--target", id, "--json"});
  REQUIRE(audit.exit_code == 0);
  const json audited = json::parse(audit.out);
  std::vector<std::string> entries;
  for (const json& e : audited["entries"]) {
    entries.push_back(e["actor"].get<std::string>() + " " + e["action"].get<std::string>() + " " +
                      std::to_string(e["status"].get<int>()) + " " +
                      e["outcome"].get<std::string>());
  }
  CHECK(entries ==
        std::vector<std::string>{
            "admin endpoint.delete 404 refused", "admin endpoint.delete 204 succeeded",
            "admin endpoint.rotate_secret 200 succeeded", "admin endpoint.enable 200 succeeded",
            "admin endpoint.disable 200 succeeded", "admin endpoint.update 200 succeeded",
            "admin endpoint.create 201 succeeded"});
  auto table =
      platform.cli({"audit", "--target", id, "--action", "endpoint.delete", "--limit", "1"});
  REQUIRE(table.exit_code == 0);
  const std::string cursor = json::parse(
      platform
          .cli({"audit", "--target", id, "--action", "endpoint.delete", "--limit", "1", "--json"})
          .out)["next_cursor"];
  const std::string at = audited["entries"][0]["at"];
  CHECK(table.out == "at                        actor  action           target" +
                         std::string(id.size() - 6, ' ') +
                         "  outcome  status  detail     client\n" + at +
                         "  admin  endpoint.delete  " + id +
                         "  refused  404     not_found  127.0.0.1\n"
                         "more: --cursor " +
                         cursor + "\n");
  auto bad_action = platform.cli({"audit", "--action", "endpoint.frobnicate"});
  CHECK(bad_action.exit_code == 2);
  CHECK(bad_action.err.starts_with("--action: endpoint.frobnicate not in {endpoint.create,"));
}

}  // namespace
}  // namespace webhooks::test
