// The admin API of webhooks-publisherd from a test: an HTTP client with the daemon tests' token,
// the body and the error code of an answer, and a bounded wait.
#pragma once

#include <httplib.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace webhooks::test {

constexpr const char* kToken = "test-token";

struct Client {
  explicit Client(int port, std::chrono::seconds read_timeout = std::chrono::seconds(10))
      : http("127.0.0.1", port) {
    http.set_connection_timeout(std::chrono::seconds(2));
    http.set_read_timeout(read_timeout);
  }
  httplib::Result post(const std::string& path, const nlohmann::json& body,
                       const std::string& key = "", const std::string& token = kToken) {
    httplib::Headers headers{{"Authorization", "Bearer " + token}};
    if (!key.empty()) headers.emplace("Idempotency-Key", key);
    return http.Post(path.c_str(), headers, body.dump(), "application/json");
  }
  httplib::Result get(const std::string& path, const std::string& token = kToken) {
    return http.Get(path.c_str(), {{"Authorization", "Bearer " + token}});
  }
  httplib::Client http;
};

// The flags the daemon tests start webhooks-publisherd with (loopback, `db`, the test token,
// private networks allowed, warn logs, a 20 ms poll), then `extra`.
inline std::vector<std::string> publisherd_args(const std::string& db,
                                                std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"--listen", "127.0.0.1:0", "--db", db, "--admin-token", kToken};
  args.insert(args.end(), {"--allow-private-networks", "--log-level", "warn"});
  args.insert(args.end(), {"--poll-interval", "20ms"});
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// The answer's body as JSON; REQUIREs an answer.
inline nlohmann::json body_of(const httplib::Result& res) {
  REQUIRE(res);
  return nlohmann::json::parse(res->body);
}

inline std::string error_code(const httplib::Result& res) {
  return nlohmann::json::parse(res->body)["error"]["code"].get<std::string>();
}

// Waits (real time, up to `limit`) until `done` holds.
template <typename F>
bool eventually(F done, std::chrono::seconds limit = std::chrono::seconds(30)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

}  // namespace webhooks::test
