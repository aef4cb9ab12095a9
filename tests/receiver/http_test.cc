// Over real HTTP on 127.0.0.1: the cpp-httplib adapter in process, and the merchant-receiver
// example as a process (started from build/bin), SIGKILLed inside its handler and restarted.
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>

#include <thread>

#include "merchant_process.h"
#include "receiver_support.h"
#include "support/chunked_post.h"
#include "support/duration_flags.h"
#include "support/listen_flags.h"
#include "support/listening.h"
#include "support/serving_thread.h"
#include "webhooks/idempotency/schema.h"
#include "webhooks/launcher/child_process.h"
#include "webhooks/providers/github.h"
#include "webhooks/receiver/http_server.h"

using namespace receiver_test;
using Process = webhooks::launcher::ChildProcess;

namespace {

std::int64_t now_s() { return system_clock().now_seconds(); }

httplib::Headers http_headers(const std::string& id, const std::string& body,
                              const std::string& delivery_id, const std::string& secret = kSecret) {
  const std::int64_t ts = now_s();
  return {{"Webhook-Id", id},
          {"Webhook-Timestamp", std::to_string(ts)},
          {"Webhook-Signature", sign(secret, id, ts, body)},
          {"Webhook-Delivery-Id", delivery_id}};
}

std::string code_of(const std::string& body) {
  const auto json = nlohmann::json::parse(body, nullptr, false);
  return json.is_object() && json.contains("error") ? json["error"]["code"].get<std::string>() : "";
}

// The configuration of the receivers mounted here: kSecret, consumer "shop", no maintenance.
Config mounted_config() {
  Config config;
  config.secrets = {kSecret};
  config.consumer = "shop";
  config.maintenance_interval = std::chrono::milliseconds(0);
  return config;
}

// `receiver` mounted at `path` on a webhooks::http::Server on 127.0.0.1, served from a thread of
// its own until stop() (or the end).
class MountedServer {
 public:
  template <typename Handler>
  MountedServer(Receiver& receiver, const std::string& path, Handler handler) {
    mount(server_, path, receiver, std::move(handler));
    port = serving_.start(server_);
  }
  void stop() { serving_.stop(); }

  int port = 0;

 private:
  webhooks::http::Server server_;
  webhooks::test::ServingThread serving_;
};

// A receiver with mounted_config() on the database `name`, mounted at /webhooks; its handler
// counts the events it gets.
struct CountingMount {
  explicit CountingMount(const std::string& name)
      : receiver(config, test::open_database(name, {idempotency::schema()})),
        server(receiver, "/webhooks", [this](const Event&) {
          ++calls;
          return Reply{};
        }) {}

  const Config config = mounted_config();
  Receiver receiver;
  std::atomic<int> calls{0};
  MountedServer server;
};

}  // namespace

