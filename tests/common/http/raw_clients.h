// Raw clients of webhooks::http::Server for the HTTP tests (http_slow_clients_test.cc,
// http_answers_test.cc): connections on 127.0.0.1, whole sends, reads to the close, a served
// server on its own thread, a timed GET.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>

#include "support/chunked_post.h"
#include "support/serving_thread.h"
#include "webhooks/http_server.h"

namespace webhooks::test {

using Clock = std::chrono::steady_clock;

// A connection to 127.0.0.1:port, nothing sent.
inline int connect_to(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  int yes = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
  timeval timeout{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  return fd;
}

inline void send_all(int fd, const std::string& data) {
  REQUIRE(::send(fd, data.data(), data.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(data.size()));
}

// Everything until the server closes the connection (or 5 s pass without a byte).
inline std::string read_until_close(int fd, bool& closed) {
  std::string out;
  char buffer[4096];
  while (true) {
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) {
      closed = n == 0;
      return out;
    }
    out.append(buffer, static_cast<std::size_t>(n));
  }
}

// Sends `data` on a new connection (then, with `half_close`, shuts down the sending side: FIN) and
// reads everything until the server closes it (`closed`) or 5 s pass without a byte.
inline std::string send_until_close(int port, const std::string& data, bool& closed,
                                    bool half_close = false) {
  const int fd = connect_to(port);
  send_all(fd, data);
  if (half_close) ::shutdown(fd, SHUT_WR);
  std::string out = read_until_close(fd, closed);
  ::close(fd);
  return out;
}

// Room for the test's client sockets and the server's: 2 x 1,300 and more.
inline void raise_open_files() {
  rlimit limit{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &limit) == 0);
  if (limit.rlim_cur < 4096) {
    limit.rlim_cur = std::min<rlim_t>(limit.rlim_max, 8192);
    ::setrlimit(RLIMIT_NOFILE, &limit);
  }
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &limit) == 0);
  REQUIRE(limit.rlim_cur >= 3000);
}

struct Served {
  explicit Served(webhooks::http::ServerTuning tuning = {},
                  webhooks::http::Bodies bodies = webhooks::http::Bodies::any) {
    webhooks::http::limit_request_bodies(server, 1024 * 1024, nullptr, bodies);
    server.Get("/fast", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("ok", "text/plain");
    });
    server.Post("/echo", [](const httplib::Request& req, httplib::Response& res) {
      res.set_content(req.get_header_value("Content-Type") + "|" + std::to_string(req.body.size()) +
                          "|" + std::to_string(req.params.size()),
                      "text/plain");
    });
    port = serving.start(server, tuning);
  }
  // Waits (bounded) until the server counts `n` open connections.
  void expect_open(std::size_t n) {
    for (int i = 0; i < 200000 && server.open_connections() != n; ++i) std::this_thread::yield();
    REQUIRE(server.open_connections() == n);
  }
  // Waits (bounded) until the server counts `n` idle connections; whether it does.
  bool wait_idle(std::size_t n) {
    for (int i = 0; i < 200000 && server.idle_connections() != n; ++i) std::this_thread::yield();
    return server.idle_connections() == n;
  }
  webhooks::http::Server server;
  int port = 0;
  webhooks::test::ServingThread serving;
};

// A tuning of at most `n` connections.
inline webhooks::http::ServerTuning max_connections(std::size_t n) {
  webhooks::http::ServerTuning tuning;
  tuning.max_connections = n;
  return tuning;
}

const std::string kGetFast = "GET /fast HTTP/1.1\r\nHost: a\r\n\r\n";

// Milliseconds for a GET /fast on a new connection, its answer checked.
inline double timed_get(int port) {
  const auto t0 = Clock::now();
  const int fd = connect_to(port);
  send_all(fd, kGetFast);
  std::string answer;
  read_answer(fd, answer);
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  ::close(fd);
  CHECK(answer.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(body_of(answer) == "ok");
  return ms;
}

}  // namespace webhooks::test
