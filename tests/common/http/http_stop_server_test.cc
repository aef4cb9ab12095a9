// webhooks::http::stop_server over real HTTP on 127.0.0.1: a running handler answers, new
// requests are refused with 503, idle connections end.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <semaphore>
#include <string>
#include <thread>

#include "detail/fiber.h"
#include "support/chunked_post.h"
#include "support/listening.h"
#include "webhooks/http_server.h"

using webhooks::test::body_of;
using webhooks::test::listening_until_closed;

namespace {

constexpr std::size_t kStopBodyLimit = 1024;

// A POST with a body on the kept-alive connection `idle` is refused before any handler: 503
// server_stopping with Retry-After: 1.
void check_refused_while_stopping(int idle) {
  const std::string post_slow_with_body =
      "POST /slow HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}";
  REQUIRE(::send(idle, post_slow_with_body.data(), post_slow_with_body.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(post_slow_with_body.size()));
  std::string refused;
  webhooks::test::read_answer(idle, refused);
  CHECK(refused.rfind("HTTP/1.1 503 Service Unavailable\r\n", 0) == 0);
  CHECK(refused.find("Retry-After: 1\r\n") != std::string::npos);
  CHECK(body_of(refused) ==
        R"({"error":{"code":"server_stopping","message":"the server is stopping; retry"}})");
}

TEST_CASE(
    "stop_server lets a running handler answer, refuses new requests, ends idle connections") {
  webhooks::http::ServerTuning tuning;
  tuning.fiber_threads = GENERATE(0, 2);  // a pool of threads, then fiber workers
  INFO("fiber_threads " << tuning.fiber_threads);
  webhooks::http::Server server;
  webhooks::http::limit_request_bodies(server, kStopBodyLimit);
  std::binary_semaphore entered{0};
  // A Wakeup, not a semaphore: on fiber workers the handler's fiber suspends and its thread goes
  // on reading its other connections (a handler there must not hold its thread).
  webhooks::fibers::Wakeup release;
  server.Post("/slow", [&](const httplib::Request&, httplib::Response& res) {
    entered.release();
    release.wait();
    res.set_content("done", "text/plain");
  });
  server.Get("/fast", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok", "text/plain");
  });
  const int port = webhooks::http::bind_server(server, "127.0.0.1", 0, tuning);
  // An hour: were the idle connection below not ended, listen_after_bind() (and this test) would
  // wait that long after stop().
  server.set_keep_alive_timeout(3600);
  std::thread serving([&] { server.listen_after_bind(); });
  const std::string get_fast = "GET /fast HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  // Two keep-alive connections that have been answered once: one is sent a request after the
  // call, the other nothing.
  const int idle = webhooks::test::raw_send(port, get_fast);
  const int quiet = webhooks::test::raw_send(port, get_fast);
  for (const int fd : {idle, quiet}) {
    std::string first;
    webhooks::test::read_answer(fd, first);
    REQUIRE(body_of(first) == "ok");
  }
  const std::string post_slow =
      "POST /slow HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n";
  const int busy = webhooks::test::raw_send(port, post_slow);
  entered.acquire();

  std::thread stopping([&] { webhooks::http::stop_server(server, port); });
  // The call closes the listening socket (after marking the server stopping); it then waits for
  // the handler above.
  REQUIRE_FALSE(listening_until_closed(port));
  // A request on the idle connection now is refused before any handler, body and all (a POST
  // with a body: the common case of a delivery or an ingest).
  check_refused_while_stopping(idle);

  release.notify();
  std::string answer;
  webhooks::test::read_answer(busy, answer);
  CHECK(answer.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(body_of(answer) == "done");
  char byte = 0;
  CHECK(::recv(busy, &byte, 1, 0) == 0);  // then closed
  CHECK(::recv(idle, &byte, 1, 0) == 0);
  CHECK(::recv(quiet, &byte, 1, 0) == 0);  // EOF, not the 5-second receive timeout (-1)
  stopping.join();
  serving.join();
  ::close(idle);
  ::close(quiet);
  ::close(busy);
}

}  // namespace
