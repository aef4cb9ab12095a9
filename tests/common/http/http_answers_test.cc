// webhooks::http::Server's answers over real HTTP on 127.0.0.1 (issue 12, item 4): 400 for a path
// or query that is not UTF-8, 503 on a kept-alive connection after a stop, bodies as bytes
// whatever their Content-Type (415 on JSON routes), a body answered 416 never a request.
#include <catch2/catch.hpp>
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "raw_clients.h"
#include "support/chunked_post.h"
#include "support/listening.h"
#include "webhooks/http_server.h"

using namespace webhooks::test;

TEST_CASE("a JSON server answers 400 for a path or query that is not UTF-8, before any handler") {
  // Found by the red team: on PostgreSQL, GET /orders/%ff and GET /v1/events?type=%ff reached the
  // database, which refused the text: 503 storage_unavailable with Retry-After: 1.
  Served served({}, webhooks::http::Bodies::json);
  const std::string refusal =
      R"({"error":{"code":"invalid_request","message":"the request path and query parameters )"
      R"(must be UTF-8 without NUL bytes, after percent-decoding"}})";
  for (const std::string target :
       {"/fast%ff", "/fast?type=%ff", "/fast?%C0%AF=1", "/fast?id=%ED%A0%80", "/fast?id=a%00b",
        "/fast?id=%F4%90%80%80", "/fast?id=%E2%82"}) {
    INFO(target);
    const std::string answer = raw_exchange(
        served.port, "GET " + target + " HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
    CHECK(answer.rfind("HTTP/1.1 400 Bad Request\r\n", 0) == 0);
    CHECK(body_of(answer) == refusal);
  }
  // UTF-8 up to U+10FFFF passes.
  const std::string ok = raw_exchange(
      served.port,
      "GET /fast?id=%E2%82%AC%F4%8F%BF%BF HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
  CHECK(body_of(ok) == "ok");
}

TEST_CASE("after stop_server a request on a kept-alive connection is answered 503, not reset") {
  webhooks::http::ServerTuning tuning;
  tuning.stop_drain = std::chrono::seconds(30);  // ends early: once the connection is closed
  Served served(tuning);
  const int kept = connect_to(served.port);
  send_all(kept, kGetFast);
  std::string first;
  read_answer(kept, first);
  REQUIRE(body_of(first) == "ok");

  const auto started = Clock::now();
  std::thread stopping([&] { webhooks::http::stop_server(served.server, served.port); });
  // Once the listening socket is closed the server is stopping.
  REQUIRE_FALSE(webhooks::test::listening_until_closed(served.port));
  send_all(kept,
           "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n"
           "Content-Length: 2\r\n\r\n{}");
  bool closed = false;
  const std::string refused = read_until_close(kept, closed);
  ::close(kept);
  CHECK(closed);
  CHECK(refused.rfind("HTTP/1.1 503 Service Unavailable\r\n", 0) == 0);
  CHECK(refused.find("\r\nRetry-After: 1\r\n") != std::string::npos);
  CHECK(refused.find("\r\nConnection: close\r\n") != std::string::npos);
  CHECK(body_of(refused) ==
        R"({"error":{"code":"server_stopping","message":"the server is stopping; retry"}})");
  stopping.join();
  // The drain ended with the last connection, not after its 30 seconds.
  CHECK(Clock::now() - started < std::chrono::seconds(10));
}

TEST_CASE("every route reads its body as bytes, whatever its Content-Type") {
  Served served;
  httplib::Client client("127.0.0.1", served.port);
  // cpp-httplib alone answers a form body over 8 KiB 413 "larger than 1048576 bytes".
  const std::string form = "a=" + std::string(20000, 'x') + "&b=2";
  auto posted = client.Post("/echo", form, "application/x-www-form-urlencoded");
  REQUIRE(posted);
  CHECK(posted->status == 200);
  CHECK(posted->body == "application/x-www-form-urlencoded|20006|0");
  // A multipart body stays bytes too (cpp-httplib would parse it into req.files).
  const std::string multipart =
      "--XyZ\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\nvalue\r\n--XyZ--\r\n";
  auto parts = client.Post("/echo", multipart, "multipart/form-data; boundary=XyZ");
  REQUIRE(parts);
  CHECK(parts->body ==
        "multipart/form-data; boundary=XyZ|" + std::to_string(multipart.size()) + "|0");
}

TEST_CASE("a JSON server answers 415 for a body whose Content-Type is present and not JSON") {
  Served served({}, webhooks::http::Bodies::json);
  httplib::Client client("127.0.0.1", served.port);
  const std::string form = "a=" + std::string(20000, 'x');
  auto refused = client.Post("/echo", form, "application/x-www-form-urlencoded");
  REQUIRE(refused);
  CHECK(refused->status == 415);
  CHECK(
      refused->body ==
      R"({"error":{"code":"unsupported_media_type","message":"send the body as application/json, not application/x-www-form-urlencoded"}})");
  auto text = client.Post("/echo", "{}", "text/plain");
  REQUIRE(text);
  CHECK(text->status == 415);
  for (const std::string type :
       {"application/json", "Application/JSON; charset=utf-8", "application/merge-patch+json"}) {
    auto ok = client.Post("/echo", "{}", type.c_str());
    REQUIRE(ok);
    CHECK(ok->status == 200);
    CHECK(ok->body == type + "|2|0");
  }
  // Without a Content-Type the body is read as JSON.
  const std::string answer =
      raw_exchange(served.port, "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n{}");
  CHECK(answer.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(body_of(answer) == "|2|0");
}

TEST_CASE("a JSON-or-form server (GitHub's route) names both types in its 415") {
  Served served({}, webhooks::http::Bodies::json_or_form);
  httplib::Client client("127.0.0.1", served.port);
  auto text = client.Post("/echo", "{}", "text/plain");
  REQUIRE(text);
  CHECK(text->status == 415);
  CHECK(
      text->body ==
      R"({"error":{"code":"unsupported_media_type","message":"send the body as application/json or application/x-www-form-urlencoded, not text/plain"}})");
  auto form = client.Post("/echo", "payload=%7B%7D", "application/x-www-form-urlencoded");
  REQUIRE(form);
  CHECK(form->status == 200);
  CHECK(form->body == "application/x-www-form-urlencoded|14|0");
}

TEST_CASE("the body of a request cpp-httplib answers 416 before reading it is never a request") {
  Served served;
  const std::string smuggled = "GET /nowhere HTTP/1.1\r\nHost: a\r\n\r\n";  // would be 404
  const int fd = connect_to(served.port);
  send_all(fd, "POST /echo HTTP/1.1\r\nHost: a\r\nRange: bytes=x\r\nContent-Length: " +
                   std::to_string(smuggled.size()) + "\r\n\r\n" + smuggled + kGetFast);
  std::string answers;
  char buffer[4096];
  while (answers.find("\r\n\r\nok") == std::string::npos) {
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    answers.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  CHECK(answers.rfind("HTTP/1.1 416 Range Not Satisfiable\r\n", 0) == 0);
  // The next answer is the GET sent after the body: the body's GET (404) was dropped with it.
  const std::size_t next = answers.find("HTTP/1.1 ", 1);
  REQUIRE(next != std::string::npos);
  CHECK(answers.substr(next).rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(body_of(answers.substr(next)) == "ok");
}
