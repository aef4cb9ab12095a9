// webhooks::http::Server's edge over real HTTP on 127.0.0.1 (issue 25): half-closed clients are
// answered, header values reach handlers byte for byte, and the process-wide budget of buffered
// request bytes refuses what would pass it with 503 while other requests are served. On thread
// workers and on fiber workers alike.
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <string>
#include <thread>

#include "detail/event_loop.h"
#include "raw_clients.h"
#include "support/serving_thread.h"
#include "webhooks/http_server.h"

using webhooks::test::body_of;
using webhooks::test::connect_to;
using webhooks::test::send_all;

namespace {

// A server with POST /count (answers the body's size, counts its calls) and GET /header/NAME
// (answers the values of header NAME, '|' between them).
struct EdgeServer {
  explicit EdgeServer(webhooks::http::ServerTuning tuning) {
    webhooks::http::limit_request_bodies(server, 1024 * 1024);
    server.Post("/count", [this](const httplib::Request& req, httplib::Response& res) {
      ++calls;
      res.set_content(std::to_string(req.body.size()), "text/plain");
    });
    server.Get(R"(/header/([A-Za-z-]+))", [](const httplib::Request& req, httplib::Response& res) {
      std::string values;
      const std::string name = req.matches[1];
      for (std::size_t i = 0; i < req.get_header_value_count(name); ++i) {
        values += (i ? "|" : "") + req.get_header_value(name, i);
      }
      res.set_content(values, "text/plain");
    });
    port = serving.start(server, tuning);
  }
  webhooks::http::Server server;
  std::atomic<int> calls{0};
  int port = 0;
  webhooks::test::ServingThread serving;
};

webhooks::http::ServerTuning workers(bool fibers) {
  webhooks::http::ServerTuning tuning;
  tuning.threads = 4;
  tuning.fiber_threads = fibers ? 2 : 0;
  return tuning;
}

std::string post(const std::string& body) {
  return "POST /count HTTP/1.1\r\nHost: a\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n\r\n" + body;
}

// Sends `data`, shuts down the sending side, and reads until the server closes.
std::string send_then_half_close(int port, const std::string& data, bool& closed) {
  return webhooks::test::send_until_close(port, data, closed, /*half_close=*/true);
}

std::size_t status_lines(const std::string& transcript, const std::string& status) {
  std::size_t count = 0;
  for (std::size_t at = transcript.find(status); at != std::string::npos;
       at = transcript.find(status, at + 1)) {
    ++count;  // the bodies here are digits: every occurrence is a status line
  }
  return count;
}

// Waits (bounded by a count of yields, not by time) until the process holds `bytes`.
void expect_buffered(std::uint64_t bytes) {
  for (int i = 0; i < 2'000'000 && webhooks::http::detail::buffered_request_bytes() != bytes; ++i) {
    std::this_thread::yield();
  }
  CHECK(webhooks::http::detail::buffered_request_bytes() == bytes);
}

}  // namespace

TEST_CASE("a client that half-closes after a whole request is answered, then the connection ends") {
  const bool fibers = GENERATE(false, true);
  INFO((fibers ? "fiber workers" : "thread workers"));
  EdgeServer edge(workers(fibers));
  for (int i = 0; i < 20; ++i) {
    bool closed = false;
    const std::string answer =
        send_then_half_close(edge.port, post("{\"n\":" + std::to_string(i) + "}"), closed);
    CHECK(closed);
    CHECK(status_lines(answer, "HTTP/1.1 200 OK\r\n") == 1);
    CHECK(body_of(answer) == std::to_string(i > 9 ? 8 : 7));
  }
  CHECK(edge.calls == 20);

  // Two pipelined requests, then the half-close: two answers.
  bool closed = false;
  const std::string two = send_then_half_close(edge.port, post("ab") + post("abc"), closed);
  CHECK(closed);
  CHECK(status_lines(two, "HTTP/1.1 200 OK\r\n") == 2);
  CHECK(edge.calls == 22);

  // Cut short, then closed: an abort, nothing answered, no handler.
  for (const std::string& cut : {std::string("POST /count HTTP/1.1\r\nHost: a\r\n"),
                                 post("abcdef").substr(0, post("abcdef").size() - 2)}) {
    const std::string nothing = send_then_half_close(edge.port, cut, closed);
    CHECK(closed);
    CHECK(nothing.empty());
  }
  // A whole request followed by a part of the next: the first answered, the rest dropped.
  const std::string one = send_then_half_close(edge.port, post("x") + "GET /hea", closed);
  CHECK(closed);
  CHECK(status_lines(one, "HTTP/1.1 200 OK\r\n") == 1);
  CHECK(edge.calls == 23);
}

