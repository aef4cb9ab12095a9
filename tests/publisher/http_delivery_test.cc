// Real HTTP on 127.0.0.1 only. Nothing here waits for time to pass except the test server's slow
// handlers.
#include "delivery/http_delivery.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <condition_variable>
#include <mutex>
#include <set>

#include "delivery/delivery_queue.h"
#include "publisher/test_http_server.h"
#include "webhooks/error.h"

using namespace webhooks;
using namespace webhooks::publisher;
using namespace std::chrono_literals;
using webhooks::test::RefusingPort;
using webhooks::test::TestHttpServer;

namespace {

bool has_header(const HeaderList& headers, const std::string& name, const std::string& value) {
  for (const auto& [n, v] : headers) {
    if (n == name && v == value) return true;
  }
  return false;
}

// The merchant side: one route per behaviour under test.
class Endpoints {
 public:
  Endpoints() : server_([this](httplib::Server& s) { routes(s); }) {}
  ~Endpoints() { release_slow(); }  // before the server stops, which joins its threads

  std::string url(const std::string& path) const { return server_.url(path); }
  int port() const { return server_.port(); }
  void release_slow() {
    std::lock_guard lock(mutex_);
    released_ = true;
    cv_.notify_all();
  }

  std::atomic<int> ok_hits{0};
  std::atomic<int> target_hits{0};
  std::atomic<int> max_concurrent{0};
  std::mutex mutex_;  // guards the fields below
  std::vector<int> remote_ports;
  httplib::Headers last_headers;
  std::string last_body;

 private:
  void routes(httplib::Server& s) {
    s.Post("/ok", [this](const httplib::Request& req, httplib::Response& res) {
      ++ok_hits;
      std::lock_guard lock(mutex_);
      remote_ports.push_back(req.remote_port);
      last_headers = req.headers;
      last_body = req.body;
      res.set_content("ok", "text/plain");
    });
    s.Post(R"(/status/(\d+))", [](const httplib::Request& req, httplib::Response& res) {
      res.status = std::stoi(req.matches[1]);
      res.set_content("status", "text/plain");
    });
    s.Post("/slow", [this](const httplib::Request&, httplib::Response& res) {
      std::unique_lock lock(mutex_);
      cv_.wait_for(lock, 10s, [this] { return released_; });
      res.set_content("late", "text/plain");
    });
    s.Post("/redirect", [](const httplib::Request&, httplib::Response& res) {
      res.status = 302;
      res.set_header("Location", "/target");
    });
    auto target = [this](const httplib::Request&, httplib::Response&) { ++target_hits; };
    s.Post("/target", target);
    s.Get("/target", target);
    s.Post("/large", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string(1 << 20, 'x'), "text/plain");
    });
    s.Post("/exact", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string(4096, 'y'), "text/plain");
    });
    s.Post("/busy", [](const httplib::Request&, httplib::Response& res) {
      res.status = 503;
      res.set_header("Retry-After", "120");
      res.set_header("X-Request-Id", "abc");
    });
    // Holds each request 20 ms so that concurrent ones overlap, and echoes the body.
    s.Post("/concurrent", [this](const httplib::Request& req, httplib::Response& res) {
      const int now = ++concurrent_;
      for (int seen = max_concurrent.load(); now > seen;) {
        if (max_concurrent.compare_exchange_weak(seen, now)) break;
      }
      {
        std::unique_lock lock(mutex_);
        cv_.wait_for(lock, 20ms, [this] { return released_; });
      }
      --concurrent_;
      res.set_content(req.body, "text/plain");
    });
  }

  std::condition_variable cv_;
  bool released_ = false;
  std::atomic<int> concurrent_{0};
  TestHttpServer server_;
};

HttpDeliveryOptions loopback_options() {
  HttpDeliveryOptions options;
  options.allow_private_networks = true;  // the test server is on loopback
  return options;
}

DeliveryRequest post(std::string url, std::string body = "{}") {
  DeliveryRequest request;
  request.url = std::move(url);
  request.body = std::move(body);
  return request;
}

}  // namespace

