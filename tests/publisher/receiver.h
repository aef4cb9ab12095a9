// A webhook endpoint for tests: a cpp-httplib server on 127.0.0.1 in its own thread that records
// every request and answers with a scripted status (default 200).
#pragma once

#include <httplib.h>

#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace webhooks::test {

struct Received {
  httplib::Headers headers;
  std::string body;
  std::chrono::steady_clock::time_point arrived_at;
  std::string header(const std::string& name) const {
    const auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
};

class Receiver {
 public:
  // The answer to the nth request (0-based): status and extra headers.
  struct Reply {
    int status = 200;
    httplib::Headers headers;
  };
  using Script = std::function<Reply(std::size_t n, const Received& request)>;

  explicit Receiver(Script script = {});
  ~Receiver();
  Receiver(const Receiver&) = delete;
  Receiver& operator=(const Receiver&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/hook"; }
  std::vector<Received> received() const;
  std::size_t count() const;
  void set_script(Script script);

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::vector<Received> received_;
  Script script_;
};

// Answers the nth request with list[n], and every later one with the last entry.
Receiver::Script statuses(std::vector<int> list);

}  // namespace webhooks::test
