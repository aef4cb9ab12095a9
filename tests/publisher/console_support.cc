#include "console_support.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "webhooks/uuid.h"

namespace webhooks::test {

ServedFixture::ServedFixture(const std::string& label, std::vector<publisher::Principal> tokens)
    : f(label, [&](publisher::Options& o) {
        o.admin_token = kToken;
        o.tokens = tokens;
      }) {
  f.publisher->mount(server);
  port = http::bind_server(server, "127.0.0.1", 0, f.publisher->options().server);
  thread = std::thread([this] { server.listen_after_bind(); });
}

ServedFixture::~ServedFixture() {
  http::stop_server(server, port);
  thread.join();
}

std::pair<int, nlohmann::json> ServedFixture::call(const std::string& method,
                                                   const std::string& path, const std::string& body,
                                                   const std::string& token) {
  httplib::Client client("127.0.0.1", port);
  const httplib::Headers headers{{"Authorization", "Bearer " + token}};
  const auto send = [&]() -> httplib::Result {
    if (method == "GET") return client.Get(path.c_str(), headers);
    if (method == "PATCH") return client.Patch(path.c_str(), headers, body, "application/json");
    if (method == "DELETE") return client.Delete(path.c_str(), headers, body, "application/json");
    return client.Post(path.c_str(), headers, body, "application/json");
  };
  const httplib::Result res = send();
  REQUIRE(res);
  return {res->status, res->body.empty() ? nlohmann::json() : nlohmann::json::parse(res->body)};
}
namespace {

using publisher::Settlement;

Settlement settlement(const publisher::ClaimedTask& c, int status, std::int64_t latency_ms,
                      UnixMillis started_at, Settlement::Next next, UnixMillis next_at) {
  static UuidV7Generator ids(system_clock());
  Settlement s;
  s.attempt.delivery_id = ids.next();
  s.attempt.task_id = c.task.id;
  s.attempt.event_id = c.task.event_id;
  s.attempt.endpoint_id = c.task.endpoint_id;
  s.attempt.attempt_number = c.task.attempts + 1;
  s.attempt.started_at = started_at;
  s.attempt.status = status;
  s.attempt.latency_ms = latency_ms;
  s.lease_owner = c.lease_owner;
  s.next = next;
  s.next_attempt_at = next_at;
  s.endpoint_failed = status < 200 || status >= 300;
  return s;
}

}  // namespace

std::vector<std::string> event_ids(const publisher::EventPage& page) {
  std::vector<std::string> ids;
  for (const auto& e : page.events) ids.push_back(e.event_id);
  return ids;
}

std::string ingest_with_key(PublisherFixture& f, const std::string& merchant,
                            const std::string& type, const std::string& key) {
  const std::string body =
      R"({"merchant_id":")" + merchant + R"(","type":")" + type + R"(","data":{"n":1}})";
  const auto answer = f.ingest.handle(f.guard, key, body);
  REQUIRE(answer.status == 202);
  return nlohmann::json::parse(answer.body).at("event_id").get<std::string>();
}

void settle_all(PublisherFixture& f, const std::map<std::string, Outcome>& outcomes) {
  const UnixMillis now = f.clock.now_ms();
  const auto claimed = f.store.claim("settle", 100, now, now + 60'000);
  std::vector<Settlement> records;
  for (const auto& c : claimed) {
    const auto it = outcomes.find(c.task.event_id);
    if (it == outcomes.end()) continue;
    switch (it->second) {
      case Outcome::succeeded:
        records.push_back(settlement(c, 200, 10, now, Settlement::Next::succeeded, now));
        break;
      case Outcome::retry:
        records.push_back(settlement(c, 503, 10, now, Settlement::Next::retry, now + 3'600'000));
        break;
      case Outcome::dead:
        records.push_back(settlement(c, 500, 10, now, Settlement::Next::dead, now));
        break;
    }
  }
  f.store.record(records, now);
  f.store.release("settle", now);
}

void attempt_once(PublisherFixture& f, int status, std::int64_t latency_ms, UnixMillis started_at) {
  const UnixMillis now = f.clock.now_ms();
  const auto claimed = f.store.claim("once", 1, now, now + 60'000);
  REQUIRE(claimed.size() == 1);
  f.store.record(
      {settlement(claimed[0], status, latency_ms, started_at, Settlement::Next::retry, now)}, now);
}

}  // namespace webhooks::test
