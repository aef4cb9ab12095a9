// What a server answers over HTTP while its PostgreSQL is frozen (support/own_postgres.h): timed
// requests, the sign-in page and /healthz probed while requests that need the database wait, and
// the checks of their answers. For the pg_freeze tests of orders-api and webhooks-publisherd.
#pragma once

#include <httplib.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/own_postgres.h"

namespace webhooks::test {

// One request's answer (answered false when the connection failed) and how long it took.
struct TimedAnswer {
  bool answered = false;
  int status = 0;
  std::string body;
  std::string retry_after;
  long long ms = 0;
  std::string error_code() const {
    return nlohmann::json::parse(body)["error"]["code"].get<std::string>();
  }
};

// Times `request` (an httplib::Result). Asserts nothing (it runs on the test's threads too).
template <typename Request>
TimedAnswer timed_answer(Request request) {
  const auto start = std::chrono::steady_clock::now();
  const httplib::Result result = request();
  TimedAnswer timed;
  timed.ms = ms_since(start);
  if (result) {
    timed.answered = true;
    timed.status = result->status;
    timed.body = result->body;
    timed.retry_after = result->get_header_value("Retry-After");
  }
  return timed;
}

// A GET on 127.0.0.1:port, with `Authorization: Bearer token` unless `token` is empty, a new
// connection and a 30-second read timeout. Asserts nothing.
inline TimedAnswer timed_get(int port, const std::string& path, const std::string& token = "") {
  httplib::Client http("127.0.0.1", port);
  http.set_read_timeout(std::chrono::seconds(30));
  httplib::Headers headers;
  if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
  return timed_answer([&] { return http.Get(path.c_str(), headers); });
}

// 503 storage_unavailable with Retry-After: 1 within `limit_ms`.
inline void check_storage_unavailable(const TimedAnswer& answer, long long limit_ms) {
  REQUIRE(answer.answered);
  INFO("took " << answer.ms << " ms: " << answer.body);
  CHECK(answer.status == 503);
  CHECK(answer.error_code() == "storage_unavailable");
  CHECK(answer.retry_after == "1");
  CHECK(answer.ms < limit_ms);
}

// Sends `count` requests that need the frozen database at once (`request(i)` for each i, on
// threads of their own) while the server on `port` is asked for its sign-in page (200) and
// /healthz (503 storage_unavailable, the database is unreachable, within 1 s) over and over; the
// sign-in page is served at least once while they wait, within 1 s. Then each of them is 503
// storage_unavailable within the bounds (a pool wait of 300 ms and two statements' waits of
// 300 + 250 ms, with room for a loaded machine); the timings are WARNed.
inline void check_served_while_frozen(int port, int count,
                                      const std::function<TimedAnswer(int)>& request) {
  std::vector<TimedAnswer> answers(static_cast<std::size_t>(count));
  std::vector<std::function<void()>> stuck;
  for (int i = 0; i < count; ++i) {
    stuck.emplace_back([&, i] { answers[static_cast<std::size_t>(i)] = request(i); });
  }
  int logins_meanwhile = 0, health_checks = 0;
  long long slowest_login = 0, slowest_health = 0;
  probe_while_stuck(stuck, [&](const auto& still_waiting) {
    const TimedAnswer login = timed_get(port, "/console/login");
    REQUIRE(login.answered);
    CHECK(login.status == 200);
    slowest_login = std::max(slowest_login, login.ms);
    if (still_waiting()) ++logins_meanwhile;
    const TimedAnswer health = timed_get(port, "/healthz");
    REQUIRE(health.answered);
    CHECK(health.ms < 1000);
    slowest_health = std::max(slowest_health, health.ms);
    CHECK(health.status == 503);
    CHECK(health.retry_after == "1");
    const nlohmann::json body = nlohmann::json::parse(health.body);
    CHECK(body["error"]["code"] == "storage_unavailable");
    CHECK(body["error"]["message"].get<std::string>().starts_with("the database is unreachable"));
    ++health_checks;
  });
  INFO("sign-in pages served while the requests waited: " << logins_meanwhile);
  CHECK(logins_meanwhile >= 1);
  CHECK(slowest_login < 1000);
  for (const TimedAnswer& answer : answers) check_storage_unavailable(answer, 3000);
  WARN("frozen: DB requests answered in "
       << answers.front().ms << ".." << answers.back().ms << " ms, sign-in page at most "
       << slowest_login << " ms, " << health_checks << " /healthz checks, the slowest "
       << slowest_health << " ms");
}

}  // namespace webhooks::test