TEST_CASE("one empty line before a request line is ignored (RFC 9112, section 2.2)") {
  const bool fibers = GENERATE(false, true);
  EdgeServer edge(workers(fibers));
  bool closed = false;
  // A CRLF after a body, before the next request: both served.
  const std::string two = webhooks::test::send_until_close(
      edge.port, "\r\n" + post("ab") + "\r\n" + post("abc"), closed, /*half_close=*/true);
  CHECK(status_lines(two, "HTTP/1.1 200 OK\r\n") == 2);
  CHECK(edge.calls == 2);
  // Two empty lines: the second is a request line that is not one.
  const std::string bad =
      webhooks::test::send_until_close(edge.port, "\r\n\r\n" + post("ab"), closed);
  CHECK(closed);
  CHECK(bad.rfind("HTTP/1.1 400 Bad Request\r\n", 0) == 0);
  CHECK(edge.calls == 2);
}

TEST_CASE("header values reach handlers byte for byte, percent signs included") {
  const bool fibers = GENERATE(false, true);
  EdgeServer edge(workers(fibers));
  const auto header = [&](const std::string& name, const std::string& lines) {
    return body_of(webhooks::test::raw_exchange(
        edge.port, "GET /header/" + name + " HTTP/1.1\r\nHost: a\r\n" + lines + "\r\n"));
  };
  CHECK(header("Idempotency-Key", "Idempotency-Key: K%2Fx\r\n") == "K%2Fx");
  CHECK(header("Idempotency-Key", "Idempotency-Key: K/x\r\n") == "K/x");
  CHECK(header("X-A", "X-A: %41%\r\nX-B: %42\r\nx-a:  b%20c \r\n") == "%41%|b%20c");
  CHECK(header("X-B", "X-A: %41%\r\nX-B: %42\r\nx-a:  b%20c \r\n") == "%42");
  CHECK(header("X-A", "X-A: +1\r\n") == "+1");
}

TEST_CASE("the buffered request bytes of the process are bounded: 503 server_busy beyond") {
  const bool fibers = GENERATE(false, true);
  webhooks::http::ServerTuning tuning = workers(fibers);
  tuning.max_buffered_bytes = 1024 * 1024;  // large requests may take 7/8: 917,504 bytes
  EdgeServer edge(tuning);
  expect_buffered(0);
  const std::string body(600'000, 'x');
  const std::string whole = post(body);
  const std::size_t head = whole.size() - body.size();

  // The first large request is charged whole as soon as its head is read.
  const int first = connect_to(edge.port);
  send_all(first, whole.substr(0, head + 1000));
  expect_buffered(whole.size());

  // A second one would pass 7/8 of the budget: refused before its body is read.
  bool closed = false;
  const std::string busy =
      webhooks::test::send_until_close(edge.port, whole.substr(0, head), closed);
  CHECK(closed);
  CHECK(busy.rfind("HTTP/1.1 503 Service Unavailable\r\n", 0) == 0);
  CHECK(busy.find("\r\nRetry-After: 1\r\n") != std::string::npos);
  CHECK(
      body_of(busy) ==
      R"({"error":{"code":"server_busy","message":"the server holds as many request bytes as it may; retry"}})");

  // Small requests are still served meanwhile.
  CHECK(body_of(webhooks::test::raw_exchange(edge.port, post("{}"))) == "2");
  CHECK(edge.calls == 1);

  // The first completes and is served; its bytes are released.
  send_all(first, whole.substr(head + 1000));
  std::string answer;
  webhooks::test::read_answer(first, answer);
  ::close(first);
  CHECK(body_of(answer) == "600000");
  expect_buffered(0);

  // Then a large request fits again.
  CHECK(body_of(webhooks::test::raw_exchange(edge.port, whole)) == "600000");
  CHECK(edge.calls == 3);
}
