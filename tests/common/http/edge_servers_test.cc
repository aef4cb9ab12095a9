// The HTTP edge of every server binary (issue 25), as a hostile client meets it:
// webhooks-publisherd, orders-api, merchant-receiver and payout-partner started from build/bin on
// fresh SQLite files, attacked over raw sockets on 127.0.0.1. Each malformed request gets exactly
// one answer with its status and error code, then the connection is closed (what was sent after it
// is never served); a gzip bomb is refused without being inflated; header values reach handlers
// byte for byte; half-closed clients are answered; the buffer budget answers 503 while small
// requests are served. docs/security.md, "What the HTTP edge refuses".
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "raw_clients.h"
#include "support/test_env.h"
#include "webhooks/clock.h"
#include "webhooks/launcher/child_process.h"
#include "webhooks/signer.h"

using webhooks::launcher::ChildProcess;
using webhooks::test::body_of;
using webhooks::test::connect_to;
using webhooks::test::send_all;

namespace {

const std::string kSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const std::string kOrder = R"({"amount":1000,"currency":"EUR","reference":"inv-1"})";

// One server binary: how to start it, a route that reads a body and a route that does not.
struct Target {
  std::string name;
  std::vector<std::string> args;
  std::string post_path;
  std::string auth;  // header lines (with CRLF) a POST needs to reach its handler
  std::string get_path;
  std::string created;  // the status of a valid POST (valid_post)
};

std::vector<Target> targets(const std::string& dir) {
  return {
      {"webhooks-publisherd",
       {"--db", dir + "/publisher.db", "--admin-token", "tok"},
       "/v1/events",
       "Authorization: Bearer tok\r\n",
       "/healthz",
       "202"},
      {"orders-api",
       {"--db", dir + "/orders.db", "--api-key", "k1:m1", "--partner-url", "http://127.0.0.1:9"},
       "/orders",
       "Authorization: Bearer k1\r\n",
       "/healthz",
       "201"},
      {"merchant-receiver",
       {"--db", dir + "/merchant.db", "--secret", kSecret},
       "/webhooks",
       "",
       "/handled",
       "200"},
      {"payout-partner", {"--db", dir + "/partner.db"}, "/transfers", "", "/healthz", "201"},
  };
}

struct Started {
  Started(const Target& target, const std::string& dir, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--listen", "127.0.0.1:0"};
    args.insert(args.end(), target.args.begin(), target.args.end());
    args.insert(args.end(), extra.begin(), extra.end());
    process = std::make_unique<ChildProcess>(target.name, args, dir);
    port = process->wait_listening();
  }
  std::unique_ptr<ChildProcess> process;
  int port = 0;
};

// HTTP/1.x status lines in what was read: "HTTP/1.1 " and three digits (an error message that
// names a version is not one).
std::size_t answers_in(const std::string& transcript) {
  static const std::regex status_line("HTTP/1\\.[01] [0-9]{3} ");
  return static_cast<std::size_t>(
      std::distance(std::sregex_iterator(transcript.begin(), transcript.end(), status_line),
                    std::sregex_iterator()));
}

std::string code_of(const std::string& answer) {
  const auto json = nlohmann::json::parse(body_of(answer), nullptr, false);
  return json.is_object() && json.contains("error") ? json["error"].value("code", "") : "";
}

// Sends `request` and then a valid request on the same connection (a smuggling attempt), reads
// until the server closes: exactly one answer, `status`, `code`, then closed.
void expect_refused(int port, const std::string& request, const std::string& status,
                    const std::string& code, const std::string& get_path) {
  INFO(request.substr(0, 120));
  bool closed = false;
  const std::string answer = webhooks::test::send_until_close(
      port, request + "GET " + get_path + " HTTP/1.1\r\nHost: a\r\n\r\n", closed);
  CHECK(closed);
  CHECK(answer.rfind("HTTP/1.1 " + status + "\r\n", 0) == 0);
  CHECK(answer.find("\r\nConnection: close\r\n") != std::string::npos);
  CHECK(answers_in(answer) == 1);
  CHECK(code_of(answer) == code);
}

std::string head(const std::string& method, const std::string& path, const std::string& fields) {
  return method + " " + path + " HTTP/1.1\r\n" + fields + "\r\n";
}

// Malformed framing: the same answers on every server, whatever the route.
void expect_strict_framing(const Target& t, int port) {
  const std::string& get = t.get_path;
  const std::string& post = t.post_path;
  const auto bad = [&](const std::string& request) {
    expect_refused(port, request, "400 Bad Request", "bad_request", get);
  };
  bad(head("POST", post, "Host: a\r\n" + t.auth + "Content-Length: 4\r\n 4\r\n") + "abcd");
  bad(head("POST", post, "Host: a\r\n" + t.auth + "Content-Length: 4\r\n\t4\r\n") + "abcd");
  bad("GET " + get + " HTTP/1.1\r\nHost: a\nX: y\r\n\r\n");
  bad("GET " + get + " HTTP/1.1\nHost: a\r\n\r\n");
  bad(head("GET", get, "Host: a\r\nX: a\rb\r\n"));
  bad(head("GET", get, std::string("Host: a\r\nX: a") + '\0' + "b\r\n"));
  bad(head("GET", get, "Host: a\r\nX: a\x01\r\n"));
  bad(head("GET", get, "Host: a\r\nX: a\x7f\r\n"));
  bad("GET  " + get + " HTTP/1.1\r\nHost: a\r\n\r\n");
  bad("GET " + get + "  HTTP/1.1\r\nHost: a\r\n\r\n");
  bad(head("GET", get, "Host: a\r\nNo-Colon\r\n"));
  bad(head("GET", get, "Host: a\r\n: empty-name\r\n"));
  bad(head("POST", post, "Host: a\r\n" + t.auth + "Content-Length : 4\r\n") + "abcd");
  bad(head("GET", get, ""));  // HTTP/1.1 without Host
  bad(head("GET", get, "Host: a\r\nHost: a\r\n"));
  bad(head("GET", get, "Host: a b\r\n"));
  bad(head("POST", post, "Host: a\r\n" + t.auth + "Content-Length: 2\r\nContent-Length: 2\r\n") +
      "{}");
  bad(head("POST", post, "Host: a\r\n" + t.auth + "Content-Length: 2x\r\n") + "{}");
  bad(head("GET", get + "\xff", "Host: a\r\n"));
  bad(head("GET", get + "\x01", "Host: a\r\n"));
  bad(head("GET", get, "Host: a\r\nContent-Length: 5\r\n") + "abcde");
  for (const std::string single :
       {"Authorization: Bearer x", "Content-Type: application/json", "Idempotency-Key: a",
        "webhook-id: a", "webhook-timestamp: 1", "webhook-signature: v1,a"}) {
    bad(head("POST", post, "Host: a\r\n" + single + "\r\n" + single + "\r\nContent-Length: 2\r\n") +
        "{}");
  }
  expect_refused(port,
                 head("POST", post, "Host: a\r\n" + t.auth + "Transfer-Encoding: chunked\r\n") +
                     "2\r\n{}\r\n0\r\n\r\n",
                 "411 Length Required", "length_required", get);
  expect_refused(port, head("FOO", get, "Host: a\r\n"), "501 Not Implemented", "not_implemented",
                 get);
  expect_refused(port, head("get", get, "Host: a\r\n"), "501 Not Implemented", "not_implemented",
                 get);
  expect_refused(port, "GET " + get + " HTTP/1.2\r\nHost: a\r\n\r\n",
                 "505 HTTP Version Not Supported", "http_version_not_supported", get);
  expect_refused(port, "GET " + get + " HTTP/2.0\r\nHost: a\r\n\r\n",
                 "505 HTTP Version Not Supported", "http_version_not_supported", get);
  expect_refused(port, head("GET", get + "?" + std::string(9000, 'a'), "Host: a\r\n"),
                 "414 URI Too Long", "uri_too_long", get);
  expect_refused(port, head("GET", get, "Host: a\r\nX: " + std::string(9000, 'a') + "\r\n"),
                 "431 Request Header Fields Too Large", "headers_too_large", get);
}

// 200 MiB of zeros as gzip (about 200 KB).
std::string gzip_bomb() {
  z_stream z{};
  REQUIRE(deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) == Z_OK);
  const std::string zeros(1 << 20, '\0');
  std::string out;
  char buffer[64 * 1024];
  for (int i = 0; i < 200; ++i) {
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(zeros.data()));
    z.avail_in = static_cast<uInt>(zeros.size());
    const int flush = i == 199 ? Z_FINISH : Z_NO_FLUSH;
    do {
      z.next_out = reinterpret_cast<Bytef*>(buffer);
      z.avail_out = sizeof buffer;
      deflate(&z, flush);
      out.append(buffer, sizeof buffer - z.avail_out);
    } while (z.avail_out == 0);
  }
  deflateEnd(&z);
  return out;
}