TEST_CASE("a 200 answer, and the request arrives as sent") {
  Endpoints merchant;
  HttpDelivery client(loopback_options());
  DeliveryRequest request = post(merchant.url("/ok"), R"({"id":"msg_1","type":"order.captured"})");
  request.headers = {{"webhook-id", "msg_1"}, {"user-agent", "webhooks-publisher/0.1.0"}};
  const auto results = client.deliver({request});
  REQUIRE(results.size() == 1);
  const DeliveryResult& r = results[0];
  CHECK(r.status == 200);
  CHECK(r.error == TransportError::none);
  CHECK(r.error_message.empty());
  CHECK(r.body == "ok");
  CHECK_FALSE(r.body_truncated);
  CHECK(has_header(r.headers, "content-type", "text/plain"));
  CHECK(has_header(r.headers, "content-length", "2"));
  CHECK_FALSE(r.retry_after);
  CHECK(r.latency_ms >= 0);
  CHECK(r.latency_ms < 5000);
  std::lock_guard lock(merchant.mutex_);
  CHECK(merchant.last_body == R"({"id":"msg_1","type":"order.captured"})");
  CHECK(merchant.last_headers.find("webhook-id")->second == "msg_1");
  CHECK(merchant.last_headers.find("User-Agent")->second == "webhooks-publisher/0.1.0");
  CHECK(merchant.last_headers.find("Content-Type")->second == "application/json");
  CHECK(merchant.last_headers.count("Expect") == 0);
}

TEST_CASE("error statuses are results, not errors") {
  Endpoints merchant;
  HttpDelivery client(loopback_options());
  const auto results =
      client.deliver({post(merchant.url("/status/500")), post(merchant.url("/status/410")),
                      post(merchant.url("/status/404"))});
  CHECK(results[0].status == 500);
  CHECK(results[1].status == 410);
  CHECK(results[2].status == 404);
  for (const auto& r : results) {
    CHECK(r.error == TransportError::none);
    CHECK(r.body == "status");
  }
}

TEST_CASE("a slow endpoint hits the total timeout") {
  Endpoints merchant;
  HttpDeliveryOptions options = loopback_options();
  options.total_timeout = 300ms;
  HttpDelivery client(options);
  const auto r = client.deliver({post(merchant.url("/slow"))})[0];
  CHECK(r.status == 0);
  CHECK(r.error == TransportError::timeout);
  CHECK_THAT(r.error_message, Catch::Contains("timed out"));
  CHECK(r.latency_ms >= 290);
  CHECK(r.latency_ms < 5000);
}

TEST_CASE("a refused connection is a connect error") {
  RefusingPort nobody;
  HttpDelivery client(loopback_options());
  const auto r =
      client.deliver({post("http://127.0.0.1:" + std::to_string(nobody.port()) + "/")})[0];
  CHECK(r.status == 0);
  CHECK(r.error == TransportError::connect);
  CHECK_THAT(r.error_message, Catch::Contains("127.0.0.1"));
}

TEST_CASE("a redirect is a status and is not followed") {
  Endpoints merchant;
  HttpDelivery client(loopback_options());
  const auto r = client.deliver({post(merchant.url("/redirect"))})[0];
  CHECK(r.status == 302);
  CHECK(r.error == TransportError::none);
  CHECK(has_header(r.headers, "location", "/target"));
  CHECK(merchant.target_hits == 0);
}

TEST_CASE("response bodies are read up to the cap") {
  Endpoints merchant;
  HttpDelivery client(loopback_options());
  auto results = client.deliver({post(merchant.url("/large")), post(merchant.url("/exact"))});
  CHECK(results[0].status == 200);
  CHECK(results[0].error == TransportError::none);
  CHECK(results[0].body == std::string(4096, 'x'));
  CHECK(results[0].body_truncated);
  CHECK(results[1].status == 200);
  CHECK(results[1].body == std::string(4096, 'y'));
  CHECK_FALSE(results[1].body_truncated);

  HttpDeliveryOptions roomy = loopback_options();
  roomy.max_response_bytes = 2 << 20;
  HttpDelivery big(roomy);
  const auto whole = big.deliver({post(merchant.url("/large"))})[0];
  CHECK(whole.body.size() == (1u << 20));
  CHECK_FALSE(whole.body_truncated);
}