TEST_CASE("the cpp-httplib adapter serves a mounted receiver") {
  CountingMount mounted("receiver_http");
  const int port = mounted.server.port;

  httplib::Client client("127.0.0.1", port);
  client.set_keep_alive(true);
  const std::string body = event_body("e1");
  auto first = client.Post("/webhooks", http_headers("e1", body, "d1"), body, "application/json");
  REQUIRE(first);
  CHECK(first->status == 200);
  CHECK(first->body == "{\"received\":true}");
  CHECK(first->get_header_value("Content-Type") == "application/json");
  auto dup = client.Post("/webhooks", http_headers("e1", body, "d2"), body, "application/json");
  REQUIRE(dup);
  CHECK(dup->status == 200);
  CHECK(dup->get_header_value("Idempotent-Replayed") == "true");
  auto forged = client.Post("/webhooks", http_headers("e2", body, "d3", kOtherSecret), body,
                            "application/json");
  REQUIRE(forged);
  CHECK(forged->status == 401);
  CHECK(code_of(forged->body) == "signature_invalid");
  auto bare = client.Post("/webhooks", body, "application/json");
  REQUIRE(bare);
  CHECK(bare->status == 400);
  CHECK(code_of(bare->body) == "headers_invalid");
  // Bodies over config.max_body_bytes are refused from their headers; chunked ones with 411.
  const std::string big(mounted.config.max_body_bytes + 1, ' ');
  auto too_big = client.Post("/webhooks", http_headers("e3", big, "d4"), big, "application/json");
  REQUIRE(too_big);
  CHECK(too_big->status == 413);
  CHECK(code_of(too_big->body) == "payload_too_large");
  const std::string chunked = test::post_chunked_head(port, "/webhooks");
  CHECK(chunked.rfind("HTTP/1.1 411 ", 0) == 0);
  CHECK(code_of(test::body_of(chunked)) == "length_required");
  // A body over 8 KiB sent as a form reaches the route as bytes and is refused as not JSON
  // (cpp-httplib alone answered it a false 413).
  const std::string form = "a=" + std::string(9000, 'x');
  auto as_form = client.Post("/webhooks", http_headers("e4", form, "d5"), form,
                             "application/x-www-form-urlencoded");
  REQUIRE(as_form);
  CHECK(as_form->status == 415);
  CHECK(
      as_form->body ==
      R"({"error":{"code":"unsupported_media_type","message":"send the body as application/json, not application/x-www-form-urlencoded"}})");
  CHECK(mounted.calls == 1);
  mounted.server.stop();
}

TEST_CASE("a mounted GitHub receiver takes GitHub's form deliveries; its 415 names both types") {
  Config config = mounted_config();
  config.provider = webhooks::providers::Provider::github;
  config.secrets = {"gh secret"};
  Receiver receiver(config, test::open_database("receiver_http_github", {idempotency::schema()}));
  std::vector<std::string> payloads;
  MountedServer server(receiver, "/github", [&](const Event& e) {
    payloads.push_back(e.payload()["zen"].get<std::string>());
    return Reply{};
  });
  httplib::Client client("127.0.0.1", server.port);
  const auto headers = [](const std::string& body, const std::string& delivery) {
    return httplib::Headers{
        {"X-Hub-Signature-256", webhooks::providers::github::sign("gh secret", body)},
        {"X-GitHub-Delivery", delivery},
        {"X-GitHub-Event", "ping"}};
  };
  const std::string form = "payload=%7B%22zen%22%3A%22Keep+it+logically+awesome.%22%7D";
  auto as_form =
      client.Post("/github", headers(form, "gh-1"), form, "application/x-www-form-urlencoded");
  REQUIRE(as_form);
  CHECK(as_form->status == 200);
  const std::string json = R"({"zen":"Speak like a human."})";
  auto as_json = client.Post("/github", headers(json, "gh-2"), json, "application/json");
  REQUIRE(as_json);
  CHECK(as_json->status == 200);
  auto as_text = client.Post("/github", headers(json, "gh-3"), json, "text/plain");
  REQUIRE(as_text);
  CHECK(as_text->status == 415);
  CHECK(
      as_text->body ==
      R"({"error":{"code":"unsupported_media_type","message":"send the body as application/json or application/x-www-form-urlencoded, not text/plain"}})");
  server.stop();
  CHECK(payloads == std::vector<std::string>{"Keep it logically awesome.", "Speak like a human."});
}