// The process's peak resident memory (VmHWM), kB.
long peak_rss_kb(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

// A POST the target's handler accepts (a fresh key, event id or transfer), as raw bytes.
std::string valid_post(const Target& t, const std::string& key) {
  std::string body = kOrder, fields = "Host: a\r\nContent-Type: application/json\r\n" + t.auth;
  if (t.name == "webhooks-publisherd") {
    body = R"({"merchant_id":"m1","type":"order.created","data":{"n":1}})";
    fields += "Idempotency-Key: " + key + "\r\n";
  } else if (t.name == "orders-api") {
    fields += "Idempotency-Key: " + key + "\r\n";
  } else if (t.name == "merchant-receiver") {
    const std::int64_t ts = webhooks::system_clock().now_seconds();
    body = R"({"id":")" + key +
           R"(","type":"order.created","timestamp":"2026-12-04T00:00:00Z","data":{}})";
    fields += "webhook-id: " + key + "\r\nwebhook-timestamp: " + std::to_string(ts) +
              "\r\nwebhook-signature: " +
              webhooks::Signer(webhooks::Secret::parse(kSecret)).sign(key, ts, body) + "\r\n";
  } else {
    body = R"({"amount":1000,"currency":"EUR","destination":"acct_1"})";
    fields += "X-Idempotency-Key: " + key + "\r\n";
  }
  return head("POST", t.post_path,
              fields + "Content-Length: " + std::to_string(body.size()) + "\r\n") +
         body;
}

