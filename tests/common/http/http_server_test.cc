// webhooks::http::limit_request_bodies over real HTTP on 127.0.0.1: bodies are bounded before
// cpp-httplib reads them, whatever framing the client uses.
#include "webhooks/http_server.h"

#include <httplib.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <semaphore>
#include <string>
#include <thread>

#include "support/chunked_post.h"
#include "support/serving_thread.h"

using webhooks::test::body_of;
using webhooks::test::post_chunked_head;
using webhooks::test::raw_exchange;
using webhooks::test::raw_exchange_until_close;

namespace {

constexpr std::size_t kEchoBodyLimit = 1024;

// A server whose POST /echo answers the size of the body it received.
struct EchoServer {
  explicit EchoServer(httplib::Server::HandlerWithResponse then = nullptr) {
    webhooks::http::limit_request_bodies(server, kEchoBodyLimit, std::move(then));
    server.Post("/echo", [this](const httplib::Request& req, httplib::Response& res) {
      ++calls;
      res.set_content(std::to_string(req.body.size()), "text/plain");
    });
    port = serving.start(server);
  }
  webhooks::http::Server server;
  std::atomic<int> calls{0};
  int port = 0;
  webhooks::test::ServingThread serving;
};

std::string code_of(const std::string& body) {
  return nlohmann::json::parse(body)["error"]["code"].get<std::string>();
}

}  // namespace

TEST_CASE("a body up to the limit is served; one byte over is 413") {
  EchoServer echo;
  httplib::Client client("127.0.0.1", echo.port);
  auto at_limit = client.Post("/echo", std::string(kEchoBodyLimit, 'x'), "application/json");
  REQUIRE(at_limit);
  CHECK(at_limit->status == 200);
  CHECK(at_limit->body == "1024");

  auto over = client.Post("/echo", std::string(kEchoBodyLimit + 1, 'x'), "application/json");
  REQUIRE(over);
  CHECK(over->status == 413);
  CHECK(code_of(over->body) == "payload_too_large");
  CHECK(echo.calls == 1);

  // Over a raw connection too, with the body discarded and the connection kept.
  const std::string answer =
      raw_exchange(echo.port, "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 1025\r\n\r\n" +
                                  std::string(kEchoBodyLimit + 1, 'x'));
  CHECK(answer.rfind("HTTP/1.1 413 Payload Too Large\r\n", 0) == 0);
  CHECK(
      answer.find(
          R"({"error":{"code":"payload_too_large","message":"the body is larger than 1024 bytes"}})") !=
      std::string::npos);
  CHECK(echo.calls == 1);
}

TEST_CASE("a chunked body is refused with 411 before it is read") {
  EchoServer echo;
  httplib::Client client("127.0.0.1", echo.port);
  const std::string chunked = post_chunked_head(echo.port, "/echo");
  CHECK(chunked.rfind("HTTP/1.1 411 Length Required\r\n", 0) == 0);
  CHECK(chunked.find("\r\nConnection: close\r\n") != std::string::npos);
  CHECK(code_of(body_of(chunked)) == "length_required");
  CHECK(echo.calls == 0);

  // A chunk far over the limit announced by a raw client: the answer comes before it is sent.
  const std::string answer = raw_exchange(
      echo.port,
      "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n40000000\r\n");
  CHECK(answer.rfind("HTTP/1.1 411 Length Required\r\n", 0) == 0);
  CHECK(echo.calls == 0);
}

// How many answers a transcript holds.
std::size_t answers_in(const std::string& transcript) {
  std::size_t count = 0;
  for (std::size_t at = transcript.find("HTTP/1.1 "); at != std::string::npos;
       at = transcript.find("HTTP/1.1 ", at + 1)) {
    count += at == 0 || transcript[at - 1] == '\n';  // a status line, not a message's text
  }
  return count;
}

// A request of 53 (0x35) bytes, sent where a body is refused.
const std::string kSmuggled = "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n{}";

// Sends `request`, then `then` on the same connection: the server's one answer before it closed
// the connection (both CHECKed).
std::string only_answer(int port, const std::string& request, const std::string& then = {}) {
  const auto transcript = raw_exchange_until_close(port, request, then);
  CHECK(transcript.closed);
  CHECK(answers_in(transcript.answers) == 1);
  return transcript.answers;
}

// After the refusals: no request reached the handler, and the server serves new connections.
void check_still_serving(const EchoServer& echo) {
  CHECK(echo.calls == 0);
  // The server still serves new connections.
  httplib::Client client("127.0.0.1", echo.port);
  auto served = client.Post("/echo", "{}", "application/json");
  REQUIRE(served);
  CHECK(served->body == "2");
}

