// Shared by the console's store and route tests: events with an Idempotency-Key, and attempts
// recorded the way the dispatcher records them (claim, then Store::record).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "fixture.h"
#include "webhooks/http_server.h"

namespace webhooks::test {

// The admin token of ServedFixture, named "admin".
inline constexpr const char* kToken = "console-token";

// A PublisherFixture's admin API and console served on loopback (a free port) from a thread.
struct ServedFixture {
  PublisherFixture f;
  http::Server server;
  int port = 0;
  std::thread thread;

  // `tokens`: named tokens besides kToken (named admin).
  explicit ServedFixture(const std::string& label, std::vector<publisher::Principal> tokens = {});
  ~ServedFixture();
  // {status, body as JSON (null when empty)} of `method` (GET, POST, PATCH or DELETE) with the
  // bearer `token`; a body is sent as application/json.
  std::pair<int, nlohmann::json> call(const std::string& method, const std::string& path,
                                      const std::string& body = "",
                                      const std::string& token = kToken);
};

enum class Outcome { succeeded, retry, dead };

// The ids of a page's events, in order.
std::vector<std::string> event_ids(const publisher::EventPage& page);
// Ingests over the HTTP handler with `key` as Idempotency-Key; returns the event id.
std::string ingest_with_key(PublisherFixture& f, const std::string& merchant,
                            const std::string& type, const std::string& key);
// Claims every due task and settles those of the events named: succeeded (200), retry (503, due
// again in an hour) or dead (500); the others are released. Attempts start at now, take 10 ms.
void settle_all(PublisherFixture& f, const std::map<std::string, Outcome>& outcomes);
// Claims one due task (REQUIRE one) and records one attempt started at `started_at` with
// `status` and `latency_ms`; the task is due again at once (a retry).
void attempt_once(PublisherFixture& f, int status, std::int64_t latency_ms, UnixMillis started_at);

}  // namespace webhooks::test