TEST_CASE("Retry-After and other response headers are captured") {
  Endpoints merchant;
  HttpDelivery client(loopback_options());
  const auto r = client.deliver({post(merchant.url("/busy"))})[0];
  CHECK(r.status == 503);
  CHECK(r.retry_after == "120");
  CHECK(has_header(r.headers, "retry-after", "120"));
  CHECK(has_header(r.headers, "x-request-id", "abc"));
}

TEST_CASE("loopback is refused at connect time unless private networks are allowed") {
  Endpoints merchant;
  HttpDelivery client;  // the default: private networks not allowed
  const auto results =
      client.deliver({post(merchant.url("/ok")),
                      post("http://localhost:" + std::to_string(merchant.port()) + "/ok"),
                      post("http://0x7f000001:" + std::to_string(merchant.port()) + "/ok")});
  for (const auto& r : results) {
    CHECK(r.status == 0);
    CHECK(r.error == TransportError::address_refused);
    CHECK_THAT(r.error_message, Catch::StartsWith("refused to connect to "));
  }
  CHECK(results[0].error_message ==
        "refused to connect to 127.0.0.1, a loopback address; private networks are not allowed");
  CHECK(merchant.ok_hits == 0);
}

TEST_CASE("100 concurrent requests all complete, in order") {
  Endpoints merchant;
  HttpDeliveryOptions options = loopback_options();
  options.max_in_flight = 100;
  HttpDelivery client(options);
  std::vector<DeliveryRequest> requests;
  for (int i = 0; i < 100; ++i)
    requests.push_back(post(merchant.url("/concurrent"), std::to_string(i)));
  const auto results = client.deliver(std::move(requests));
  REQUIRE(results.size() == 100);
  for (int i = 0; i < 100; ++i) {
    INFO(i);
    CHECK(results[i].status == 200);
    CHECK(results[i].body == std::to_string(i));
  }
  CHECK(merchant.max_concurrent > 1);
  CHECK(merchant.max_concurrent <= 100);
}

TEST_CASE("no more than max_in_flight requests run at once") {
  Endpoints merchant;
  HttpDeliveryOptions options = loopback_options();
  options.max_in_flight = 4;
  HttpDelivery client(options);
  std::vector<DeliveryRequest> requests(20, post(merchant.url("/concurrent")));
  for (const auto& r : client.deliver(std::move(requests))) CHECK(r.status == 200);
  CHECK(merchant.max_concurrent >= 1);
  CHECK(merchant.max_concurrent <= 4);
}

TEST_CASE("no more than max_connections_per_endpoint run at once to one endpoint") {
  Endpoints merchant, other;
  HttpDeliveryOptions options = loopback_options();
  options.max_in_flight = 8;
  options.max_connections_per_endpoint = 2;
  HttpDelivery client(options);
  std::vector<DeliveryRequest> requests;
  for (int i = 0; i < 12; ++i)
    requests.push_back(post(merchant.url("/concurrent"), std::to_string(i)));
  for (int i = 0; i < 12; ++i) requests.push_back(post(other.url("/ok"), std::to_string(i)));
  const auto results = client.deliver(std::move(requests));
  REQUIRE(results.size() == 24);
  for (int i = 0; i < 12; ++i) {
    CHECK(results[i].status == 200);
    CHECK(results[i].body == std::to_string(i));  // queued ones still complete, in order
  }
  for (int i = 12; i < 24; ++i) CHECK(results[i].status == 200);
  CHECK(merchant.max_concurrent == 2);
  std::lock_guard lock(other.mutex_);
  CHECK(other.remote_ports.size() == 12);  // the other endpoint has its own cap
  CHECK(std::set<int>(other.remote_ports.begin(), other.remote_ports.end()).size() <= 2);
}

TEST_CASE("connections are reused across requests and calls") {
  Endpoints merchant;
  HttpDeliveryOptions options = loopback_options();
  options.max_in_flight = 1;
  HttpDelivery client(options);
  for (int round = 0; round < 2; ++round) {
    std::vector<DeliveryRequest> requests(5, post(merchant.url("/ok")));
    for (const auto& r : client.deliver(std::move(requests))) CHECK(r.status == 200);
  }
  std::lock_guard lock(merchant.mutex_);
  REQUIRE(merchant.remote_ports.size() == 10);
  CHECK(std::set<int>(merchant.remote_ports.begin(), merchant.remote_ports.end()).size() == 1);
}

