// Several daemons on one database, and the SSRF check at endpoint creation, with real processes.
#include <signal.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "process.h"
#include "publisher/receiver.h"
#include "support/test_env.h"

namespace webhooks::test {
namespace {

using nlohmann::json;

std::vector<std::string> args_for(const std::string& db, bool allow_private) {
  std::vector<std::string> args{"--listen",
                                "127.0.0.1:0",
                                "--db",
                                db,
                                "--admin-token",
                                "t",
                                "--retry-schedule",
                                "200ms,200ms",
                                "--timeout",
                                "2s",
                                "--delivery-lease",
                                "3s",
                                "--poll-interval",
                                "20ms",
                                "--log-level",
                                "warn",
                                "--workers",
                                "2",
                                "--batch-size",
                                "4"};
  if (allow_private) args.push_back("--allow-private-networks");
  return args;
}

httplib::Headers auth() { return {{"Authorization", "Bearer t"}}; }

long succeeded_attempts(int port) {
  httplib::Client client("127.0.0.1", port);
  const auto res = client.Get("/metrics");
  if (!res) return -1;
  std::smatch m;
  static const std::regex line(R"(webhooks_attempts_total\{outcome="succeeded"\} (\d+))");
  return std::regex_search(res->body, m, line) ? std::stol(m[1]) : -1;
}

// Endpoint URLs the SSRF check refuses: loopback in other spellings, shared address space, a name
// that resolves to loopback.
const char* const kPrivateUrls[] = {
    "http://127.1/",      "http://0x7f000001/", "http://[::ffff:127.0.0.1]/",
    "http://100.64.0.1/", "http://localhost/",
};
const char* const kFtpUrl = "ftp://example.com/";

json endpoint_for(const char* url) { return json{{"merchant_id", "m1"}, {"url", url}}; }

TEST_CASE("endpoint URLs into private networks are refused at creation", "[daemon][ssrf]") {
  Daemon daemon(args_for(database_target("ssrf"), false), temp_dir("publisherd-ssrf"));
  httplib::Client client("127.0.0.1", daemon.wait_listening());
  for (const char* url : kPrivateUrls) {
    const json body{{"merchant_id", "m1"}, {"url", url}};
    const auto res = client.Post("/v1/endpoints", auth(), body.dump(), "application/json");
    REQUIRE(res);
    INFO(url << " -> " << res->body);
    CHECK(res->status == 422);
    CHECK(json::parse(res->body)["error"]["code"] == "url_not_allowed");
  }
  const json ftp = endpoint_for(kFtpUrl);
  CHECK(client.Post("/v1/endpoints", auth(), ftp.dump(), "application/json")->status == 422);
}

// 300 events ingested through `client` (keys k0 to k299); halfway, no event in `seen` (webhook-id
// -> deliveries, under `mutex`) was delivered twice. Their event ids.
std::vector<std::string> ingest_300(httplib::Client& client_a, std::mutex& mutex,
                                    const std::map<std::string, int>& seen) {
  constexpr int kEvents = 300;
  std::vector<std::string> ids;
  for (int i = 0; i < kEvents; ++i) {
    httplib::Headers headers = auth();
    headers.emplace("Idempotency-Key", "k" + std::to_string(i));
    const json body{{"merchant_id", "m1"}, {"type", "order.created"}, {"data", {{"n", i}}}};
    const auto res = client_a.Post("/v1/events", headers, body.dump(), "application/json");
    REQUIRE(res);
    REQUIRE(res->status == 202);
    ids.push_back(json::parse(res->body)["event_id"]);
    if (i == kEvents / 2) {
      // Both are delivering by now; no event was attempted twice while both lived.
      std::lock_guard lock(mutex);
      for (const auto& [id, count] : seen) CHECK(count == 1);
    }
  }
  return ids;
}

// How many of `ids` `seen` lacks once it has them all, or after 30 s.
std::size_t missing_after_30s(const std::vector<std::string>& ids, std::mutex& mutex,
                              const std::map<std::string, int>& seen) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  std::size_t missing = ids.size();
  while (std::chrono::steady_clock::now() < deadline && missing > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::lock_guard lock(mutex);
    missing = 0;
    for (const auto& id : ids) missing += seen.count(id) == 0;
  }
  return missing;
}

TEST_CASE("two daemons on one database share the work; a killed one's tasks finish on the other",
          "[daemon][cluster]") {
  if (engine() != db::Engine::postgres) {
    SUCCEED("several daemons share one database on PostgreSQL");
    return;
  }
  const std::string db = database_target("cluster");
  const std::string dir = temp_dir("publisherd-cluster");
  std::mutex mutex;
  std::map<std::string, int> seen;
  Receiver receiver([&](std::size_t, const Received& r) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    std::lock_guard lock(mutex);
    ++seen[r.header("webhook-id")];
    return Receiver::Reply{200, {}};
  });
  Daemon a(args_for(db, true), dir);
  const int port_a = a.wait_listening();
  Daemon b(args_for(db, true), dir);
  const int port_b = b.wait_listening();
  httplib::Client client_a("127.0.0.1", port_a);
  const json endpoint{{"merchant_id", "m1"}, {"url", receiver.url()}};
  REQUIRE(client_a.Post("/v1/endpoints", auth(), endpoint.dump(), "application/json")->status ==
          201);
  const std::vector<std::string> ids = ingest_300(client_a, mutex, seen);
  const long by_a = succeeded_attempts(port_a), by_b = succeeded_attempts(port_b);
  CHECK(by_a > 0);
  CHECK(by_b > 0);
  b.kill_and_wait(SIGKILL);  // its leased tasks lapse and finish on a
  CHECK(missing_after_30s(ids, mutex, seen) == 0);
  CHECK(WEXITSTATUS(a.kill_and_wait(SIGTERM)) == 0);
}

}  // namespace
}  // namespace webhooks::test
