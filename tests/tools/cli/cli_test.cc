// The `webhooks` CLI as a user runs it: build/bin/webhooks in a shell, real HTTP on 127.0.0.1.
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <utility>
#include <vector>

#include "cli_run.h"
#include "support/test_env.h"
#include "webhooks/http_server.h"
#include "webhooks/launcher/child_process.h"

using namespace webhooks;
using namespace webhooks::test;

TEST_CASE("sign reproduces the conformance vectors") {
  const std::string dir = test::temp_dir("cli-sign");
  const auto vectors =
      nlohmann::json::parse(test::read_file(test::vectors_dir() + "/standard-webhooks-v1.json"));
  for (const auto& v : vectors["sign"]) {
    const std::string body = write(dir, "body", v["body"].get<std::string>());
    check_cli("sign --secret '" + v["secret"].get<std::string>() + "' --id " +
                  v["id"].get<std::string>() + " --timestamp " +
                  std::to_string(v["timestamp"].get<long>()) + " --body-file " + body,
              0,
              "webhook-id: " + v["id"].get<std::string>() +
                  "\nwebhook-timestamp: " + std::to_string(v["timestamp"].get<long>()) +
                  "\nwebhook-signature: " + v["signature"].get<std::string>() + "\n");
  }
}

TEST_CASE("verify says valid, or exactly why not") {
  const std::string dir = test::temp_dir("cli-verify");
  const std::string body = write(dir, "body", "{\"test\": 2432232314}");
  const std::string headers = write(dir, "headers", kHeaders);
  const std::string base = "verify --secret " + kSecret + " --headers-file " + headers;
  check_cli(base + " --body-file " + body + " --now 1614265330", 0, "valid\n");

  check_cli(base + " --body-file " + write(dir, "tampered", "{\"test\": 2432232315}") +
                " --now 1614265330",
            1,
            "invalid: no_matching_signature: no signature matches any configured secret or key\n");

  check_cli(base + " --body-file " + body + " --now 1614265631", 1,
            "invalid: timestamp_too_old: webhook-timestamp is 301 s old; the tolerance is 300 s\n");
  Run run = cli(base + " --body-file " + body + " --now 1614265029");
  CHECK(run.out ==
        "invalid: timestamp_too_new: webhook-timestamp is 301 s in the future; the tolerance is "
        "300 s\n");
  CHECK(cli(base + " --body-file " + body + " --now 1914265330 --no-tolerance").out == "valid\n");
  // --now's bounds: 0 and 9999-12-31T23:59:59Z.
  check_cli(base + " --body-file " + body + " --now 0", 1,
            "invalid: timestamp_too_new: webhook-timestamp is 1614265330 s in the future; "
            "the tolerance is 300 s\n");
  check_cli(base + " --body-file " + body + " --now 253402300799", 1,
            "invalid: timestamp_too_old: webhook-timestamp is 251788035469 s old; the "
            "tolerance is 300 s\n");

  const std::string no_sig =
      write(dir, "no-sig", kHeaders.substr(0, kHeaders.find("webhook-signature")));
  check_cli("verify --secret " + kSecret + " --headers-file " + no_sig + " --body-file " + body, 1,
            "invalid: missing_header: webhook-signature header is missing\n");

  const std::string ms = write(
      dir, "ms", "webhook-id: msg_1\nwebhook-timestamp: 1614265330000\nwebhook-signature: v1,x\n");
  run = cli("verify --secret " + kSecret + " --headers-file " + ms + " --body-file " + body);
  CHECK(run.out ==
        "invalid: malformed_header: webhook-timestamp must be Unix seconds: 1 to 10 decimal "
        "digits\n");

  check_usage_error(
      "verify --secret whsec_short --headers-file " + headers + " --body-file " + body,
      "--secret: secret is not valid base64 (expected 'whsec_' followed by padded base64)\n"
      "Run with --help for more information.\n");
  CHECK(
      cli("verify --secret " + kSecret + " --headers-file /nonexistent --body-file " + body).out ==
      "webhooks: cannot read /nonexistent: No such file or directory\n");
  CHECK(cli("verify --headers-file " + headers).code == 2);
  CHECK(cli("--help").code == 0);
}

