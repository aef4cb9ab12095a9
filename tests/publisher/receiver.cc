#include "receiver.h"

#include "webhooks/http_server.h"

namespace webhooks::test {

Receiver::Receiver(Script script) : script_(std::move(script)) {
  server_.Post("/hook", [this](const httplib::Request& req, httplib::Response& res) {
    Received r{req.headers, req.body, std::chrono::steady_clock::now()};
    Reply reply;
    {
      std::lock_guard lock(mutex_);
      if (script_) reply = script_(received_.size(), r);
      received_.push_back(std::move(r));
    }
    res.status = reply.status;
    res.set_header("Connection", "close");  // no idle keep-alive to wait out at shutdown
    for (const auto& [name, value] : reply.headers) res.set_header(name, value);
    res.set_content("{\"ok\":" + std::string(reply.status < 300 ? "true" : "false") + "}",
                    "application/json");
  });
  port_ = http::bind_server(server_, "127.0.0.1", 0);  // 64 threads, backlog 4096
  thread_ = std::thread([this] { server_.listen_after_bind(); });
}

Receiver::~Receiver() {
  // cpp-httplib 0.11's stop() does nothing before listen_after_bind() has started: a receiver
  // destroyed that early left its thread in accept() for good (seen once in fanout_test).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!server_.is_running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  server_.stop();
  thread_.join();
}

std::vector<Received> Receiver::received() const {
  std::lock_guard lock(mutex_);
  return received_;
}

std::size_t Receiver::count() const {
  std::lock_guard lock(mutex_);
  return received_.size();
}

void Receiver::set_script(Script script) {
  std::lock_guard lock(mutex_);
  script_ = std::move(script);
}

Receiver::Script statuses(std::vector<int> list) {
  return [list](std::size_t n, const Received&) {
    return Receiver::Reply{n < list.size() ? list[n] : list.back(), {}};
  };
}

}  // namespace webhooks::test