// "201" of "HTTP/1.1 201 Created ..."; "" when nothing was answered.
std::string status_of(const std::string& answer) {
  return answer.size() < 12 ? "" : answer.substr(9, 3);
}

}  // namespace

TEST_CASE("every server refuses malformed framing with one answer, then closes") {
  const std::string dir = webhooks::test::temp_dir("edge_framing");
  for (const Target& t : targets(dir)) {
    INFO(t.name);
    Started server(t, dir);
    expect_strict_framing(t, server.port);
    // Still serving, and a valid POST reaches its handler.
    const std::string ok =
        webhooks::test::raw_exchange(server.port, head("GET", t.get_path, "Host: a\r\n"));
    CHECK(status_of(ok) == "200");
    const std::string created =
        webhooks::test::raw_exchange(server.port, valid_post(t, "edge-ok-1"));
    CHECK(status_of(created) == t.created);
  }
}

TEST_CASE("every server refuses a compressed body (415) without inflating it") {
  const std::string dir = webhooks::test::temp_dir("edge_bomb");
  const std::string bomb = gzip_bomb();
  REQUIRE(bomb.size() < 300 * 1024);
  for (const Target& t : targets(dir)) {
    INFO(t.name);
    Started server(t, dir);
    const long before = peak_rss_kb(server.process->pid());
    for (const char* coding : {"gzip", "deflate"}) {
      const std::string request =
          head("POST", t.post_path,
               "Host: a\r\nContent-Type: application/json\r\nIdempotency-Key: bomb\r\n" + t.auth +
                   "Content-Encoding: " + coding +
                   "\r\nContent-Length: " + std::to_string(bomb.size()) + "\r\n") +
          bomb;
      bool closed = false;
      const std::string answer = webhooks::test::send_until_close(server.port, request, closed);
      CHECK(closed);
      CHECK(answer.rfind("HTTP/1.1 415 Unsupported Media Type\r\n", 0) == 0);
      CHECK(answer.find("\r\nAccept-Encoding: identity\r\n") != std::string::npos);
      CHECK(code_of(answer) == "unsupported_media_type");
    }
    // Inflated, 200 MiB would have shown here; refused, the peak grows by at most the buffered
    // 200 KB body and the allocator's slack.
    CHECK(peak_rss_kb(server.process->pid()) - before < 50 * 1024);
    CHECK(status_of(webhooks::test::raw_exchange(server.port, valid_post(t, "after-bomb"))) ==
          t.created);
  }
}