TEST_CASE("verify: repeated lines are refused as the receiver refuses them; svix-* names") {
  // Issue 27: only the last of repeated lines was kept, so a delivery verified or not depending on
  // the order of its lines. The receiver's HTTP edge answers 400 bad_request to a second line of
  // a signature or id header; verify says the same, in any order.
  const std::string dir = test::temp_dir("cli-verify-repeated");
  const std::string body = write(dir, "body", "{\"test\": 2432232314}");
  const std::string good = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
  const std::string other = "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=";
  const auto verify = [&](const std::string& name, const std::string& lines) {
    return cli("verify --secret " + kSecret + " --headers-file " + write(dir, name, lines) +
               " --body-file " + body + " --now 1614265330");
  };
  const std::string id = "webhook-id: msg_p5jXN8AQM9LWM0D4loKWxJek\n";
  const std::string ts = "webhook-timestamp: 1614265330\n";
  Run run = verify("a", id + ts + "webhook-signature: " + good + "\nwebhook-signature: " + other);
  CHECK(run.code == 1);
  CHECK(run.out == "invalid: bad_request: send one webhook-signature header (lines 3 and 4)\n");
  run =
      verify("b", id + ts + "webhook-signature: " + other + "\n# note\nWebhook-Signature: " + good);
  CHECK(run.out == "invalid: bad_request: send one webhook-signature header (lines 3 and 5)\n");
  run = verify("c", id + "webhook-id: msg_other\n" + ts + "webhook-signature: " + good);
  CHECK(run.out == "invalid: bad_request: send one webhook-id header (lines 1 and 2)\n");
  // Other repeated headers are not the receiver's concern.
  run = verify("d", id + ts + "x-note: 1\nx-note: 2\nwebhook-signature: " + good);
  CHECK(run.out == "valid\n");
  // A control character in a value is refused, as the servers' edge refuses it (400).
  run = verify("control", id + ts + "x-note: a\x01b\nwebhook-signature: " + good);
  CHECK(run.code == 1);
  CHECK(run.out ==
        "invalid: bad_request: the value of header x-note holds a control character (line 3)\n");
  // Neither a secret nor a key: every way to give one is named.
  check_usage_error(
      "verify --headers-file " + write(dir, "nokey", id + ts + "webhook-signature: " + good) +
          " --body-file " + body,
      "webhooks: verify needs --secret or --public-key: give --secret, --secret-file or "
      "WEBHOOKS_SECRET (v1), or --public-key (v1a)\n");
  // A byte order mark (an editor's) before the first line is not part of its name.
  run = verify("bom", "\xEF\xBB\xBF" + id + ts + "webhook-signature: " + good);
  CHECK(run.out == "valid\n");
  run = verify("svix",
               "svix-id: msg_p5jXN8AQM9LWM0D4loKWxJek\nsvix-timestamp: 1614265330\n"
               "svix-signature: " +
                   good + "\n");
  CHECK(run.code == 0);
  CHECK(run.out == "valid\n");
  run = verify("mixed", "svix-id: msg_p5jXN8AQM9LWM0D4loKWxJek\n" + ts + "svix-signature: " + good);
  CHECK(run.code == 1);
  CHECK(run.out ==
        "invalid: malformed_header: the request carries both webhook-timestamp and svix-id: send "
        "the webhook-* or the svix-* headers, not both\n");
  run = verify("svix-late",
               "svix-id: msg_p5jXN8AQM9LWM0D4loKWxJek\nsvix-timestamp: 1614265000\n"
               "svix-signature: " +
                   good + "\n");
  CHECK(run.out ==
        "invalid: no_matching_signature: no signature matches any configured secret or "
        "key\n");
}

