// A server of a test bound on 127.0.0.1 (a free port) and listening on a thread of its own until
// stop() or the end: declare it after the server it serves.
#pragma once

#include <functional>
#include <thread>

#include "webhooks/http_server.h"

namespace webhooks::test {

class ServingThread {
 public:
  ServingThread() = default;
  ServingThread(const ServingThread&) = delete;
  ServingThread& operator=(const ServingThread&) = delete;
  ~ServingThread() { stop(); }

  // Binds `server` (bind_server with `tuning`) and starts listen_after_bind(); the port.
  template <typename HttpServer>
  int start(HttpServer& server, const webhooks::http::ServerTuning& tuning = {}) {
    const int port = webhooks::http::bind_server(server, "127.0.0.1", 0, tuning);
    stop_ = [&server] { server.stop(); };
    thread_ = std::thread([&server] { server.listen_after_bind(); });
    return port;
  }

  // Stops the server and joins the thread; nothing the second time.
  void stop() {
    if (!thread_.joinable()) return;
    stop_();
    thread_.join();
  }

 private:
  std::function<void()> stop_;
  std::thread thread_;
};

}  // namespace webhooks::test