TEST_CASE("over HTTP, a signature list joined with ', ' or a tab is 200 in either order") {
  // Issue 12: "v1,GOOD, v1,AAAA" was 401 while "v1,AAAA, v1,GOOD" was 200.
  CountingMount mounted("receiver_http_lists");
  const int port = mounted.server.port;
  httplib::Client client("127.0.0.1", port);
  const auto post = [&](const std::string& id, bool good_first, const std::string& separator,
                        bool with_good) {
    const std::string body = event_body(id);
    const std::int64_t ts = now_s();
    const std::string good = with_good ? sign(kSecret, id, ts, body) : "v1,bm9wZQ==";
    const std::string other = sign(kOtherSecret, id, ts, body);
    const std::string list = good_first ? good + separator + other : other + separator + good;
    const httplib::Headers headers{
        {"Webhook-Id", id}, {"Webhook-Timestamp", std::to_string(ts)}, {"Webhook-Signature", list}};
    return client.Post("/webhooks", headers, body, "application/json");
  };
  int n = 0;
  for (const std::string separator : {", ", "\t"}) {
    for (const bool good_first : {true, false}) {
      INFO("separator [" << separator << "], good first: " << good_first);
      auto res = post("list" + std::to_string(n++), good_first, separator, true);
      REQUIRE(res);
      CHECK(res->status == 200);
      CHECK(res->body == "{\"received\":true}");
      res = post("list" + std::to_string(n++), good_first, separator, false);
      REQUIRE(res);
      CHECK(res->status == 401);
      CHECK(code_of(res->body) == "signature_invalid");
    }
  }
  CHECK(mounted.calls == 4);
  mounted.server.stop();
}