TEST_CASE("verify: a signature list joined with ', ' or a tab is valid in either order") {
  // Issue 12: "v1,GOOD, v1,AAAA" was invalid while "v1,AAAA, v1,GOOD" was valid.
  const std::string dir = test::temp_dir("cli-verify-lists");
  const std::string body = write(dir, "body", "{\"test\": 2432232314}");
  const std::string good = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
  const std::string other = "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=";
  int n = 0;
  for (const std::string separator : {", ", "\t"}) {
    for (const std::string& list :
         {good + separator + other, other + separator + good, other + separator + "v1,AAAA"}) {
      INFO("webhook-signature: " << list);
      const std::string headers =
          write(dir, "headers" + std::to_string(n++),
                "webhook-id: msg_p5jXN8AQM9LWM0D4loKWxJek\nwebhook-timestamp: 1614265330\n"
                "webhook-signature: " +
                    list + "\n");
      const bool valid = list.find(good) != std::string::npos;
      check_cli("verify --secret " + kSecret + " --headers-file " + headers + " --body-file " +
                    body + " --now 1614265330",
                valid ? 0 : 1,
                valid ? "valid\n"
                      : "invalid: no_matching_signature: no signature matches any configured "
                        "secret or key\n");
    }
  }
}

TEST_CASE("send to listen, then replay the capture: one new event, one duplicate") {
  const std::string dir = test::temp_dir("cli-listen");
  CapturingListener listen(dir);
  const std::string& url = listen.url;
  Run run = cli("send --url " + url + " --secret " + kSecret +
                " --type order.created --data '{\"amount\":1000}'");
  CHECK(run.code == 0);
  CHECK(run.out.find("status: 200\n") != std::string::npos);
  run = cli("send --url " + url +
            " --secret whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD --type order.created --data '{}'");
  CHECK(run.code == 1);
  CHECK(run.out.find("status: 401\n") != std::string::npos);

  const std::string capture = test::read_file(dir + "/capture.jsonl");
  CHECK(std::count(capture.begin(), capture.end(), '\n') == 1);  // only the verified delivery
  const auto captured = nlohmann::json::parse(capture.substr(0, capture.find('\n')));
  CHECK(nlohmann::json::parse(captured["body"].get<std::string>())["data"]["amount"] == 1000);

  run = cli("replay --capture " + dir + "/capture.jsonl --url " + url + " --secret " + kSecret);
  CHECK(run.code == 0);
  CHECK(run.out.find("1 of 1 deliveries accepted\n") != std::string::npos);
  // The replay was a duplicate at the listener: the capture holds each new event once.
  CHECK(test::read_file(dir + "/capture.jsonl") == capture);
  CHECK(cli("send --url " + url + " --secret " + kSecret + " --type t --data 'not json'").code ==
        2);
  CHECK(cli("send --url http://127.0.0.1:1/x --secret " + kSecret + " --type t --data '{}'").code ==
        1);
}

TEST_CASE("listen: a Svix delivery is printed, captured under webhook-* names and replayed") {
  const std::string dir = test::temp_dir("cli-listen-svix");
  CapturingListener listen(dir);
  const int port = listen.port;
  // Signed now with the CLI, sent under the Svix service's names.
  const std::string body = write(dir, "body", "{\"type\":\"order.created\"}");
  const std::string now = std::to_string(std::time(nullptr));
  Run run = cli("sign --secret " + kSecret + " --id msg_svix_1 --timestamp " + now +
                " --body-file " + body);
  REQUIRE(run.code == 0);
  const std::size_t at = run.out.find("webhook-signature: ") + 19;
  const std::string signature = run.out.substr(at, run.out.size() - at - 1);
  httplib::Client client("127.0.0.1", port);
  const auto svix = client.Post(
      "/webhooks",
      {{"svix-id", "msg_svix_1"}, {"svix-timestamp", now}, {"svix-signature", signature}},
      "{\"type\":\"order.created\"}", "application/json");
  REQUIRE(svix);
  CHECK(svix->status == 200);
  const auto captured = nlohmann::json::parse(test::read_file(dir + "/capture.jsonl"))["headers"];
  CHECK(captured == nlohmann::json{{"webhook-id", "msg_svix_1"},
                                   {"webhook-timestamp", now},
                                   {"webhook-signature", signature}});
  run = cli("replay --capture " + dir + "/capture.jsonl --url http://127.0.0.1:" +
            std::to_string(port) + "/webhooks --secret " + kSecret);
  CHECK(run.code == 0);
  CHECK(run.out.find("1 of 1 deliveries accepted\n") != std::string::npos);
  CHECK(listen.process.kill_and_wait(SIGTERM) == 0);
  // The id column shows the svix-id (it showed "-"); the replay has a delivery id of its own.
  const std::string out = listen.process.out();
  INFO(out);
  CHECK(out.find("\nmsg_svix_1  -  -  new\nmsg_svix_1  -  ") != std::string::npos);
  CHECK(out.ends_with("  duplicate\n"));
}