TEST_CASE("a half-closed client is answered: 20 of 20 on every server") {
  const std::string dir = webhooks::test::temp_dir("edge_half_close");
  for (const Target& t : targets(dir)) {
    INFO(t.name);
    Started server(t, dir);
    for (int i = 0; i < 20; ++i) {
      bool closed = false;
      const std::string answer = webhooks::test::send_until_close(
          server.port, valid_post(t, "half-" + std::to_string(i)), closed, /*half_close=*/true);
      CHECK(closed);
      CHECK(answers_in(answer) == 1);
      CHECK(status_of(answer) == t.created);
    }
    if (t.name == "merchant-receiver") {  // every delivery was handled, once
      const auto handled = nlohmann::json::parse(body_of(
          webhooks::test::raw_exchange(server.port, head("GET", "/handled", "Host: a\r\n"))));
      CHECK(handled.dump().find("half-19") != std::string::npos);
      const std::string again = webhooks::test::raw_exchange(server.port, valid_post(t, "half-7"));
      CHECK(status_of(again) == "200");
    }
  }
}

TEST_CASE("orders-api: Idempotency-Key reaches the guard byte for byte, and twice is refused") {
  const std::string dir = webhooks::test::temp_dir("edge_keys");
  const Target t = targets(dir)[1];
  Started server(t, dir);
  const std::string encoded = webhooks::test::raw_exchange(server.port, valid_post(t, "K%2Fx"));
  const std::string plain = webhooks::test::raw_exchange(server.port, valid_post(t, "K/x"));
  CHECK(status_of(encoded) == "201");
  CHECK(status_of(plain) == "201");
  CHECK(nlohmann::json::parse(body_of(encoded))["id"] !=
        nlohmann::json::parse(body_of(plain))["id"]);
  CHECK(plain.find("Idempotent-Replayed") == std::string::npos);

  // [A, B]: refused before any handler; then A alone is a new order, not a replay.
  std::string twice = valid_post(t, "A");
  twice.insert(twice.find("Idempotency-Key: A\r\n"), "Idempotency-Key: B\r\n");
  expect_refused(server.port, twice, "400 Bad Request", "bad_request", "/healthz");
  const std::string a = webhooks::test::raw_exchange(server.port, valid_post(t, "A"));
  CHECK(status_of(a) == "201");
  CHECK(a.find("Idempotent-Replayed") == std::string::npos);
}

TEST_CASE("orders-api --max-buffered-bytes: a body past the budget is 503, small requests served") {
  const std::string dir = webhooks::test::temp_dir("edge_budget");
  const Target t = targets(dir)[1];
  // One event loop, so that the first body is charged to the budget (its loop read it) before
  // the second head arrives; the budget is the process's whatever the number of loops.
  Started server(t, dir, {"--max-buffered-bytes", "1048576", "--fiber-threads", "1"});
  const std::string pad(600'000, 'x');
  const std::string large =
      head("POST", "/orders",
           "Host: a\r\nContent-Type: application/json\r\nIdempotency-Key: large\r\n" + t.auth +
               "Content-Length: " + std::to_string(pad.size() + 8) + "\r\n") +
      R"({"p":")" + pad + R"("})";
  const std::size_t body_at = large.find("\r\n\r\n") + 4;
  const int first = connect_to(server.port);
  send_all(first, large.substr(0, body_at + 1000));
  // The second large body would pass 7/8 of the budget: refused before it is read.
  bool closed = false;
  const std::string busy =
      webhooks::test::send_until_close(server.port, large.substr(0, body_at), closed);
  CHECK(closed);
  CHECK(busy.rfind("HTTP/1.1 503 Service Unavailable\r\n", 0) == 0);
  CHECK(busy.find("\r\nRetry-After: 1\r\n") != std::string::npos);
  CHECK(code_of(busy) == "server_busy");
  CHECK(status_of(webhooks::test::raw_exchange(server.port, valid_post(t, "small"))) == "201");
  // The first completes: it reaches its handler (422: not an order), and the budget is free again.
  send_all(first, large.substr(body_at + 1000));
  std::string answer;
  webhooks::test::read_answer(first, answer);
  ::close(first);
  CHECK(status_of(answer) == "422");
  const std::string again = webhooks::test::raw_exchange(server.port, large);
  CHECK(status_of(again) == "422");
  CHECK(code_of(again) != "server_busy");
}
