// webhooks::http::Server (webhooks/http_server.h): the httplib::Server subclass that hands each
// accepted socket to its event loop (detail/event_loop.h), and the route registration that shows
// handlers the Content-Type as sent.
#include <unistd.h>

#include <string_view>
#include <utility>
#include <vector>

#include "detail/event_loop.h"
#include "detail/request_framing.h"
#include "webhooks/http_server.h"

namespace webhooks::http {

namespace {

// Runs each accepted socket's hand-over on httplib's listening thread (it only queues the socket
// for the loop), and starts and stops the loop with listen_after_bind().
class AcceptQueue final : public httplib::TaskQueue {
 public:
  explicit AcceptQueue(std::shared_ptr<detail::EventLoops> loop) : loop_(std::move(loop)) {}
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override { loop_->shutdown(); }

 private:
  std::shared_ptr<detail::EventLoops> loop_;
};

// httplib parses these two body types instead of storing the bytes in req.body (and answers 413
// for a form over 8 KiB); a leading space makes its prefix checks miss them.
constexpr std::string_view kParsedTypes[] = {"application/x-www-form-urlencoded",
                                             "multipart/form-data"};

void hide_parsed_type(httplib::Request& req) {
  const auto it = req.headers.find("Content-Type");
  if (it == req.headers.end()) return;
  for (const std::string_view type : kParsedTypes) {
    if (it->second.rfind(type, 0) == 0) {
      it->second = " " + it->second;
      return;
    }
  }
}

// cpp-httplib 0.11 percent-decodes every header value it parses ("K%2Fx" reaches a handler as
// "K/x"): each value that held '%' is set back to the bytes received, the k-th line of a name to
// the k-th value httplib keeps for it.
void restore_header_values(httplib::Request& req, std::string_view head) {
  std::vector<std::pair<std::string_view, std::string_view>> fields;
  detail::for_each_field(head, [&](std::string_view name, std::string_view value) {
    fields.emplace_back(name, value);
  });
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const auto [name, value] = fields[i];
    if (value.find('%') == std::string_view::npos) continue;
    std::size_t nth = 0;
    for (std::size_t j = 0; j < i; ++j) {
      nth += detail::ascii_iequals(fields[j].first, name);
    }
    auto [it, end] = req.headers.equal_range(std::string(name));
    for (; it != end && nth > 0; ++it) --nth;
    if (it != end) it->second = std::string(value);
  }
}

Server::Handler restoring(Server::Handler handler) {
  return [handler = std::move(handler)](const httplib::Request& req, httplib::Response& res) {
    auto& headers = const_cast<httplib::Request&>(req).headers;
    if (const auto it = headers.find("Content-Type");
        it != headers.end() && it->second.starts_with(' ')) {
      for (const std::string_view type : kParsedTypes) {
        if (std::string_view(it->second).substr(1).starts_with(type)) {
          it->second.erase(0, 1);
          break;
        }
      }
    }
    handler(req, res);
  };
}

}  // namespace

Server::Server() {
  new_task_queue = [this]() -> httplib::TaskQueue* {
    auto loop = std::make_shared<detail::EventLoops>(*this, tuning_);
    loop->start();
    {
      std::lock_guard lock(loop_mutex_);
      loop_ = loop;
    }
    return new AcceptQueue(loop);
  };
}

Server::~Server() {
  stop();
  std::shared_ptr<detail::EventLoops> loop = current_loop();
  if (loop) loop->shutdown();
}

std::shared_ptr<detail::EventLoops> Server::current_loop() const {
  std::lock_guard lock(loop_mutex_);
  return loop_;
}

Server& Server::Get(const std::string& pattern, Handler handler) {
  httplib::Server::Get(pattern, restoring(std::move(handler)));
  return *this;
}
Server& Server::Post(const std::string& pattern, Handler handler) {
  httplib::Server::Post(pattern, restoring(std::move(handler)));
  return *this;
}
Server& Server::Put(const std::string& pattern, Handler handler) {
  httplib::Server::Put(pattern, restoring(std::move(handler)));
  return *this;
}
Server& Server::Patch(const std::string& pattern, Handler handler) {
  httplib::Server::Patch(pattern, restoring(std::move(handler)));
  return *this;
}
Server& Server::Delete(const std::string& pattern, Handler handler) {
  httplib::Server::Delete(pattern, restoring(std::move(handler)));
  return *this;
}
Server& Server::Options(const std::string& pattern, Handler handler) {
  httplib::Server::Options(pattern, restoring(std::move(handler)));
  return *this;
}

void Server::set_tuning(const ServerTuning& tuning) { tuning_ = tuning; }

std::size_t Server::open_connections() const {
  const auto loop = current_loop();
  return loop ? loop->open_connections() : 0;
}

std::size_t Server::idle_connections() const {
  const auto loop = current_loop();
  return loop ? loop->idle_connections() : 0;
}

bool Server::process_and_close_socket(socket_t sock) {
  const auto loop = current_loop();
  if (!loop) {
    ::close(sock);
    return false;
  }
  loop->add(sock);
  return true;
}

bool Server::serve(httplib::Stream& stream, std::string_view raw_head, bool close_connection,
                   bool& connection_closed) {
  return process_request(stream, close_connection, connection_closed,
                         [raw_head](httplib::Request& req) {
                           if (!raw_head.empty()) restore_header_values(req, raw_head);
                           hide_parsed_type(req);
                         });
}

}  // namespace webhooks::http