TEST_CASE("listen (in-process claims) and merchant-receiver (transactional) on one SQLite file") {
  // The transactional receiver takes a shared lock at its first delivery: while `listen` holds the
  // file alone its deliveries are 503 (both could otherwise run a handler for one event), and once
  // `listen` has stopped they are handled.
  const std::string dir = test::temp_dir("cli-mixed-modes");
  const std::string db = dir + "/shared.db";
  auto listen = std::make_unique<launcher::ChildProcess>(
      "webhooks", listen_args({"--db", db, "--consumer", "merchant"}), dir);
  const std::string listen_url = webhooks_url(*listen);
  const std::string send = " --secret " + kSecret + " --type order.created --data '{}'";
  Run run = cli("send --url " + listen_url + send);
  CHECK(run.out.find("status: 200\n") != std::string::npos);

  launcher::ChildProcess merchant(
      "merchant-receiver", {"--listen", "127.0.0.1:0", "--db", db, "--secret", kSecret}, dir);
  const std::string merchant_url = webhooks_url(merchant);
  run = cli("send --url " + merchant_url + send);
  CHECK(run.code == 1);
  CHECK(run.out.find("status: 503\n") != std::string::npos);
  CHECK(run.out.find("storage_unavailable") != std::string::npos);

  listen.reset();
  run = cli("send --url " + merchant_url + send);
  CHECK(run.code == 0);
  CHECK(run.out.find("status: 200\n") != std::string::npos);

  // Now the merchant holds it shared: a new listener takes durable claims beside it.
  launcher::ChildProcess second("webhooks", listen_args({"--db", db, "--consumer", "merchant"}),
                                dir);
  run = cli("send --url " + webhooks_url(second) + send);
  CHECK(run.code == 0);
  CHECK(run.out.find("status: 200\n") != std::string::npos);
}

TEST_CASE("listen --capture on a full disk: the delivery is 500 and retried, never a lost line") {
  // /dev/full refuses every write with ENOSPC, as a full disk does.
  const std::string dir = test::temp_dir("cli-capture-full");
  launcher::ChildProcess listen(
      "webhooks", listen_args({"--db", dir + "/listen.db", "--capture", "/dev/full"}), dir);
  const std::string url = webhooks_url(listen);
  const Run run = cli("send --url " + url + " --secret " + kSecret + " --type t --data '{}'");
  CHECK(run.code == 1);
  CHECK(run.out.find("status: 500\n") != std::string::npos);
  CHECK(run.out.find("\"code\":\"handler_failed\"") != std::string::npos);
  CHECK(run.out.find("cannot append to the capture file") != std::string::npos);
}