TEST_CASE("after a refused body the connection is closed: the unread body is never a request") {
  EchoServer echo;
  const std::string& smuggled = kSmuggled;
  REQUIRE(smuggled.size() == 0x35);
  SECTION("chunked, with a request hidden in the chunk") {
    const std::string answers = only_answer(
        echo.port, "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n",
        "35\r\n" + smuggled + "\r\n0\r\n\r\n");
    CHECK(answers.rfind("HTTP/1.1 411 Length Required\r\n", 0) == 0);
    CHECK(code_of(body_of(answers)) == "length_required");
  }
  SECTION("a Content-Length that is not a number, followed by a request") {
    const std::string answers = only_answer(
        echo.port, "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: two\r\n\r\n", smuggled);
    CHECK(answers.rfind("HTTP/1.1 400 Bad Request\r\n", 0) == 0);
  }
  SECTION("a chunked body of 4 MiB still being sent gets the whole answer") {
    std::string request = "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
    for (int i = 0; i < 64; ++i) request += "10000\r\n" + std::string(0x10000, 'x') + "\r\n";
    const std::string answers = only_answer(echo.port, request + "0\r\n\r\n");
    CHECK(code_of(body_of(answers)) == "length_required");
  }
  SECTION("a GET with a body, followed by a request") {
    const std::string answers = only_answer(
        echo.port, "GET /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 53\r\n\r\n", smuggled);
    CHECK(body_of(answers) ==
          R"({"error":{"code":"bad_request","message":"GET requests take no body"}})");
  }
  check_still_serving(echo);
}

TEST_CASE(
    "after a refused body the connection is closed: the unread body is never a request (heads)") {
  EchoServer echo;
  const std::string& smuggled = kSmuggled;
  SECTION("a HEAD with a body, and a request in the body: 400 without a body, then closed") {
    const std::string answers = only_answer(
        echo.port, "HEAD /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 53\r\n\r\n", smuggled);
    CHECK(answers.rfind("HTTP/1.1 400 Bad Request\r\n", 0) == 0);
    CHECK(answers.ends_with("\r\n\r\n"));  // a HEAD's answer: no body
  }
  SECTION("whitespace between a header name and its colon (RFC 9112, section 5.1)") {
    const std::string answers = only_answer(
        echo.port, "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length : 53\r\n\r\n", smuggled);
    CHECK(
        body_of(answers) ==
        R"({"error":{"code":"bad_request","message":"a header name has whitespace before its ':'"}})");
  }
  SECTION("requests the parser refuses end their connection after one answer") {
    const std::string long_line(9000, 'a');
    for (const auto& [head, status] : std::vector<std::pair<std::string, std::string>>{
             {"FOO /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 53\r\n\r\n", "501 Not Implemented"},
             {"post /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 53\r\n\r\n",
              "501 Not Implemented"},
             {"POST /echo HTTP/1.2\r\nHost: a\r\nContent-Length: 53\r\n\r\n",
              "505 HTTP Version Not Supported"},
             {"POST /echo HTTP/1.1\nHost: a\nContent-Length: 53\n\n", "400 Bad Request"},
             {"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n 53\r\n\r\n",
              "400 Bad Request"},
             {"POST /echo HTTP/1.1\r\nHost: a\r\nX-Long: " + long_line +
                  "\r\nContent-Length: 53\r\n\r\n",
              "431 Request Header Fields Too Large"},
             {"POST /" + long_line + " HTTP/1.1\r\nHost: a\r\nContent-Length: 53\r\n\r\n",
              "414 URI Too Long"}}) {
      INFO(head.substr(0, 40));
      const std::string answers = only_answer(echo.port, head, smuggled);
      CHECK(answers.rfind("HTTP/1.1 " + status + "\r\n", 0) == 0);
    }
  }
  SECTION("two Content-Length headers") {
    const std::string answers = only_answer(
        echo.port,
        "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\nContent-Length: 53\r\n\r\n",
        smuggled);
    CHECK(body_of(answers) ==
          R"({"error":{"code":"bad_request","message":"send one Content-Length header"}})");
  }
  check_still_serving(echo);
}

