// A cpp-httplib server on 127.0.0.1 and a free port, for tests that need real HTTP. It applies
// the four settings DESIGN.md ("Known library traps") asks of every server here: TCP_NODELAY, a
// thread pool sized to the expected connections, a raised keep-alive count, and a listen backlog
// of 4096 instead of Debian's compiled-in 5 (SO_REUSEADDR set by hand, since set_socket_options
// replaces the default).
#pragma once

#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <functional>
#include <string>
#include <thread>

namespace webhooks::test {

class TestHttpServer {
 public:
  // `routes` registers the handlers before the server starts; `threads` sizes the pool.
  explicit TestHttpServer(const std::function<void(httplib::Server&)>& routes,
                          std::size_t threads = 128) {
    routes(server_);
    server_.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    server_.set_tcp_nodelay(true);
    server_.set_keep_alive_max_count(100'000);
    server_.set_socket_options([this](socket_t fd) {
      const int yes = 1;
      setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
      listen_fd_ = fd;
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    REQUIRE(port_ > 0);
    REQUIRE(::listen(listen_fd_, 4096) == 0);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::yield();  // so stop() always takes effect
  }
  ~TestHttpServer() {
    server_.stop();
    thread_.join();
  }
  TestHttpServer(const TestHttpServer&) = delete;
  TestHttpServer& operator=(const TestHttpServer&) = delete;

  int port() const { return port_; }
  // "http://127.0.0.1:<port><path>"
  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }

 private:
  httplib::Server server_;
  socket_t listen_fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

// A port on 127.0.0.1 where nobody listens: the socket is bound (so no one else takes the port)
// but never listens, so connecting is refused. Closed when the object goes.
class RefusingPort {
 public:
  RefusingPort() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
    socklen_t len = sizeof(addr);
    REQUIRE(::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    port_ = ntohs(addr.sin_port);
  }
  ~RefusingPort() { ::close(fd_); }
  RefusingPort(const RefusingPort&) = delete;
  RefusingPort& operator=(const RefusingPort&) = delete;
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

}  // namespace webhooks::test