TEST_CASE("two listeners on one SQLite file: the second waits (503) until the first has stopped") {
  // `listen` runs the receiver's non-transactional mode with in-process claims, which are safe
  // only while one process uses the file: the first takes it alone (flock), the second is refused.
  const std::string dir = test::temp_dir("cli-two-listeners");
  const std::vector<std::string> args = listen_args({"--db", dir + "/shared.db"});
  auto first = std::make_unique<launcher::ChildProcess>("webhooks", args, dir);
  const std::string first_url = webhooks_url(*first);
  const std::string send = " --secret " + kSecret + " --type order.created --data '{}'";
  Run run = cli("send --url " + first_url + send);
  CHECK(run.code == 0);
  CHECK(run.out.find("status: 200\n") != std::string::npos);

  launcher::ChildProcess second("webhooks", args, dir);
  const std::string second_url = webhooks_url(second);
  run = cli("send --url " + second_url + send);
  CHECK(run.code == 1);
  CHECK(run.out.find("status: 503\n") != std::string::npos);
  CHECK(run.out.find("storage_unavailable") != std::string::npos);

  first.reset();  // SIGTERM, waited for: its lock is released
  run = cli("send --url " + second_url + send);
  CHECK(run.code == 0);
  CHECK(run.out.find("status: 200\n") != std::string::npos);
}

TEST_CASE("a malformed capture line is FILE:LINE: what is wrong, exit 2, nothing sent") {
  const std::string dir = test::temp_dir("cli-capture");
  const std::string good =
      R"({"headers":{"webhook-id":"msg_1","webhook-event-type":"t"},"body":"{}"})";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"not json", "not a JSON object"},
      {R"({"body":"{}"})", "no \"headers\" object"},
      {R"({"headers":{"webhook-id":1},"body":"{}"})", "no \"webhook-id\" string in \"headers\""},
      {R"({"headers":{"webhook-id":"msg_2"}})", "no \"body\" string"},
      {R"({"headers":{"webhook-id":"msg_2","webhook-event-type":2},"body":"{}"})",
       "\"webhook-event-type\" is not a string"},
  };
  for (const auto& [line, problem] : cases) {
    const std::string file = write(dir, "capture.jsonl", good + "\n\n" + line + "\n");
    // Port 1: a delivery sent would fail (exit 1); a bad file must fail before sending.
    check_usage_error("replay --capture " + file + " --url http://127.0.0.1:1/ --secret " + kSecret,
                      "webhooks: " + file + ":3: " + problem + "\n");
  }
}

TEST_CASE(
    "--admin-token on the command line wins over WEBHOOKS_ADMIN_TOKEN for every admin command") {
  httplib::Server publisher;
  std::mutex mutex;
  std::vector<std::string> tokens;
  const auto record = [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(mutex);
    tokens.push_back(req.get_header_value("Authorization"));
    res.status = 401;
  };
  publisher.Get(R"(/v1/.*)", record);
  publisher.Post(R"(/v1/.*)", record);
  const int port = webhooks::http::bind_server(publisher, "127.0.0.1", 0);
  std::thread serving([&] { publisher.listen_after_bind(); });
  const std::string url = " --publisher-url http://127.0.0.1:" + std::to_string(port);
  ::setenv("WEBHOOKS_ADMIN_TOKEN", "from-env", 1);
  CHECK(cli("events --admin-token from-flag" + url).code == 1);
  CHECK(cli("attempts --event evt_1 --admin-token from-flag" + url).code == 1);
  CHECK(cli("replay --event evt_1 --admin-token from-flag" + url).code == 1);
  CHECK(cli("events" + url).code == 1);
  ::unsetenv("WEBHOOKS_ADMIN_TOKEN");
  publisher.stop();
  serving.join();
  CHECK(tokens == std::vector<std::string>{"Bearer from-flag", "Bearer from-flag",
                                           "Bearer from-flag", "Bearer from-env"});
}

