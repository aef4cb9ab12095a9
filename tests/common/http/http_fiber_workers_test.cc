// webhooks::http::Server with fiber workers (ServerTuning::fiber_threads) over real HTTP on
// 127.0.0.1: a handler that waits suspends its fiber, not the thread, so one thread serves the
// other requests meanwhile, and a client that does not read its answer holds up no one.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <map>
#include <mutex>
#include <semaphore>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "detail/fiber.h"
#include "support/chunked_post.h"
#include "support/serving_thread.h"
#include "webhooks/http_server.h"

using webhooks::test::body_of;
using webhooks::test::read_answer;

namespace {

// A server with `threads` fiber threads (one event loop each); `routes` adds the handlers.
struct FiberServed {
  template <typename Routes>
  explicit FiberServed(Routes routes, std::size_t threads = 1, std::size_t max_connections = 4096) {
    webhooks::http::limit_request_bodies(server, 1024 * 1024);
    server.Get("/fast", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("ok", "text/plain");
    });
    routes(server);
    webhooks::http::ServerTuning tuning;
    tuning.fiber_threads = threads;
    tuning.max_connections = max_connections;
    port = serving.start(server, tuning);
  }
  webhooks::http::Server server;
  int port = 0;
  webhooks::test::ServingThread serving;
};

std::string get(int port, const std::string& path) {
  return webhooks::test::raw_exchange(port, "GET " + path + " HTTP/1.1\r\nHost: a\r\n\r\n");
}

// GET `held` on a connection of its own, then GET `meanwhile` on another: both answers, the first
// read only once the second has come.
std::pair<std::string, std::string> get_while_held(int port, const std::string& held,
                                                   const std::string& meanwhile) {
  const int fd = webhooks::test::raw_send(port, "GET " + held + " HTTP/1.1\r\nHost: a\r\n\r\n");
  const std::string second = get(port, meanwhile);
  std::string first;
  read_answer(fd, first);
  ::close(fd);
  return {first, second};
}

}  // namespace