TEST_CASE("a body left unread by the caller's own refusal is never a request") {
  EchoServer echo([](const httplib::Request& req, httplib::Response& res) {
    if (req.get_header_value("Authorization") == "Bearer ok") {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    res.status = 401;
    return httplib::Server::HandlerResponse::Handled;
  });
  const std::string smuggled =
      "POST /echo HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ok\r\nContent-Length: 2\r\n\r\n{}";
  // Head and body sent together: webhooks::http::Server receives a declared body before any
  // handler runs (a client that waited for an answer first would wait for the request deadline).
  const std::string answers =
      only_answer(echo.port, "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: " +
                                 std::to_string(smuggled.size()) + "\r\n\r\n" + smuggled);
  CHECK(answers.rfind("HTTP/1.1 401 Unauthorized\r\n", 0) == 0);
  CHECK(body_of(answers) ==
        R"({"error":{"code":"unauthorized","message":"the request could not be served"}})");
  CHECK(echo.calls == 0);
  // Without a body the connection is kept.
  httplib::Client client("127.0.0.1", echo.port);
  auto first = client.Get("/echo");
  auto second = client.Post("/echo", {{"Authorization", "Bearer ok"}}, "{}", "application/json");
  REQUIRE(first);
  REQUIRE(second);
  CHECK(first->status == 401);
  CHECK(second->body == "2");
}

TEST_CASE("a POST without Content-Length has an empty body and is answered at once") {
  EchoServer echo;
  // cpp-httplib 0.11 alone would wait for the client to close the connection.
  const std::string answer = raw_exchange(echo.port, "POST /echo HTTP/1.1\r\nHost: a\r\n\r\n");
  CHECK(answer.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(answer.substr(answer.size() - 1) == "0");
  CHECK(echo.calls == 1);
}

TEST_CASE("error answers without a body get a JSON one") {
  EchoServer echo;
  httplib::Client client("127.0.0.1", echo.port);
  auto unknown = client.Get("/nowhere");
  REQUIRE(unknown);
  CHECK(unknown->status == 404);
  CHECK(unknown->body == R"({"error":{"code":"not_found","message":"no such route"}})");
  const std::string bad_line = raw_exchange(echo.port, "NONSENSE\r\n\r\n");
  CHECK(bad_line.rfind("HTTP/1.1 400 Bad Request\r\n", 0) == 0);
  CHECK(
      body_of(bad_line) ==
      R"({"error":{"code":"bad_request","message":"the request line must be: method, one space, target, one space, version"}})");
}

TEST_CASE("a Content-Length that is not a number is 400") {
  EchoServer echo;
  const std::string answer =
      raw_exchange(echo.port, "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 12abc\r\n\r\n");
  CHECK(answer.rfind("HTTP/1.1 400 Bad Request\r\n", 0) == 0);
  CHECK(answer.find(R"("code":"bad_request")") != std::string::npos);
  CHECK(echo.calls == 0);
}

TEST_CASE("the caller's own pre-routing check runs only for requests let through") {
  std::atomic<int> checked{0};
  EchoServer echo([&](const httplib::Request& req, httplib::Response& res) {
    ++checked;
    if (req.get_header_value("Authorization") == "Bearer ok") {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    res.status = 401;
    return httplib::Server::HandlerResponse::Handled;
  });
  httplib::Client client("127.0.0.1", echo.port);
  CHECK(post_chunked_head(echo.port, "/echo").rfind("HTTP/1.1 411 ", 0) == 0);
  CHECK(checked == 0);
  auto refused = client.Post("/echo", "{}", "application/json");
  REQUIRE(refused);
  CHECK(refused->status == 401);
  CHECK(refused->body ==
        R"({"error":{"code":"unauthorized","message":"the request could not be served"}})");
  // The check runs before the body is read, so it is the first answer to a body over the limit.
  auto refused_over =
      client.Post("/echo", std::string(kEchoBodyLimit + 1, 'x'), "application/json");
  REQUIRE(refused_over);
  CHECK(refused_over->status == 401);
  auto allowed_over = client.Post("/echo", {{"Authorization", "Bearer ok"}},
                                  std::string(kEchoBodyLimit + 1, 'x'), "application/json");
  REQUIRE(allowed_over);
  CHECK(allowed_over->status == 413);
  auto allowed = client.Post("/echo", {{"Authorization", "Bearer ok"}}, "{}", "application/json");
  REQUIRE(allowed);
  CHECK(allowed->status == 200);
  CHECK(allowed->body == "2");
  CHECK(checked == 4);
  CHECK(echo.calls == 1);
}

TEST_CASE("is_json_media_type: application/json and application/*+json, any case, any parameters") {
  using webhooks::http::is_json_media_type;
  for (const char* yes :
       {"application/json", " APPLICATION/JSON ", "Application/Json; charset=utf-8",
        "application/merge-patch+json", "application/vnd.api+JSON;v=1", "\tapplication/+json"}) {
    INFO(yes);
    CHECK(is_json_media_type(yes));
  }
  for (const char* no :
       {"", " ", "text/plain", "application/jsonx", "application/xjson", "text/x+json",
        "application/a/b+json", "application/json+x", "application/", "+json", "application/jso"}) {
    INFO(no);
    CHECK_FALSE(is_json_media_type(no));
  }
}