TEST_CASE(
    "send --data @FILE: 100,000 levels of nesting are refused before sending; numbers go out as "
    "written") {
  const std::string dir = test::temp_dir("cli-send-json");
  std::string deep;
  for (int i = 0; i < 100'000; ++i) deep += "{\"a\":";
  deep += "1" + std::string(100'000, '}');
  const std::string file = write(dir, "deep.json", deep);
  // Port 1: a delivery sent would fail (exit 1); the file must be refused first (exit 2).
  check_usage_error(
      "send --url http://127.0.0.1:1/x --secret " + kSecret + " --type t --data @" + file,
      "webhooks: --data @" + file +
          " is not JSON: invalid JSON: nested deeper than the limit of 127 arrays "
          "and objects\n");
  // 127 levels are sent (the delivered body adds one); 128 are refused.
  const auto nested = [](std::size_t depth) {  // an object holding depth - 1 nested arrays
    return "{\"a\":" + std::string(depth - 1, '[') + std::string(depth - 1, ']') + "}";
  };
  CHECK(cli("send --url http://127.0.0.1:1/x --secret " + kSecret + " --type t --data @" +
            write(dir, "127.json", nested(127)))
            .code == 1);
  CHECK(cli("send --url http://127.0.0.1:1/x --secret " + kSecret + " --type t --data @" +
            write(dir, "128.json", nested(128)))
            .code == 2);

  // What reaches the endpoint: the data compact, its number tokens byte for byte.
  std::mutex mutex;
  std::string received;
  httplib::Server server;
  server.Post("/hook", [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(mutex);
    received = req.body;
    res.set_content("{}", "application/json");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread serving([&] { server.listen_after_bind(); });
  const Run run =
      cli("send --url http://127.0.0.1:" + std::to_string(port) + "/hook --secret " + kSecret +
          " --type t --data '{ \"big\": 36893488147419103233, \"p\": 1.50 }'");
  server.stop();
  serving.join();
  CHECK(run.code == 0);
  std::lock_guard lock(mutex);
  CHECK(received.ends_with(R"(,"data":{"big":36893488147419103233,"p":1.50}})"));
}

TEST_CASE(
    "send --data @FILE of 32 MB to a server that refuses it: exit 1 with the reason, no SIGPIPE") {
  // Found by the red team: the listener answers 413 and closes after discarding 8 MiB; the CLI was
  // killed by SIGPIPE while still writing (exit 141, nothing printed).
  const std::string dir = test::temp_dir("cli-send-huge");
  launcher::ChildProcess listen("webhooks", listen_args({"--db", dir + "/listen.db"}), dir);
  const std::string url = webhooks_url(listen);
  const std::string file =
      write(dir, "huge.json", "{\"a\":\"" + std::string(32 * 1024 * 1024, 'x') + "\"}");
  check_cli("send --url " + url + " --secret " + kSecret + " --type t --data @" + file, 1,
            "webhooks send: no answer from " + url +
                ": the connection broke while the request was sent (a body over the "
                "server's limit?)\n");
}

TEST_CASE("send --id twice is the receiver's duplicate; an old --timestamp is refused") {
  const std::string dir = test::temp_dir("cli-send-id");
  CapturingListener listen(dir);
  const std::string& url = listen.url;
  const std::string send = "send --url " + url + " --secret " + kSecret + " --type order.created ";
  Run first = cli(send + "--data '{\"amount\":1000}'");
  REQUIRE(first.code == 0);
  const std::string id = first.out.substr(10, first.out.find('\n') - 10);  // "event_id: …"
  // The same UUIDv7 and data: the same body (its timestamp is the id's), so a duplicate.
  Run again = cli(send + "--data '{\"amount\":1000}' --id " + id);
  CHECK(again.code == 0);
  CHECK(again.out == "event_id: " + id + "\nstatus: 200\n{\"received\":true}\n");
  const std::string capture = test::read_file(dir + "/capture.jsonl");
  CHECK(std::count(capture.begin(), capture.end(), '\n') == 1);
  // Other data under that id: 422, exit 1.
  Run other = cli(send + "--data '{\"amount\":1}' --id " + id);
  CHECK(other.code == 1);
  CHECK(other.out == "event_id: " + id +
                         "\nstatus: 422\n"
                         R"({"error":{"code":"event_id_reused","message":"this event id was )"
                         R"(already received with a different body"}})"
                         "\n");
  // A timestamp far outside the tolerance.
  Run old = cli(send + "--data '{}' --id evt_old --timestamp 1000");
  CHECK(old.code == 1);
  CHECK(old.out.starts_with("event_id: evt_old\nstatus: 401\n"));
  CHECK(old.out.find("timestamp_out_of_tolerance") != std::string::npos);
  // Usage errors (exit 2), nothing sent.
  CHECK(cli(send + "--data '{}' --id 'two words'").out ==
        "webhooks: --id must be 1 to 255 printable ASCII characters without spaces\n");
  CHECK(cli(send + "--data '{}' --id ''").out ==
        "webhooks: --id must be 1 to 255 printable ASCII characters without spaces\n");
  CHECK(cli(send + "--data '{}' --header 'webhook-signature: v1,x'").out ==
        "webhooks: --header webhook-signature: send sets it (use --id, --timestamp, --secret or "
        "--signing-key)\n");
  CHECK(cli(send + "--data '{}' --header 'Content-Length: 9'").out ==
        "webhooks: --header Content-Length: send sets it for the request's framing\n");
  CHECK(cli(send + "--data '{}' --header 'no colon'").out ==
        "webhooks: --header must be \"Name: value\", not \"no colon\"\n");
  CHECK(listen.process.kill_and_wait(SIGTERM) == 0);
  const std::string out = listen.process.out();
  INFO(out);
  const auto lines_ending = [&](const std::string& tail) {
    std::size_t n = 0;
    for (std::size_t at = out.find(tail); at != std::string::npos; at = out.find(tail, at + 1)) ++n;
    return n;
  };
  CHECK(lines_ending("  new\n") == 1);
  CHECK(lines_ending("  duplicate\n") == 1);
}

