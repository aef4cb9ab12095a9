// The HTTP edge contract of issue 25, checked against each server binary over raw sockets on
// 127.0.0.1 (CTest: http_edge.publisherd, http_edge.orders_api, http_edge.merchant_receiver,
// http_edge.payout_partner, one Catch2 tag each). Every refusal is one answer with its exact
// status, the project's JSON error body, `Connection: close`, then the connection closed (a valid
// request sent behind it is never served); what RFC 9112 allows is still served; compressed bodies
// are refused without being inflated; a header that must be single, sent twice, never reaches a
// handler; header values reach handlers byte for byte; half-closed clients get every answer of
// the requests they sent whole and nothing for a request cut short; --max-buffered-bytes answers
// 503 server_busy past the budget while small requests are served. docs/security.md.
#include "edge_binaries.h"

#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "support/test_env.h"

using namespace webhooks::test::edge;
using webhooks::test::connect_to;
using webhooks::test::read_answer;
using webhooks::test::send_all;

namespace {

struct Refusal {
  std::string request;
  std::string status;
  std::string code;
};

// 400 bad_request, whatever the route.
std::vector<Refusal> bad_requests(const Target& t) {
  const std::string& g = t.get_path;
  const std::string post = "POST " + t.post_path + " HTTP/1.1\r\nHost: a\r\n" + t.auth;
  const auto bad = [](std::string request) -> Refusal {
    return {std::move(request), "400 Bad Request", "bad_request"};
  };
  return {
      bad(post + "Content-Length: 4\r\n 4\r\n\r\nabcd"),   // obs-fold, SP
      bad(post + "Content-Length: 4\r\n\t4\r\n\r\nabcd"),  // obs-fold, HTAB
      bad("GET " + g + " HTTP/1.1\r\n Host: a\r\n\r\n"),   // a first field line folded
      bad("GET " + g + " HTTP/1.1\r\nHost: a\nX: y\r\n\r\n"),
      bad("GET " + g + " HTTP/1.1\nHost: a\r\n\r\n"),
      bad("GET " + g + " HTTP/1.1\r\nHost: a\r\n\n"),  // the blank line a bare LF
      bad(head("GET", g, "Host: a\r\nX: a\rb\r\n")),
      bad(head("GET", g, "Host: a\r\nX: a\r\r\n")),
      bad(head("GET", g, std::string("Host: a\r\nX: a") + '\0' + "b\r\n")),
      bad(head("GET", g, "Host: a\r\nX: a\x01\r\n")),
      bad(head("GET", g, "Host: a\r\nX: a\x7f\r\n")),
      bad("GET  " + g + " HTTP/1.1\r\nHost: a\r\n\r\n"),
      bad("GET " + g + "  HTTP/1.1\r\nHost: a\r\n\r\n"),
      bad("GET\t" + g + " HTTP/1.1\r\nHost: a\r\n\r\n"),
      bad(head("GET", g, "Host: a\r\nNo-Colon\r\n")),
      bad(head("GET", g, "Host: a\r\n: empty-name\r\n")),
      bad(head("GET", g, "Host: a\r\nX\xff: a\r\n")),
      bad(post + "Content-Length : 4\r\n\r\nabcd"),
      bad(head("GET", g, "")),  // HTTP/1.1 without Host
      bad(head("GET", g, "Host: a\r\nHost: a\r\n")),
      bad(head("GET", g, "Host: a\r\nhost: b\r\n")),
      bad(head("GET", g, "Host: a b\r\n")),
      bad(post + "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}"),
      bad(post + "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{} "),
      bad(post + "Content-Length: 2x\r\n\r\n{}"),
      bad(post + "Content-Length: +2\r\n\r\n{}"),
      bad(post + "Content-Length: 2, 2\r\n\r\n{}"),
      bad(post + "Content-Length: 0x2\r\n\r\n{}"),
      bad(head("GET", g + "\xff", "Host: a\r\n")),
      bad(head("GET", g + "\x01", "Host: a\r\n")),
      bad(head("GET", g + "\x7f", "Host: a\r\n")),
      bad(head("GET", g, "Host: a\r\nContent-Length: 5\r\n") + "abcde"),
  };
}

// bad_requests(t), a header that must be single sent twice (400), and 411, 414, 431, 501, 505.
std::vector<Refusal> refusals(const Target& t) {
  const std::string& g = t.get_path;
  const std::string post = "POST " + t.post_path + " HTTP/1.1\r\nHost: a\r\n" + t.auth;
  std::vector<Refusal> r = bad_requests(t);
  for (const std::string name :
       {"Authorization", "Content-Type", "Idempotency-Key", "idempotency-key", "X-Idempotency-Key",
        "webhook-id", "webhook-timestamp", "webhook-signature"}) {
    r.push_back({post + name + ": a\r\n" + name + ": a\r\nContent-Length: 2\r\n\r\n{}",
                 "400 Bad Request", "bad_request"});  // equal values too
  }
  const std::string chunked = post + "Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n";
  r.push_back({chunked, "411 Length Required", "length_required"});
  for (const std::string method : {"FOO", "get", "Get"}) {
    r.push_back({head(method, g, "Host: a\r\n"), "501 Not Implemented", "not_implemented"});
  }
  for (const std::string version : {"HTTP/1.2", "HTTP/2.0", "HTTP/3.0"}) {
    r.push_back({"GET " + g + " " + version + "\r\nHost: a\r\n\r\n",
                 "505 HTTP Version Not Supported", "http_version_not_supported"});
  }
  // A request line of 8 KiB + 1 bytes (CRLF not counted); a field line of 8 KiB + 1.
  const std::string line = "GET " + g + "?" + " HTTP/1.1";
  r.push_back({head("GET", g + "?" + std::string(8193 - line.size(), 'a'), "Host: a\r\n"),
               "414 URI Too Long", "uri_too_long"});
  r.push_back({head("GET", g, "Host: a\r\nX: " + std::string(8193 - 3, 'a') + "\r\n"),
               "431 Request Header Fields Too Large", "headers_too_large"});
  return r;
}

// What RFC 9112 allows is served: 200 on the GET route.
std::vector<std::string> allowed(const Target& t) {
  const std::string& g = t.get_path;
  const std::string line = "GET " + g + "?" + " HTTP/1.1";
  return {
      head("GET", g + "?" + std::string(8192 - line.size(), 'a'), "Host: a\r\n"),
      head("GET", g, "Host: a\r\nX: " + std::string(8192 - 3, 'a') + "\r\n"),
      "GET " + g + " HTTP/1.0\r\n\r\n",  // HTTP/1.0 needs no Host
      head("GET", g, "Host:  a:80 \t\r\nX-Note: caf\xc3\xa9\tau lait\r\n"),
      "\r\n" + head("GET", g, "Host: a\r\n"),  // one empty line before the request line
      head("GET", g, "Host: a\r\nContent-Length: 0\r\nContent-Encoding: gzip\r\n"),
  };
}

void framing(const Target& t, int port) {
  for (const Refusal& r : refusals(t)) {
    INFO(r.request.substr(0, 160));
    // A valid request behind the refused one: never served.
    expect_error(transcript_of(port, r.request + get(t)), r.status, r.code);
  }
  for (const std::string& request : allowed(t)) {
    INFO(request.substr(0, 160));
    CHECK(status_of(webhooks::test::raw_exchange(port, request)) == "200");
  }
  const std::string identity = valid_post(t, "identity-1", 0, "Content-Encoding: identity\r\n");
  CHECK(status_of(webhooks::test::raw_exchange(port, identity)) == t.created);
}

void bombs(const Target& t, int port) {
  static const std::string gzip = zero_bomb(31, 200), deflate = zero_bomb(15, 200);
  for (const std::string coding : {"gzip", "deflate"}) {
    INFO(coding);
    const std::string& bomb = coding == "gzip" ? gzip : deflate;
    REQUIRE(bomb.size() > 150 * 1024);  // 200 MiB inflated
    REQUIRE(bomb.size() < 300 * 1024);
    const std::string request =
        head("POST", t.post_path,
             "Host: a\r\nContent-Type: application/json\r\n" + t.auth + t.key_header +
                 ": bomb\r\nContent-Encoding: " + coding +
                 "\r\nContent-Length: " + std::to_string(bomb.size()) + "\r\n") +
        bomb;
    const auto t0 = std::chrono::steady_clock::now();
    const Transcript got = transcript_of(port, request);
    const auto took = std::chrono::steady_clock::now() - t0;
    expect_error(got, "415 Unsupported Media Type", "unsupported_media_type");
    CHECK(header_of(got.bytes, "Accept-Encoding") == "identity");
    CHECK(took < std::chrono::seconds(2));  // a bound on a correctness check, not a benchmark
  }
  const std::string after = webhooks::test::raw_exchange(port, valid_post(t, "bomb"));
  CHECK(status_of(after) == t.created);  // the key "bomb" never reached a handler
  CHECK(header_of(after, "Idempotent-Replayed").empty());
}

// Two lines of the key header (equal, or A then B): refused before any handler ran; the key sent
// once afterwards is new (no Idempotent-Replayed), and sent again a replay.
void single_key(const Target& t, int port) {
  const std::string line = t.key_header + ": ";
  expect_error(transcript_of(port, line_twice(valid_post(t, "K1"), line)), "400 Bad Request",
               "bad_request");
  expect_error(transcript_of(port, line_twice(valid_post(t, "K1"), line, line + "K2")),
               "400 Bad Request", "bad_request");
  expect_error(transcript_of(port, line_twice(valid_post(t, "K2"), line, line + "K1")),
               "400 Bad Request", "bad_request");
  if (t.name == "merchant-receiver") {  // the signature and timestamp lines twice, all valid
    for (const std::string other : {"webhook-signature: ", "webhook-timestamp: "}) {
      expect_error(transcript_of(port, line_twice(valid_post(t, "K1"), other)), "400 Bad Request",
                   "bad_request");
    }
  }
  for (const std::string key : {"K1", "K2"}) {
    const std::string first = webhooks::test::raw_exchange(port, valid_post(t, key));
    CHECK(status_of(first) == t.created);
    CHECK(header_of(first, "Idempotent-Replayed").empty());
    const std::string again = webhooks::test::raw_exchange(port, valid_post(t, key));
    CHECK(header_of(again, "Idempotent-Replayed") == "true");
  }
}

// The handled events of merchant-receiver: event id -> {calls, effects}.
std::map<std::string, std::pair<int, int>> handled(int port) {
  const auto json =
      json_of(webhooks::test::raw_exchange(port, head("GET", "/handled", "Host: a\r\n")))["events"];
  std::map<std::string, std::pair<int, int>> out;
  for (const auto& e : json) out[e["event_id"]] = {e["calls"], e["effects"]};
  return out;
}

// `K%2Fx` and `K/x` are two keys (cpp-httplib 0.11 percent-decoded header values); a webhook-id
// `K%2Fx` signed as sent verifies.
void bytes_as_sent(const Target& t, int port) {
  const std::string encoded = webhooks::test::raw_exchange(port, valid_post(t, "K%2Fx"));
  const std::string plain = webhooks::test::raw_exchange(port, valid_post(t, "K/x"));
  CHECK(status_of(encoded) == t.created);
  CHECK(status_of(plain) == t.created);
  CHECK(header_of(plain, "Idempotent-Replayed").empty());
  if (t.id_field.empty()) {
    const auto events = handled(port);
    CHECK(events.count("K%2Fx") == 1);
    CHECK(events.count("K/x") == 1);
  } else {
    CHECK(json_of(encoded).value(t.id_field, "a") != json_of(plain).value(t.id_field, "b"));
  }
}

// 20 times: one whole request, then SHUT_WR: its answer, then closed; two pipelined, then SHUT_WR:
// both answers. A request cut short, then SHUT_WR: no answer, closed, and no handler ran.
void half_closed(const Target& t, int port) {
  std::vector<std::string> keys;
  for (int i = 0; i < 20; ++i) {
    INFO("round " << i);
    const std::string one = "half-" + std::to_string(i), two = "pair-" + std::to_string(i);
    keys.insert(keys.end(), {one, two});
    const Transcript single = transcript_of(port, valid_post(t, one), true);
    CHECK(single.closed);
    CHECK(answers_in(single.bytes) == 1);
    CHECK(status_of(single.bytes) == t.created);
    const Transcript pair = transcript_of(port, valid_post(t, two) + get(t), true);
    CHECK(pair.closed);
    CHECK(answers_in(pair.bytes) == 2);
    CHECK(status_of(pair.bytes) == t.created);
    const std::size_t second = pair.bytes.find("HTTP/1.1 ", 1);
    CHECK(status_of(second == std::string::npos ? "" : pair.bytes.substr(second)) == "200");
  }
  const std::string post = valid_post(t, "cut"), g = get(t);
  const std::size_t blank = post.find("\r\n\r\n");
  for (const std::string& cut :
       {post.substr(0, blank + 2), post.substr(0, post.size() - 1), g.substr(0, g.size() - 2)}) {
    INFO(cut.substr(0, 80));
    const Transcript got = transcript_of(port, cut, true);
    CHECK(got.closed);
    CHECK(got.bytes.empty());
  }
  const Transcript whole_then_cut = transcript_of(port, g + post.substr(0, post.size() - 1), true);
  CHECK(whole_then_cut.closed);
  CHECK(answers_in(whole_then_cut.bytes) == 1);
  CHECK(status_of(whole_then_cut.bytes) == "200");
  const std::string after = webhooks::test::raw_exchange(port, valid_post(t, "cut"));
  CHECK(status_of(after) == t.created);
  CHECK(header_of(after, "Idempotent-Replayed").empty());
  if (t.name != "merchant-receiver") return;
  const auto events = handled(port);  // every delivery handled, once
  for (const std::string& key : keys) {
    INFO(key);
    CHECK(events.count(key) == 1);
    if (events.count(key)) CHECK(events.at(key) == std::pair{1, 1});
  }
  const std::string again = webhooks::test::raw_exchange(port, valid_post(t, "half-7"));
  CHECK(status_of(again) == "200");
  CHECK(header_of(again, "Idempotent-Replayed") == "true");
}

std::size_t body_at(const std::string& request) { return request.find("\r\n\r\n") + 4; }

// A new connection that sent `request`'s head and `body_sent` bytes of its body; the server's
// first answer (100 Continue once the request is charged to the budget, or an error) in `answer`.
int send_part(int port, const std::string& request, std::size_t body_sent, std::string& answer) {
  const int fd = connect_to(port);
  send_all(fd, request.substr(0, body_at(request) + body_sent));
  answer.clear();
  read_answer(fd, answer);
  return fd;
}

const std::string kContinue = "HTTP/1.1 100 Continue\r\n\r\n";

// --max-buffered-bytes 1048576: a 600,000-byte request is charged whole when its head is read; a
// second and third do not fit (7/8 of the budget for large requests): 503 server_busy before
// their bodies; a small request is served; once the first completes, or one aborts, a large
// request is accepted again.
void budget(const Target& t, const std::string& dir) {
  Started s(t, dir, {"--max-buffered-bytes", "1048576"});
  const auto large = [&](const std::string& key) {
    return valid_post(t, key, 600'000, "Expect: 100-continue\r\n");
  };
  std::string answer;
  const std::string big1 = large("big-1");
  const int first = send_part(s.port, big1, 1000, answer);
  REQUIRE(answer == kContinue);
  for (const std::string key : {"big-2", "big-3"}) {
    const int fd = send_part(s.port, large(key), 1000, answer);
    Transcript got;
    got.bytes = answer + webhooks::test::read_until_close(fd, got.closed);
    ::close(fd);
    expect_error(got, "503 Service Unavailable", "server_busy");
    CHECK(header_of(got.bytes, "Retry-After") == "1");
  }
  CHECK(status_of(webhooks::test::raw_exchange(s.port, valid_post(t, "small"))) == t.created);
  send_all(first, big1.substr(body_at(big1) + 1000));
  answer.clear();
  read_answer(first, answer);
  ::close(first);
  CHECK(status_of(answer) == t.created);
  ::close(send_part(s.port, large("big-4"), 1000, answer));  // accepted, then aborted
  CHECK(answer == kContinue);
  // The abort's bytes are released when the loop reads its close: probe (bounded) until accepted.
  bool accepted = false;
  for (int i = 0; i < 100 && !accepted; ++i) {
    const std::string big5 = large("big-5");
    const int fd = send_part(s.port, big5, 0, answer);
    accepted = answer == kContinue;
    if (accepted) {
      send_all(fd, big5.substr(body_at(big5)));
      answer.clear();
      read_answer(fd, answer);
      CHECK(status_of(answer) == t.created);
    } else {
      REQUIRE(status_of(answer) == "503");
    }
    ::close(fd);
  }
  CHECK(accepted);
  for (const std::string key : {"big-2", "big-3", "big-4"}) {  // never reached a handler
    const std::string fresh = webhooks::test::raw_exchange(s.port, valid_post(t, key));
    CHECK(status_of(fresh) == t.created);
    CHECK(header_of(fresh, "Idempotent-Replayed").empty());
  }
  CHECK(s.process->running());
}

void suite(const std::string& name) {
  const std::string dir = webhooks::test::temp_dir("http_edge");
  const Target t = target(name, dir);
  INFO(name << ", files in " << dir);
  const auto on_started = [&](void (*check)(const Target&, int)) {
    Started s(t, dir);
    check(t, s.port);
    CHECK(s.process->running());
  };
  SECTION("malformed framing: one answer, closed; what RFC 9112 allows: served") {
    on_started(framing);
  }
  SECTION("gzip and deflate bombs: 415 within 2 s, still serving") { on_started(bombs); }
  SECTION("a key header twice: 400 before any handler") { on_started(single_key); }
  SECTION("header values byte for byte") { on_started(bytes_as_sent); }
  SECTION("half-closed clients") { on_started(half_closed); }
  if (t.budget_flag) {
    SECTION("the buffer budget (--max-buffered-bytes)") { budget(t, dir); }
  }
}

}  // namespace

TEST_CASE("the HTTP edge of webhooks-publisherd", "[publisherd]") { suite("webhooks-publisherd"); }
TEST_CASE("the HTTP edge of orders-api", "[orders_api]") { suite("orders-api"); }
TEST_CASE("the HTTP edge of merchant-receiver", "[merchant_receiver]") {
  suite("merchant-receiver");
}
TEST_CASE("the HTTP edge of payout-partner", "[payout_partner]") { suite("payout-partner"); }