TEST_CASE("fiber workers: a handler waiting for another request does not hold the only thread") {
  webhooks::fibers::Wakeup arrived;
  FiberServed served([&](webhooks::http::Server& s) {
    s.Get("/wait", [&](const httplib::Request&, httplib::Response& res) {
      arrived.wait();  // on a pool of one thread this would wait forever: /notify could not run
      res.set_content("waited", "text/plain");
    });
    s.Get("/notify", [&](const httplib::Request&, httplib::Response& res) {
      arrived.notify();
      res.set_content("notified", "text/plain");
    });
  });
  const auto [waited, notified] = get_while_held(served.port, "/wait", "/notify");
  CHECK(notified.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(body_of(notified) == "notified");
  CHECK(waited.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(body_of(waited) == "waited");
}

TEST_CASE("fiber workers: a client that does not read its 8 MiB answer holds up no other request") {
  constexpr std::size_t kBig = 8 * 1024 * 1024;
  FiberServed served([](webhooks::http::Server& s) {
    s.Get("/big", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string(kBig, 'x'), "text/plain");
    });
  });
  // A client with a 4 KiB receive buffer sends the request, then reads nothing: the answer fills
  // the socket buffers and its writer waits (its fiber suspended) for room.
  const int stuck = ::socket(AF_INET, SOCK_STREAM, 0);
  const int small = 4096;
  ::setsockopt(stuck, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  timeval timeout{5, 0};
  ::setsockopt(stuck, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(served.port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(stuck, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  const std::string request = "GET /big HTTP/1.1\r\nHost: a\r\n\r\n";
  REQUIRE(::send(stuck, request.data(), request.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(request.size()));
  for (int i = 0; i < 3; ++i) {
    const std::string answer = get(served.port, "/fast");  // 5 s receive timeout per read
    CHECK(answer.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
    CHECK(body_of(answer) == "ok");
  }
  // The silent client reads its answer after all, whole.
  std::string big;
  read_answer(stuck, big);
  ::close(stuck);
  CHECK(big.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(body_of(big).size() == kBig);
  CHECK(body_of(get(served.port, "/fast")) == "ok");
}

TEST_CASE(
    "fiber workers: run_blocking runs a blocking call off the only thread, and returns its value") {
  std::binary_semaphore released{0};
  std::thread::id blocked_on, handled_on;
  FiberServed served([&](webhooks::http::Server& s) {
    s.Get("/blocking", [&](const httplib::Request&, httplib::Response& res) {
      handled_on = std::this_thread::get_id();
      const std::string body = webhooks::http::run_blocking([&] {
        blocked_on = std::this_thread::get_id();
        released.acquire();  // a call that blocks: the fiber thread serves /release meanwhile
        return std::string("unblocked");
      });
      res.set_content(body, "text/plain");
    });
    s.Get("/release", [&](const httplib::Request&, httplib::Response& res) {
      released.release();
      res.set_content("released", "text/plain");
    });
  });
  const auto [answer, release] = get_while_held(served.port, "/blocking", "/release");
  CHECK(body_of(release) == "released");
  CHECK(answer.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(body_of(answer) == "unblocked");
  CHECK(blocked_on != handled_on);
}

TEST_CASE(
    "run_blocking outside fiber workers runs the call right here; an exception reaches the "
    "caller") {
  std::thread::id ran_on;
  webhooks::http::run_blocking([&] { ran_on = std::this_thread::get_id(); });
  CHECK(ran_on == std::this_thread::get_id());
  CHECK(webhooks::http::run_blocking([] { return 42; }) == 42);
  CHECK_THROWS_WITH(
      webhooks::http::run_blocking([]() -> int { throw std::runtime_error("refused"); }),
      "refused");
}

TEST_CASE(
    "fiber workers: a regex route matches an 8,000-character path (std::regex recurses per "
    "character)") {
  FiberServed served([](webhooks::http::Server& s) {
    s.Get("/items/([^/]+)", [](const httplib::Request& req, httplib::Response& res) {
      res.set_content(std::to_string(req.matches[1].length()), "text/plain");
    });
  });
  const std::string answer = get(served.port, "/items/" + std::string(8000, 'A'));
  CHECK(answer.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(body_of(answer) == "8000");
  CHECK(body_of(get(served.port, "/fast")) == "ok");  // still serving
}

TEST_CASE(
    "fiber workers: a connection is served on one thread throughout, the connections dealt to the "
    "threads in turn") {
  std::mutex mutex;
  std::map<std::string, std::set<std::thread::id>> threads_of;  // by connection
  FiberServed served(
      [&](webhooks::http::Server& s) {
        s.Get("/who", [&](const httplib::Request& req, httplib::Response& res) {
          std::lock_guard lock(mutex);
          threads_of[req.get_header_value("X-Connection")].insert(std::this_thread::get_id());
          res.set_content("ok", "text/plain");
        });
      },
      2);
  std::vector<int> fds;
  for (int round = 0; round < 5; ++round) {
    for (int i = 0; i < 4; ++i) {
      const std::string request =
          "GET /who HTTP/1.1\r\nHost: a\r\nX-Connection: " + std::to_string(i) + "\r\n\r\n";
      if (round == 0) {
        fds.push_back(webhooks::test::raw_send(served.port, request));  // accepted in this order
      } else {
        REQUIRE(::send(fds[static_cast<std::size_t>(i)], request.data(), request.size(),
                       MSG_NOSIGNAL) == static_cast<ssize_t>(request.size()));
      }
      std::string answer;
      read_answer(fds[static_cast<std::size_t>(i)], answer);
      REQUIRE(body_of(answer) == "ok");
    }
  }
  for (const int fd : fds) ::close(fd);
  std::lock_guard lock(mutex);
  REQUIRE(threads_of.size() == 4);
  for (const auto& [connection, threads] : threads_of) {
    INFO("connection " << connection);
    CHECK(threads.size() == 1);  // its five requests, all on one thread
  }
  CHECK(threads_of["0"] == threads_of["2"]);  // the first loop's
  CHECK(threads_of["1"] == threads_of["3"]);  // the second loop's
  CHECK(threads_of["0"] != threads_of["1"]);
}

TEST_CASE("fiber workers: each thread's loop holds its share of max_connections") {
  // Two fiber threads, at most 2 connections: one each. The third connection goes to the first
  // loop, which closes its idle one; the second loop's stays open.
  FiberServed served([](webhooks::http::Server&) {}, 2, 2);
  const std::string request = "GET /fast HTTP/1.1\r\nHost: a\r\n\r\n";
  std::vector<int> fds;
  for (int i = 0; i < 2; ++i) {
    fds.push_back(webhooks::test::raw_send(served.port, request));
    std::string answer;
    read_answer(fds.back(), answer);
    REQUIRE(body_of(answer) == "ok");
  }
  for (int i = 0; i < 200000 && served.server.idle_connections() != 2; ++i) {
    std::this_thread::yield();
  }
  REQUIRE(served.server.idle_connections() == 2);
  const std::string third = webhooks::test::raw_exchange(served.port, request);
  CHECK(body_of(third) == "ok");
  char byte = 0;
  CHECK(::recv(fds[0], &byte, 1, 0) == 0);  // closed to make room in the first loop
  REQUIRE(::send(fds[1], request.data(), request.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(request.size()));
  std::string again;
  read_answer(fds[1], again);
  CHECK(body_of(again) == "ok");
  for (const int fd : fds) ::close(fd);
}