TEST_CASE("send --signing-key signs v1a beside v1; --header adds or replaces a header") {
  const std::string dir = test::temp_dir("cli-send-headers");
  httplib::Server server;
  std::mutex mutex;
  httplib::Headers headers;
  std::string body;
  server.Post("/hook", [&](const httplib::Request& req, httplib::Response& res) {
    const std::lock_guard lock(mutex);
    headers = req.headers;
    body = req.body;
    res.set_content("{}", "application/json");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread thread([&] { server.listen_after_bind(); });
  // Any 32 bytes are an Ed25519 seed.
  const std::string signing_key = "whsk_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
  const std::string now = std::to_string(std::time(nullptr));
  Run run =
      cli("send --url http://127.0.0.1:" + std::to_string(port) + "/hook --secret " + kSecret +
          " --signing-key " + signing_key + " --type t --data '{}' --id evt_h --timestamp " + now +
          " --header 'X-Trace: abc ' --header 'user-agent: shop-test/1'");
  server.stop();
  thread.join();
  CHECK(run.out == "event_id: evt_h\nstatus: 200\n{}\n");
  CHECK(headers.find("X-Trace")->second == "abc");
  CHECK(headers.count("User-Agent") == 1);
  CHECK(headers.find("User-Agent")->second == "shop-test/1");
  CHECK(headers.find("webhook-id")->second == "evt_h");
  CHECK(headers.find("webhook-timestamp")->second == now);
  // The body's timestamp is --timestamp's (evt_h is no UUIDv7).
  const std::time_t seconds = std::stoll(now);
  char rfc3339[32];
  std::strftime(rfc3339, sizeof rfc3339, "%Y-%m-%dT%H:%M:%S.000Z", std::gmtime(&seconds));
  CHECK(body ==
        R"({"id":"evt_h","type":"t","timestamp":")" + std::string(rfc3339) + R"(","data":{}})");
  const std::string body_file = write(dir, "body", body);
  Run signed_ = cli("sign --secret " + kSecret + " --signing-key " + signing_key +
                    " --id evt_h --timestamp " + now + " --body-file " + body_file);
  REQUIRE(signed_.code == 0);
  const std::string signature_line = signed_.out.substr(signed_.out.rfind("webhook-signature: "));
  CHECK(signature_line == "webhook-signature: " + headers.find("webhook-signature")->second + "\n");
  CHECK(headers.find("webhook-signature")->second.find(" v1a,") != std::string::npos);
}