TEST_CASE("unusable requests are never sent") {
  Endpoints merchant;
  HttpDelivery client(loopback_options());
  DeliveryRequest injected = post(merchant.url("/ok"));
  injected.headers = {{"x-note", "a\r\nx-evil: 1"}};
  DeliveryRequest unnamed = post(merchant.url("/ok"));
  unnamed.headers = {{"", "v"}};
  const auto results =
      client.deliver({post("ftp://127.0.0.1:21/"), injected, post(merchant.url("/ok")), unnamed});
  CHECK(results[0].error == TransportError::invalid_request);
  CHECK(results[1].error == TransportError::invalid_request);
  CHECK(results[1].error_message ==
        "a request header has an empty name, a colon in its name, or CR/LF/NUL");
  CHECK(results[2].status == 200);
  CHECK(results[3].error == TransportError::invalid_request);
  CHECK(merchant.ok_hits == 1);
}

TEST_CASE("submit and poll, with a wakeup from another thread") {
  Endpoints merchant;
  detail::DeliveryQueue client(loopback_options());  // the engine under HttpDelivery::deliver
  CHECK(client.poll(10s).empty());                   // nothing pending: returns at once
  const auto slow = client.submit(post(merchant.url("/slow")));
  CHECK(slow == 1);
  CHECK(client.pending() == 1);

  const auto started = std::chrono::steady_clock::now();
  std::thread waker([&client] { client.wakeup(); });
  waker.join();
  CHECK(client.poll(10s).empty());  // woken, not finished
  CHECK(std::chrono::steady_clock::now() - started < 5s);
  CHECK(client.pending() == 1);

  const auto fast = client.submit(post(merchant.url("/ok")));
  CHECK(fast == 2);
  std::vector<detail::DeliveryQueue::Completion> done;
  while (done.empty()) done = client.poll(5s);
  REQUIRE(done.size() == 1);
  CHECK(done[0].ticket == fast);
  CHECK(done[0].result.status == 200);

  merchant.release_slow();
  done.clear();
  while (done.empty()) done = client.poll(5s);
  CHECK(done[0].ticket == slow);
  CHECK(done[0].result.body == "late");
  CHECK(client.pending() == 0);
}

TEST_CASE("delivery options are checked") {
  HttpDeliveryOptions none;
  none.max_in_flight = 0;
  CHECK_THROWS_AS(HttpDelivery(none), Error);
  HttpDeliveryOptions instant;
  instant.total_timeout = 0ms;
  CHECK_THROWS_AS(HttpDelivery(instant), Error);
  CHECK(HttpDelivery().deliver({}).empty());
  CHECK(to_string(TransportError::none) == "none");
  CHECK(to_string(TransportError::timeout) == "timeout");
  CHECK(to_string(TransportError::connect) == "connect");
  CHECK(to_string(TransportError::address_refused) == "address_refused");
  CHECK(to_string(TransportError::tls) == "tls");
  CHECK(to_string(TransportError::invalid_request) == "invalid_request");
  CHECK(to_string(TransportError::other) == "other");
}

TEST_CASE("an attempt's transport error is stored as its code and message, and read back typed") {
  CHECK(error_text(TransportError::none, "") == "");
  CHECK(error_text(TransportError::timeout, "Operation timed out after 1000 milliseconds") ==
        "timeout: Operation timed out after 1000 milliseconds");
  CHECK(error_text(TransportError::address_refused, "refused to connect to 127.0.0.1") ==
        "address_refused: refused to connect to 127.0.0.1");
  std::string message;
  CHECK(parse_error_text("address_refused: refused to connect to 127.0.0.1", message) ==
        TransportError::address_refused);
  CHECK(message == "refused to connect to 127.0.0.1");
  CHECK(parse_error_text("connect: Failed to connect to 127.0.0.1 port 9", message) ==
        TransportError::connect);
  CHECK(message == "Failed to connect to 127.0.0.1 port 9");
  CHECK(parse_error_text("", message) == TransportError::none);
  CHECK(message.empty());
  // Text without a known code (none of ours writes it) reads as `other`, kept whole.
  CHECK(parse_error_text("timeouts: x", message) == TransportError::other);
  CHECK(message == "timeouts: x");
  CHECK(parse_error_text("none: x", message) == TransportError::other);
  CHECK(message == "none: x");
}