TEST_CASE(
    "merchant-receiver: a form body over 8 KiB is 415, a JSON one without Content-Type is read") {
  MerchantProcess merchant("merchant_form", {"--secret", kSecret});
  const int port = merchant.port;
  httplib::Client client("127.0.0.1", port);
  const std::string form = "a=" + std::string(9000, 'x');
  auto as_form = client.Post("/webhooks", http_headers("evt_form_1", form, "d1"), form,
                             "application/x-www-form-urlencoded");
  REQUIRE(as_form);
  CHECK(as_form->status == 415);
  CHECK(code_of(as_form->body) == "unsupported_media_type");
  const std::string body = event_body("evt_form_2", "order.captured");
  // Raw, as httplib::Client would add "Content-Type: text/plain".
  std::string request =
      "POST /webhooks HTTP/1.1\r\nHost: a\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\n";
  for (const auto& [name, value] : http_headers("evt_form_2", body, "d2")) {
    request += name + ": " + value + "\r\n";
  }
  const std::string untyped = test::raw_exchange(port, request + "\r\n" + body);
  CHECK(untyped.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
}

TEST_CASE(
    "merchant-receiver SIGKILLed inside its handler leaves nothing: one effect after restart") {
  const std::string db = test::database_target("merchant_crash");
  const std::string dir = test::temp_dir("merchant_crash");
  const std::string body = event_body("evt_crash_1", "order.captured");
  {
    Process crashing(
        "merchant-receiver",
        merchant_args(db, {"--secret", kSecret, "--lease", "4s", "--crash-on-event", "1"}), dir);
    httplib::Client client("127.0.0.1", crashing.wait_listening());
    auto lost =
        client.Post("/webhooks", http_headers("evt_crash_1", body, "d1"), body, "application/json");
    CHECK_FALSE(lost);  // the process died inside the handler: no answer
    const auto status = crashing.wait_exit(std::chrono::seconds(20));
    REQUIRE(status);
    CHECK(WIFSIGNALED(*status));
    CHECK(WTERMSIG(*status) == SIGKILL);
  }
  Process restarted("merchant-receiver", merchant_args(db, {"--secret", kSecret, "--lease", "4s"}),
                    dir);
  httplib::Client client("127.0.0.1", restarted.wait_listening());
  // The crashed call's transaction never committed: no dedup record, no effect, no call row. The
  // redelivery runs the handler at once (no lease to wait out) as its first recorded call.
  auto retried =
      client.Post("/webhooks", http_headers("evt_crash_1", body, "d2"), body, "application/json");
  REQUIRE(retried);
  CHECK(retried->status == 200);
  CHECK(retried->body == R"({"received":true})");
  CHECK_FALSE(retried->has_header("Idempotent-Replayed"));
  auto again =
      client.Post("/webhooks", http_headers("evt_crash_1", body, "d3"), body, "application/json");
  REQUIRE(again);
  CHECK(again->status == 200);
  CHECK(again->get_header_value("Idempotent-Replayed") == "true");
  CHECK(handled_events(client) == handled_one("evt_crash_1", "order.captured", 1, 1));
}

TEST_CASE("merchant-receiver: 100,000 levels of nesting are 400 invalid_json; it stays up") {
  MerchantProcess server("merchant_deep", {"--secret", kSecret});
  httplib::Client client("127.0.0.1", server.port);
  std::string deep = R"({"type":"order.created","data":)";
  for (int i = 0; i < 100'000; ++i) deep += "[";
  deep += std::string(100'000, ']') + "}";
  auto refused =
      client.Post("/webhooks", http_headers("evt_deep", deep, "d1"), deep, "application/json");
  REQUIRE(refused);
  CHECK(refused->status == 400);
  CHECK(code_of(refused->body) == "invalid_json");
  CHECK(nlohmann::json::parse(refused->body)["error"]["message"] ==
        "invalid JSON: nested deeper than the limit of 128 arrays and objects");
  const std::string body = event_body("evt_after_deep", "order.captured");
  auto ok = client.Post("/webhooks", http_headers("evt_after_deep", body, "d2"), body,
                        "application/json");
  REQUIRE(ok);
  CHECK(ok->status == 200);
  CHECK_FALSE(server.process.wait_exit(std::chrono::milliseconds(0)));
}

TEST_CASE("merchant-receiver --fail-first-attempts 100: the first call fails, the retry commits") {
  Process server(
      "merchant-receiver",
      {"--listen", "127.0.0.1:0", "--db", test::database_target("merchant_fail"), "--secret",
       kOtherSecret, "--secret", kSecret, "--consumer", "shop", "--fail-first-attempts", "100"},
      test::temp_dir("merchant_fail"));
  httplib::Client client("127.0.0.1", server.wait_listening());
  const std::string order = event_body("evt_1", "order.created");
  const std::string payout = event_body("evt_2", "payout.created");
  const std::string other = event_body("evt_3", "customer.updated");
  const auto post = [&](const std::string& id, const std::string& body, const std::string& d) {
    auto res = client.Post("/webhooks", http_headers(id, body, d), body, "application/json");
    return res ? res->status : 0;
  };
  CHECK(post("evt_1", order, "d1") == 500);
  CHECK(post("evt_1", order, "d2") == 200);
  CHECK(post("evt_1", order, "d3") == 200);
  CHECK(post("evt_2", payout, "d4") == 500);
  CHECK(post("evt_2", payout, "d5") == 200);
  CHECK(post("evt_3", other, "d6") == 500);
  CHECK(post("evt_3", other, "d7") == 200);
  CHECK(handled_events(client) == nlohmann::json::parse(R"({"events":[
      {"event_id":"evt_1","type":"order.created","calls":2,"effects":1},
      {"event_id":"evt_2","type":"payout.created","calls":2,"effects":1},
      {"event_id":"evt_3","type":"customer.updated","calls":2,"effects":0}]})"));
}

TEST_CASE(
    "merchant-receiver --ttl 200ms: after the dedup record expired, a redelivery runs again, still "
    "one effect") {
  MerchantProcess server("merchant_ttl",
                         {"--secret", kSecret, "--consumer", "shop", "--ttl", "200ms"});
  httplib::Client client("127.0.0.1", server.port);
  const std::string order = event_body("evt_ttl", "order.created");
  auto first =
      client.Post("/webhooks", http_headers("evt_ttl", order, "d1"), order, "application/json");
  REQUIRE(first);
  CHECK(first->status == 200);
  // Replayed (from the replay cache or the record) until the record's 200 ms have passed.
  int status = 0;
  bool replayed = true;
  std::string body;
  for (int i = 0; i < 10000 && replayed; ++i) {
    auto again =
        client.Post("/webhooks", http_headers("evt_ttl", order, "d2"), order, "application/json");
    REQUIRE(again);
    status = again->status;
    replayed = again->has_header("Idempotent-Replayed");
    body = again->body;
  }
  CHECK(status == 200);
  CHECK_FALSE(replayed);
  CHECK(body == R"({"received":true})");
  CHECK(handled_events(client) == handled_one("evt_ttl", "order.created", 1, 1));
}

TEST_CASE("merchant-receiver: bad flags exit 2 with CLI11's message on stderr") {
  const std::string dir = test::temp_dir("merchant_flags");
  const auto refused = [&](const std::vector<std::string>& args, const std::string& message) {
    const launcher::Finished run = launcher::run_to_end("merchant-receiver", args, dir);
    CHECK(run.exit_code == 2);
    CHECK(run.err.find(message) != std::string::npos);
  };
  refused({}, "--secret or --public-key is required");
  const std::string seconds =
      "must be a number of seconds from 0.001 to 315360000 (10 years), not ";
  for (const char* value : {"0", "0.0001", "315360001"}) {  // the deprecated bare number
    refused({"--secret", kSecret, "--lease", value}, "--lease: " + seconds + value + "\n");
    refused({"--secret", kSecret, "--ttl", value}, "--ttl: " + seconds + value + "\n");
  }
  for (const auto& [value, message] : test::bad_durations()) {
    for (const char* flag : {"--lease", "--ttl", "--request-timeout"}) {
      refused({"--secret", kSecret, flag, value}, std::string(flag) + ": " + message + "\n");
    }
  }
  for (const char* value : {"0", "0.4", "315360001"}) {  // the deprecated bare number
    refused({"--secret", kSecret, "--tolerance", value},
            std::string("--tolerance: must be a whole number of seconds from 1 to 315360000 (10 "
                        "years), not ") +
                value + "\n");
  }
  refused({"--secret", kSecret, "--crash-on-event", "1.5"},
          "--crash-on-event: must be a whole number from 0 to 2147483647, not 1.5\n");
  refused({"--secret", kSecret, "--listen", "127.0.0.1:abc"},
          "--listen: the port of 127.0.0.1:abc must be a number from 0 to 65535 (expected "
          "HOST:PORT)\n");
  refused({"--secret", kSecret, "--listen", "nonsense"},
          "--listen: nonsense has no port (expected HOST:PORT)\n");
  for (const auto& [value, message] : test::kBadListenAddresses) {
    refused({"--secret", kSecret, "--listen", value},
            std::string("--listen: ") + message + " (expected HOST:PORT)\n");
  }
  refused({"--secret", "notasecret"},
          "--secret: secret is not valid base64 (expected 'whsec_' followed by padded base64)\n");
  refused({"--secret", kSecret, "--sqlite-synchronous", "OFF"},
          "--sqlite-synchronous: OFF not in {NORMAL,FULL,EXTRA}\n");
  refused({"--secret", kSecret, "--no-such-flag"}, "--no-such-flag");
  CHECK(launcher::run_to_end("merchant-receiver", {"--help"}, dir).exit_code == 0);
}

TEST_CASE("merchant-receiver --sqlite-synchronous full: an event is answered once it is synced") {
  // The value reaches the writer's PRAGMA (storage.database's test); here the flag as a user
  // spells it (any case) starts the example, and an event is handled once.
  MerchantProcess server("merchant_synchronous",
                         {"--secret", kSecret, "--sqlite-synchronous", "full"});
  httplib::Client client("127.0.0.1", server.port);
  const std::string order = event_body("evt_sync", "order.created");
  for (const char* delivery : {"d1", "d2"}) {
    auto res = client.Post("/webhooks", http_headers("evt_sync", order, delivery), order,
                           "application/json");
    REQUIRE(res);
    CHECK(res->status == 200);
  }
  CHECK(handled_events(client) == handled_one("evt_sync", "order.created", 1, 1));
}

TEST_CASE("merchant-receiver takes an earlier version's merchant_calls and merchant_effects over") {
  // Before, the calls and the effects were two tables; now one row an event holds both.
  const std::string target = test::database_target("merchant_old_tables");
  {
    auto db = db::Database::open(target);
    db->exec(
        "CREATE TABLE merchant_calls (event_id TEXT PRIMARY KEY, type TEXT NOT NULL, "
        "calls BIGINT NOT NULL)");
    db->exec(
        "CREATE TABLE merchant_effects (event_id TEXT PRIMARY KEY, type TEXT NOT NULL, "
        "body TEXT NOT NULL)");
    db->exec(
        "INSERT INTO merchant_calls (event_id, type, calls) VALUES ('evt_a', 'order.created', 2), "
        "('evt_b', 'customer.created', 1)");
    db->exec(
        "INSERT INTO merchant_effects (event_id, type, body) VALUES ('evt_a', 'order.created', "
        "'{}')");
  }
  {
    MerchantProcess server("merchant_old_tables", target, {"--secret", kSecret});
    httplib::Client client("127.0.0.1", server.port);
    const nlohmann::json expected = {
        {"events",
         nlohmann::json::array({
             {{"event_id", "evt_a"}, {"type", "order.created"}, {"calls", 2}, {"effects", 1}},
             {{"event_id", "evt_b"}, {"type", "customer.created"}, {"calls", 1}, {"effects", 0}},
         })}};
    CHECK(handled_events(client) == expected);
  }
  auto db = db::Database::open(target);
  const std::vector<std::string> tables = test::table_names(*db);
  CHECK(std::count(tables.begin(), tables.end(), "merchant_calls") == 0);
  CHECK(std::count(tables.begin(), tables.end(), "merchant_effects") == 0);
  CHECK(db->exec("SELECT effect FROM merchant_events WHERE event_id = 'evt_a'").text(0, 0) == "{}");
}

TEST_CASE(
    "merchant-receiver after SIGTERM: a request on a kept-alive connection gets 503 "
    "server_stopping") {
  MerchantProcess merchant("merchant_sigterm", {"--secret", kSecret});
  const int port = merchant.port;
  const std::string get = "GET /handled HTTP/1.1\r\nHost: a\r\n\r\n";
  const int kept = test::raw_send(port, get);
  std::string first;
  test::read_answer(kept, first);
  REQUIRE(first.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  REQUIRE(::kill(merchant.process.pid(), SIGTERM) == 0);
  // Once the listening socket is closed the server is stopping; the connection stays open for the
  // 1-second drain.
  REQUIRE_FALSE(test::listening_until_closed(port));
  const std::string body = event_body("evt_sigterm_1", "order.captured");
  std::string request =
      "POST /webhooks HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n"
      "Content-Length: " +
      std::to_string(body.size()) + "\r\n";
  for (const auto& [name, value] : http_headers("evt_sigterm_1", body, "d1")) {
    request += name + ": " + value + "\r\n";
  }
  request += "\r\n" + body;
  REQUIRE(::send(kept, request.data(), request.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(request.size()));
  std::string refused;
  test::read_answer(kept, refused);
  ::close(kept);
  CHECK(refused.rfind("HTTP/1.1 503 Service Unavailable\r\n", 0) == 0);
  CHECK(refused.find("\r\nRetry-After: 1\r\n") != std::string::npos);
  CHECK(test::body_of(refused) ==
        R"({"error":{"code":"server_stopping","message":"the server is stopping; retry"}})");
  const auto status = merchant.process.wait_exit(std::chrono::seconds(20));
  REQUIRE(status);
  CHECK(WIFEXITED(*status));
  CHECK(WEXITSTATUS(*status) == 0);
}
