// Delivery control per endpoint in process, with a fake clock and real HTTP on loopback: each
// endpoint's share of a claim, the rate limit's window, FIFO sequences, static headers and
// credentials, and W3C trace context. Runs on SQLite and PostgreSQL.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <set>

#include "delivery/trace_context.h"
#include "fixture.h"
#include "receiver.h"
#include "support/test_env.h"
#include "test_certificates.h"
#include "webhooks/verifier.h"

namespace webhooks::test {
namespace {

using publisher::ClaimLimits;
using publisher::Ordering;
using publisher::TaskState;
using namespace std::chrono_literals;

// An endpoint as PublisherFixture::add_endpoint makes it, with `control` stored too.
publisher::Endpoint add_controlled(PublisherFixture& f, const std::string& merchant,
                                   const std::string& url, publisher::DeliveryControl control) {
  publisher::Endpoint e = f.add_endpoint(merchant, url);
  e.control = std::move(control);
  REQUIRE(f.store.update_endpoint(e, f.clock.now_ms()));
  return e;
}

publisher::Accepted publish_keyed(PublisherFixture& f, const std::string& merchant,
                                  const std::string& key, const std::string& data) {
  publisher::EventContext context;
  context.ordering_key = key;
  return f.ingest.publish(merchant, "order.updated", data, context);
}

// The `data` of each request `receiver` got, in arrival order.
std::vector<std::string> bodies(const Receiver& receiver) {
  std::vector<std::string> out;
  for (const Received& r : receiver.received()) {
    out.push_back(nlohmann::json::parse(r.body)["data"].dump());
  }
  return out;
}

TEST_CASE("a claim gives each endpoint its share, the one due longest first", "[control]") {
  PublisherFixture f("control-share");
  const auto busy = f.add_endpoint("m1", "http://127.0.0.1:9/busy");
  f.advance(1ms);
  const auto quiet = f.add_endpoint("m2", "http://127.0.0.1:9/quiet");
  for (int i = 0; i < 50; ++i) f.publish("m1", "order.created");
  f.advance(1ms);
  for (int i = 0; i < 3; ++i) f.publish("m2", "order.created");
  const auto now = f.clock.now_ms();
  ClaimLimits limits;
  limits.per_endpoint = 4;

  const auto first = f.store.claim("w/1", 10, now, now + 60'000, limits);
  REQUIRE(first.size() == 7);
  for (int i = 0; i < 4; ++i) CHECK(first[i].task.endpoint_id == busy.id);
  for (int i = 4; i < 7; ++i) CHECK(first[i].task.endpoint_id == quiet.id);
  // Both are at their share or empty: the busy endpoint's 46 other tasks wait.
  CHECK(f.store.claim("w/2", 10, now, now + 60'000, limits).empty());

  // A worker's own share: it holds 2 of the busy endpoint's tasks, so it may take 1 more of 3.
  const auto released = f.store.release("w/1", now);
  CHECK(released == 7);
  std::unordered_map<std::string, int> held{{busy.id, 2}};
  limits.per_endpoint_here = 3;
  limits.held = &held;
  const auto second = f.store.claim("w/3", 10, now, now + 60'000, limits);
  REQUIRE(second.size() == 4);
  CHECK(second[0].task.endpoint_id == busy.id);
  CHECK(second[1].task.endpoint_id == quiet.id);
}

TEST_CASE("a rate limit of N sends at most N in any 1.1 s and holds the rest without attempts",
          "[control][rate]") {
  PublisherFixture f("control-rate");
  Receiver receiver;
  publisher::DeliveryControl control;
  control.rate_limit = 3;
  const auto endpoint = add_controlled(f, "m1", receiver.url(), control);
  std::vector<std::string> ids;
  for (int i = 0; i < 7; ++i) ids.push_back(f.publish("m1", "order.created").event_id);

  CHECK(f.dispatcher.run_once() == 3);
  CHECK(f.dispatcher.run_once() == 0);
  f.advance(1099ms);
  CHECK(f.dispatcher.run_once() == 0);
  // The held-back tasks are not attempts: untouched, and the endpoint is not failing.
  const auto held = f.tasks(ids[6]);
  CHECK(held[0].state == TaskState::pending);
  CHECK(held[0].attempts == 0);
  CHECK(f.store.attempts_of_event(ids[6]).empty());
  CHECK_FALSE(f.store.find_endpoint(endpoint.id)->failing_since.has_value());
  f.advance(1ms);
  CHECK(f.dispatcher.run_once() == 3);
  f.advance(1100ms);
  CHECK(f.dispatcher.run_once() == 1);
  CHECK(receiver.count() == 7);

  // null: unlimited again.
  auto e = *f.store.find_endpoint(endpoint.id);
  e.control.rate_limit.reset();
  REQUIRE(f.store.update_endpoint(e, f.clock.now_ms()));
  for (int i = 0; i < 5; ++i) f.publish("m1", "order.created");
  CHECK(f.dispatcher.run_once() == 5);
}

TEST_CASE("FIFO: one at a time per ordering key, in acceptance order, other keys in parallel",
          "[control][fifo]") {
  PublisherFixture f("control-fifo");
  // a1's first attempt fails, every other request succeeds.
  bool failed_once = false;
  Receiver receiver([&failed_once](std::size_t, const Received& r) {
    const bool fail = !failed_once && r.body.find(R"("n":"a1")") != std::string::npos;
    failed_once = failed_once || fail;
    return Receiver::Reply{fail ? 500 : 200, {}};
  });
  publisher::DeliveryControl control;
  control.ordering = Ordering::fifo;
  add_controlled(f, "m1", receiver.url(), control);
  const auto a1 = publish_keyed(f, "m1", "order_1", R"({"n":"a1"})");
  const auto a2 = publish_keyed(f, "m1", "order_1", R"({"n":"a2"})");
  const auto a3 = publish_keyed(f, "m1", "order_1", R"({"n":"a3"})");
  const auto b1 = publish_keyed(f, "m1", "order_2", R"({"n":"b1"})");

  CHECK(f.tasks(a2.event_id)[0].waiting);
  CHECK_FALSE(f.tasks(b1.event_id)[0].waiting);
  CHECK(f.dispatcher.run_once() == 2);  // a1 (500) and b1; a2 and a3 wait behind a1
  CHECK(f.dispatcher.run_once() == 0);
  f.advance(5s);                                                // a1's retry
  CHECK(f.dispatcher.run_once() == 1);                          // a1 succeeds: a2 is due
  CHECK(f.tasks(a2.event_id)[0].age_from == f.clock.now_ms());  // its age counts from now
  CHECK(f.dispatcher.run_once() == 1);                          // a2
  CHECK(f.dispatcher.run_once() == 1);                          // a3
  CHECK(f.dispatcher.run_once() == 0);
  const std::vector<std::string> got = bodies(receiver);
  REQUIRE(got.size() == 5);
  // a1 and b1 went out together, in either order; then a1 again, a2, a3.
  CHECK(std::set<std::string>(got.begin(), got.begin() + 2) ==
        std::set<std::string>{R"({"n":"a1"})", R"({"n":"b1"})"});
  CHECK(std::vector<std::string>(got.begin() + 2, got.end()) ==
        std::vector<std::string>{R"({"n":"a1"})", R"({"n":"a2"})", R"({"n":"a3"})"});
  CHECK(f.tasks(a3.event_id)[0].state == TaskState::succeeded);
}

TEST_CASE("FIFO: a dead event lets its sequence go on; events without a key form one sequence",
          "[control][fifo]") {
  PublisherFixture f("control-fifo-dead",
                     [](publisher::Options& o) { o.permanent_statuses = {422}; });
  Receiver receiver(statuses({422, 200}));
  publisher::DeliveryControl control;
  control.ordering = Ordering::fifo;
  const auto endpoint = add_controlled(f, "m1", receiver.url(), control);
  const auto first = f.publish("m1", "order.created", R"({"n":1})");
  const auto second = f.publish("m1", "order.created", R"({"n":2})");
  const auto third = f.publish("m1", "order.created", R"({"n":3})");

  CHECK(f.dispatcher.run_once() == 1);  // 1 answered 422: dead at once
  CHECK(f.tasks(first.event_id)[0].state == TaskState::dead);
  CHECK(f.dispatcher.run_once() == 1);  // 2
  // No longer FIFO: the waiting task is released at once.
  auto e = *f.store.find_endpoint(endpoint.id);
  e.control.ordering = Ordering::none;
  const auto fourth = f.publish("m1", "order.created", R"({"n":4})");
  CHECK(f.tasks(fourth.event_id)[0].waiting);
  REQUIRE(f.store.update_endpoint(e, f.clock.now_ms()));
  CHECK_FALSE(f.tasks(fourth.event_id)[0].waiting);
  CHECK(f.dispatcher.run_once() == 2);  // 3 and 4 together
  CHECK(f.tasks(third.event_id)[0].state == TaskState::succeeded);
  CHECK(f.tasks(second.event_id)[0].state == TaskState::succeeded);
  CHECK(receiver.count() == 4);
}

TEST_CASE(
    "FIFO: a recovered event goes out beside its sequence's head, which still advances it "
    "one at a time",
    "[control][fifo]") {
  PublisherFixture f("control-fifo-recover",
                     [](publisher::Options& o) { o.permanent_statuses = {422}; });
  Receiver receiver(statuses({422, 200}));
  publisher::DeliveryControl control;
  control.ordering = Ordering::fifo;
  const auto endpoint = add_controlled(f, "m1", receiver.url(), control);
  const auto t0 = f.clock.now_ms();
  std::vector<std::string> ids;
  for (int i = 1; i <= 4; ++i) ids.push_back(publish_keyed(f, "m1", "k", "{}").event_id);
  CHECK(f.dispatcher.run_once() == 1);  // 1: 422, dead; 2 is due
  CHECK(f.tasks(ids[0])[0].state == TaskState::dead);
  CHECK(f.store.recover(endpoint.id, t0, f.clock.now_ms()) == 1);  // 1 again, outside the order
  CHECK(f.dispatcher.run_once() == 2);                             // 1 and 2 together
  // Exactly one advance: 3 is due, 4 still waits behind it.
  CHECK_FALSE(f.tasks(ids[2])[0].waiting);
  CHECK(f.tasks(ids[3])[0].waiting);
  CHECK(f.dispatcher.run_once() == 1);  // 3
  CHECK(f.dispatcher.run_once() == 1);  // 4
  CHECK(f.tasks(ids[3])[0].state == TaskState::succeeded);
}

TEST_CASE("static headers and a bearer or basic credential go with the signature",
          "[control][auth]") {
  PublisherFixture f("control-auth");
  Receiver bearer_receiver, basic_receiver;
  publisher::DeliveryControl bearer;
  bearer.headers = {{"X-Api-Key", "key-123"}, {"X-Tenant", "t 1"}};
  bearer.auth.type = publisher::EndpointAuth::Type::bearer;
  bearer.auth.token = "gw-token";
  const auto with_bearer = add_controlled(f, "m1", bearer_receiver.url(), bearer);
  publisher::DeliveryControl basic;
  basic.auth.type = publisher::EndpointAuth::Type::basic;
  basic.auth.username = "Aladdin";
  basic.auth.password = "open sesame";
  add_controlled(f, "m1", basic_receiver.url(), basic);
  f.publish("m1", "order.created");
  REQUIRE(f.dispatcher.run_once() == 2);

  const Received got = bearer_receiver.received().at(0);
  CHECK(got.header("Authorization") == "Bearer gw-token");
  CHECK(got.header("X-Api-Key") == "key-123");
  CHECK(got.header("X-Tenant") == "t 1");
  const Verifier verifier({Secret::parse(with_bearer.secrets[0].secret)});
  CHECK(verifier.verify(
      {got.header("webhook-id"), got.header("webhook-timestamp"), got.header("webhook-signature")},
      got.body, f.clock.now_seconds()));
  // RFC 7617's example.
  CHECK(basic_receiver.received().at(0).header("Authorization") ==
        "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==");
  // The credential is stored, read back whole, and never part of the endpoint's JSON (admin).
  const auto stored = f.store.find_endpoint(with_bearer.id);
  CHECK(stored->control.auth == bearer.auth);
  CHECK(stored->control.headers == bearer.headers);
}

TEST_CASE("each attempt carries a child of the event's traceparent; tracestate passed on",
          "[control][trace]") {
  PublisherFixture f("control-trace");
  Receiver receiver(statuses({503, 200}));
  f.add_endpoint("m1", receiver.url());
  publisher::EventContext context;
  context.traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  context.tracestate = "congo=t61rcWkgMzE";
  const auto given = f.ingest.publish("m1", "order.created", "{}", context);
  CHECK(f.store.find_event(given.event_id)->traceparent == context.traceparent);
  REQUIRE(f.dispatcher.run_once() == 1);
  f.advance(5s);
  REQUIRE(f.dispatcher.run_once() == 1);

  const auto got = receiver.received();
  REQUIRE(got.size() == 2);
  std::set<std::string> spans;
  for (const Received& r : got) {
    const std::string tp = r.header("traceparent");
    CHECK(publisher::valid_traceparent(tp));
    CHECK(tp.substr(0, 36) == "00-4bf92f3577b34da6a3ce929d0e0e4736-");
    CHECK(tp.substr(52) == "-01");
    CHECK(tp.substr(36, 16) != "00f067aa0ba902b7");
    spans.insert(tp.substr(36, 16));
    CHECK(r.header("tracestate") == "congo=t61rcWkgMzE");
  }
  CHECK(spans.size() == 2);
  const auto attempts = f.store.attempts_of_event(given.event_id);
  REQUIRE(attempts.size() == 2);
  CHECK(attempts[0].traceparent == got[0].header("traceparent"));
  CHECK(attempts[1].traceparent == got[1].header("traceparent"));

  // None given (or an invalid one): the publisher starts the event's trace; no tracestate.
  context.traceparent = "00-00000000000000000000000000000000-00f067aa0ba902b7-01";
  const auto started = f.ingest.publish("m1", "order.created", "{}", context);
  const auto event = f.store.find_event(started.event_id);
  CHECK(publisher::valid_traceparent(event->traceparent));
  CHECK(event->traceparent.substr(3, 32) != std::string(32, '0'));
  CHECK(event->tracestate.empty());
  REQUIRE(f.dispatcher.run_once() == 1);
  const Received last = receiver.received().back();
  CHECK(publisher::trace_id_of(last.header("traceparent")) ==
        publisher::trace_id_of(event->traceparent));
  CHECK(last.header("tracestate").empty());
}

TEST_CASE("mutual TLS: an https:// endpoint's client certificate is presented", "[control][mtls]") {
  const TestCertificates certs = make_test_certificates(temp_dir("control-mtls"));
  // Requires a client certificate signed by the test CA.
  httplib::SSLServer server(certs.server_cert.c_str(), certs.server_key.c_str(),
                            certs.ca_file.c_str());
  std::mutex mutex;
  std::vector<std::string> bodies_seen;
  server.Post("/hook", [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(mutex);
    bodies_seen.push_back(nlohmann::json::parse(req.body)["data"].dump());
    res.status = 204;
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread thread([&server] { server.listen_after_bind(); });
  {
    PublisherFixture f("control-mtls",
                       [&certs](publisher::Options& o) { o.ca_file = certs.ca_file; });
    const std::string url = "https://127.0.0.1:" + std::to_string(port) + "/hook";
    publisher::DeliveryControl ours;
    ours.client_certificate = certs.client_cert_pem;
    ours.client_key = certs.client_key_pem;
    add_controlled(f, "with-cert", url, ours);
    f.add_endpoint("without-cert", url);
    publisher::DeliveryControl stranger;
    stranger.client_certificate = certs.other_client_cert_pem;
    stranger.client_key = certs.other_client_key_pem;
    add_controlled(f, "stranger-cert", url, stranger);
    const auto accepted = f.publish("with-cert", "order.created", R"({"n":1})");
    const auto refused = f.publish("without-cert", "order.created", R"({"n":2})");
    const auto refused_too = f.publish("stranger-cert", "order.created", R"({"n":3})");
    REQUIRE(f.dispatcher.run_once() == 3);

    CHECK(f.store.attempts_of_event(accepted.event_id).at(0).status == 204);
    for (const auto& id : {refused.event_id, refused_too.event_id}) {
      const auto attempt = f.store.attempts_of_event(id).at(0);
      CHECK(attempt.status == 0);
      CHECK(attempt.error != publisher::TransportError::none);
    }
    std::lock_guard lock(mutex);
    CHECK(bodies_seen == std::vector<std::string>{R"({"n":1})"});
  }
  server.stop();
  thread.join();
}

TEST_CASE("trace context values: W3C's valid and invalid traceparents", "[control][trace]") {
  using publisher::valid_traceparent;
  CHECK(valid_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"));
  CHECK(valid_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"));
  CHECK(valid_traceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-later"));
  CHECK_FALSE(valid_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x"));
  CHECK_FALSE(valid_traceparent("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"));
  CHECK_FALSE(valid_traceparent("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"));
  CHECK_FALSE(valid_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"));
  CHECK_FALSE(valid_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7"));
  CHECK(publisher::trace_id_of("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01") ==
        "4bf92f3577b34da6a3ce929d0e0e4736");
  CHECK(publisher::trace_id_of("junk").empty());
  CHECK(publisher::valid_tracestate("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"));
  CHECK_FALSE(publisher::valid_tracestate("a=\x01"));
  CHECK_FALSE(publisher::valid_tracestate(std::string(513, 'a')));
}

TEST_CASE("static header names the publisher sets are refused", "[control][auth]") {
  using publisher::check_static_header;
  CHECK(check_static_header("X-Api-Key", "k").empty());
  CHECK(check_static_header("Host", "x") == "header \"Host\" is set by the publisher");
  CHECK(check_static_header("authorization", "x") ==
        "header \"authorization\" is set by the publisher (use \"auth\")");
  CHECK(check_static_header("Webhook-Id", "x") ==
        "webhook-* headers are the signature's (Standard Webhooks v1)");
  CHECK(check_static_header("X Key", "x") ==
        "header name \"X Key\" is not an HTTP token (RFC 9110 5.1)");
  CHECK(check_static_header("X-Key", "a\r\nb") ==
        "the value of header \"X-Key\" has a control character");
  CHECK(check_static_header("", "x") == "a header name must not be empty");
  CHECK(check_static_header("Content-Encoding", "gzip") ==
        "header \"Content-Encoding\" describes the body or the connection, which the publisher "
        "sets");
  CHECK(check_static_header("proxy-authorization", "x") ==
        "header \"proxy-authorization\" describes the body or the connection, which the "
        "publisher sets");
  CHECK(check_static_header("TE", "trailers") ==
        "header \"TE\" describes the body or the connection, which the publisher sets");
  CHECK(check_static_header("X-Key", "") == "the value of header \"X-Key\" is empty");
  CHECK(check_static_header("X-Key", " v") ==
        "the value of header \"X-Key\" starts or ends with whitespace");
  CHECK(check_static_header("X-Key", "a\tb").empty());
}

}  // namespace
}  // namespace webhooks::test
