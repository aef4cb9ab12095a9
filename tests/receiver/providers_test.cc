// Receivers of other providers' webhooks (Config::provider): the provider's id is the dedup key,
// its refusals get the receiver's answers; in process on the engine under test with a fake clock,
// and build/bin/merchant-receiver --provider as a real process on 127.0.0.1.
#include <httplib.h>

#include "merchant_process.h"
#include "receiver_support.h"
#include "webhooks/error.h"
#include "webhooks/idempotency/schema.h"
#include "webhooks/launcher/child_process.h"
#include "webhooks/providers/github.h"
#include "webhooks/providers/shopify.h"
#include "webhooks/providers/slack.h"
#include "webhooks/providers/stripe.h"

using namespace receiver_test;
using providers::Provider;
using Process = webhooks::launcher::ChildProcess;

namespace {

const std::string kStripeEvent =
    R"({"id":"evt_1NG8Du2eZvKYlo2CUI79vXWy","object":"event","type":"payment_intent.succeeded",)"
    R"("data":{"object":{"id":"pi_1","amount":2000}}})";

struct Fixture {
  explicit Fixture(Provider provider, const std::string& secret) {
    Config config = test_config(clock, "provider_" + std::string(to_string(provider)));
    config.provider = provider;
    config.secrets = {"an old secret", secret};
    receiver = std::make_unique<Receiver>(config, db);
  }
  FakeClock clock{kNow * 1000};
  std::shared_ptr<db::Database> db =
      test::open_database("receiver_providers", {idempotency::schema()});
  std::unique_ptr<Receiver> receiver;
  std::vector<std::string> seen;  // "id type timestamp" per handler call
  Answer post(const Headers& headers, const std::string& body) {
    return receiver->handle(headers, body, [&](const Event& e) {
      seen.push_back(std::string(e.id) + " " + std::string(e.type) + " " +
                     std::to_string(e.timestamp));
      return Reply{};
    });
  }
};

// `headers` and `body` delivered twice to `f`: 200 both times, the handler run once, as `seen`.
void check_delivered_twice(Fixture& f, const Headers& headers, const std::string& body,
                           const std::string& seen) {
  CHECK(f.post(headers, body).status == 200);
  CHECK(f.post(headers, body).status == 200);
  CHECK(f.seen == std::vector<std::string>{seen});
}

}  // namespace

TEST_CASE("stripe: one handler run per event id, the duplicate replayed; refusals answered") {
  Fixture f(Provider::stripe, "whsec_stripe");
  const auto at = [](std::int64_t t, const std::string& secret = "whsec_stripe") {
    return Headers{{"Stripe-Signature", providers::stripe::sign(secret, t, kStripeEvent)}};
  };
  CHECK(f.post(at(kNow), kStripeEvent).status == 200);
  const Answer again = f.post(at(kNow - 10), kStripeEvent);  // Stripe's retry: a new t
  CHECK(again.status == 200);
  CHECK(header(again, "Idempotent-Replayed") == "true");
  CHECK(f.seen == std::vector<std::string>{
                      "evt_1NG8Du2eZvKYlo2CUI79vXWy payment_intent.succeeded 1700000000"});
  const auto refused = [&](const Headers& headers, const std::string& body) {
    const Answer a = f.post(headers, body);
    return std::to_string(a.status) + " " + error_code(a);
  };
  CHECK(refused(at(kNow), kStripeEvent + " ") == "401 signature_invalid");
  CHECK(refused(at(kNow, "whsec_other"), kStripeEvent) == "401 signature_invalid");
  CHECK(refused(at(kNow - 301), kStripeEvent) == "401 timestamp_out_of_tolerance");
  CHECK(refused(at(kNow + 301), kStripeEvent) == "401 timestamp_out_of_tolerance");
  CHECK(refused({{"Stripe-Signature", "t=1700000000"}}, kStripeEvent) == "400 headers_invalid");
  CHECK(refused({}, kStripeEvent) == "400 headers_invalid");
  const std::string no_id = R"({"object":"event"})";
  CHECK(refused({{"Stripe-Signature", providers::stripe::sign("whsec_stripe", kNow, no_id)}},
                no_id) == "400 event_id_missing");
  CHECK(f.seen.size() == 1);
}

TEST_CASE("github and shopify: the delivery header is the dedup key, the type from its header") {
  Fixture g(Provider::github, "gh secret");
  const std::string body = R"({"zen":"Keep it logically awesome."})";
  const Headers headers{{"X-Hub-Signature-256", providers::github::sign("gh secret", body)},
                        {"X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958"},
                        {"X-GitHub-Event", "ping"}};
  check_delivered_twice(g, headers, body, "72d3162e-cc78-11e3-81ab-4c9367dc0958 ping 0");

  Fixture s(Provider::shopify, "shpss_secret");
  const std::string order = R"({"id":820982911946154508,"email":"jon@example.com"})";
  const Headers shop{{"X-Shopify-Hmac-Sha256", providers::shopify::sign("shpss_secret", order)},
                     {"X-Shopify-Webhook-Id", "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043"},
                     {"X-Shopify-Topic", "orders/create"}};
  check_delivered_twice(s, shop, order, "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043 orders/create 0");
  CHECK(error_code(s.post(shop, order + " ")) == "signature_invalid");
}

TEST_CASE("shopify's events family (shopify-*): one handler run per webhook id, its topic") {
  Fixture s(Provider::shopify, "shpss_secret");
  const std::string order = R"({"id":820982911946154508,"email":"jon@example.com"})";
  const Headers shop{{"shopify-hmac-sha256", providers::shopify::sign("shpss_secret", order)},
                     {"shopify-webhook-id", "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043"},
                     {"shopify-event-id", "98880550-7158-44d4-b7cd-2c97c8a091b5"},
                     {"shopify-topic", "orders/create"},
                     {"shopify-shop-domain", "example.myshopify.com"},
                     {"shopify-triggered-at", "2025-01-21T12:00:00.000Z"}};
  CHECK(s.post(shop, order).status == 200);
  const Answer again = s.post(shop, order);
  CHECK(again.status == 200);
  CHECK(header(again, "Idempotent-Replayed") == "true");
  CHECK(s.seen == std::vector<std::string>{"b54557e4-bdd9-4b37-8a5f-bf7d70bcd043 orders/create 0"});
  const Answer no_id =
      s.post({{"shopify-hmac-sha256", providers::shopify::sign("shpss_secret", order)}}, order);
  CHECK(no_id.status == 400);
  CHECK(
      no_id.body ==
      R"({"error":{"code":"headers_invalid","message":"X-Shopify-Webhook-Id (or shopify-webhook-id) is missing"}})");
}

TEST_CASE("standard: the Svix service's svix-* names verify as webhook-* do; never a mix") {
  FakeClock clock{kNow * 1000};
  const auto db = test::open_database("receiver_svix", {idempotency::schema()});
  Receiver receiver(test_config(clock, "svix"), db);
  std::vector<std::string> seen;
  const auto post = [&](const Headers& headers, const std::string& body) {
    return receiver.handle(headers, body, [&](const Event& e) {
      seen.push_back(std::string(e.id) + " " + std::string(e.type) + " " +
                     std::to_string(e.timestamp));
      return Reply{};
    });
  };
  const std::string body = event_body("msg_2Lh9Kp", "invoice.paid");
  const std::string signature = sign(kSecret, "msg_2Lh9Kp", kNow, body);
  const Headers svix{{"svix-id", "msg_2Lh9Kp"},
                     {"svix-timestamp", std::to_string(kNow)},
                     {"svix-signature", signature}};
  CHECK(post(svix, body).status == 200);
  CHECK(header(post(svix, body), "Idempotent-Replayed") == "true");
  // The same event under the webhook-* names is the same event: a duplicate.
  CHECK(header(post(signed_headers("msg_2Lh9Kp", body), body), "Idempotent-Replayed") == "true");
  CHECK(seen == std::vector<std::string>{"msg_2Lh9Kp invoice.paid 1700000000"});
  // Repeated svix-signature lines are one list, as webhook-signature's are.
  const Headers split{{"svix-id", "msg_2Lh9Kp"},
                      {"svix-timestamp", std::to_string(kNow)},
                      {"svix-signature", sign(kOtherSecret, "msg_2Lh9Kp", kNow, body)},
                      {"svix-signature", signature}};
  CHECK(post(split, body).status == 200);
  const Answer mixed = post({{"svix-id", "msg_2Lh9Kp"},
                             {"webhook-timestamp", std::to_string(kNow)},
                             {"svix-signature", signature}},
                            body);
  CHECK(mixed.status == 400);
  CHECK(
      mixed.body ==
      R"({"error":{"code":"headers_invalid","message":"the request carries both webhook-timestamp and svix-id: send the webhook-* or the svix-* headers, not both"}})");
  const Answer late = post({{"svix-id", "msg_3"},
                            {"svix-timestamp", std::to_string(kNow - 301)},
                            {"svix-signature", sign(kSecret, "msg_3", kNow - 301, body)}},
                           body);
  CHECK(late.status == 401);
  CHECK(
      late.body ==
      R"({"error":{"code":"timestamp_out_of_tolerance","message":"svix-timestamp is 301 s old; the tolerance is 300 s"}})");
  const Answer missing = post({{"svix-id", "msg_4"}, {"svix-signature", signature}}, body);
  CHECK(missing.status == 400);
  CHECK(error_code(missing) == "headers_invalid");
  CHECK(seen.size() == 1);
}

TEST_CASE("github form deliveries: signed over the raw form, the handler gets the payload JSON") {
  Fixture g(Provider::github, "gh secret");
  std::string json_seen;
  const std::string json = R"({"zen":"Design for failure.","hook_id":1})";
  // GitHub's encoding: application/x-www-form-urlencoded, "payload=" and the JSON percent-encoded.
  const std::string form =
      "payload=%7B%22zen%22%3A%22Design+for+failure.%22%2C%22hook_id%22%3A1%7D";
  const auto post = [&](const std::string& body, const std::string& delivery) {
    const Headers headers{{"X-Hub-Signature-256", providers::github::sign("gh secret", body)},
                          {"X-GitHub-Delivery", delivery},
                          {"X-GitHub-Event", "ping"},
                          {"Content-Type", "application/x-www-form-urlencoded"}};
    return g.receiver->handle(headers, body, [&](const Event& e) {
      json_seen = std::string(e.body) + " " + e.payload()["zen"].get<std::string>();
      g.seen.push_back(std::string(e.id) + " " + std::string(e.type));
      return Reply{};
    });
  };
  CHECK(post(form, "d-1").status == 200);
  CHECK(json_seen == json + " Design for failure.");
  CHECK(header(post(form, "d-1"), "Idempotent-Replayed") == "true");
  CHECK(g.seen == std::vector<std::string>{"d-1 ping"});
  const auto refused = [&](const std::string& body) {
    const Answer a = post(body, "d-2");
    return std::to_string(a.status) + " " + a.body;
  };
  CHECK(refused("zen=1") ==
        R"(400 {"error":{"code":"invalid_form","message":"the form has no payload field"}})");
  // A '%' without two hex digits is kept as it is (WHATWG); this JSON is then invalid.
  CHECK(
      refused("payload=%7B%7") ==
      R"(400 {"error":{"code":"invalid_json","message":"invalid JSON at byte 2: syntax error while parsing object key - invalid literal; expected string literal"}})");
  CHECK(
      refused("payload=%7B%7D&payload=%7B%7D") ==
      R"(400 {"error":{"code":"invalid_form","message":"the form has more than one payload field"}})");
  CHECK(refused("payload=%5B%5D") ==
        R"(400 {"error":{"code":"invalid_json","message":"the body is not a JSON object"}})");
  CHECK(g.seen.size() == 1);
}

TEST_CASE("slack: event_id is the dedup key; the window is checked") {
  Fixture f(Provider::slack, "slack secret");
  const std::string body =
      R"({"type":"event_callback","event_id":"Ev08MFMKH6","event":{"type":"app_mention"}})";
  const auto at = [&](std::int64_t t) {
    return Headers{{"X-Slack-Signature", providers::slack::sign("slack secret", t, body)},
                   {"X-Slack-Request-Timestamp", std::to_string(t)}};
  };
  CHECK(f.post(at(kNow), body).status == 200);
  CHECK(f.post(at(kNow + 5), body).status == 200);
  CHECK(f.seen == std::vector<std::string>{"Ev08MFMKH6 event_callback 1700000000"});
  CHECK(error_code(f.post(at(kNow - 301), body)) == "timestamp_out_of_tolerance");
}

TEST_CASE("Config::provider: public keys are refused beside another provider") {
  FakeClock clock{kNow * 1000};
  Config config = test_config(clock);
  config.provider = Provider::github;
  config.secrets = {"s"};
  config.public_keys = {"whpk_" + std::string(43, 'A') + "="};
  const auto db = test::open_database("receiver_providers_keys", {idempotency::schema()});
  CHECK_THROWS_WITH(Receiver(config, db),
                    "public keys (v1a) are Standard Webhooks only, not github");
  config.public_keys.clear();
  config.secrets = {""};
  CHECK_THROWS_WITH(Receiver(config, db), "a provider secret is empty");
}

TEST_CASE("merchant-receiver --provider stripe: a signed event twice, the handler runs once") {
  MerchantProcess server("merchant_stripe",
                         {"--provider", "stripe", "--secret", "whsec_stripe endpoint secret"});
  httplib::Client client("127.0.0.1", server.port);
  const auto post = [&] {
    const std::string signature = providers::stripe::sign(
        "whsec_stripe endpoint secret", system_clock().now_seconds(), kStripeEvent);
    const auto res = client.Post("/webhooks", {{"Stripe-Signature", signature}}, kStripeEvent,
                                 "application/json");
    return res ? res->status : 0;
  };
  CHECK(post() == 200);
  CHECK(post() == 200);
  const auto bad = client.Post("/webhooks", {{"Stripe-Signature", "t=1,v1=00"}}, kStripeEvent,
                               "application/json");
  REQUIRE(bad);
  CHECK(bad->status == 401);
  CHECK(handled_events(client) ==
        handled_one("evt_1NG8Du2eZvKYlo2CUI79vXWy", "payment_intent.succeeded", 1, 0));
}

TEST_CASE("merchant-receiver --provider github: a form delivery twice, the handler once") {
  MerchantProcess server("merchant_github_form", {"--provider", "github", "--secret", "gh secret"});
  httplib::Client client("127.0.0.1", server.port);
  const std::string form = "payload=%7B%22action%22%3A%22opened%22%2C%22number%22%3A2%7D";
  const httplib::Headers headers{
      {"X-Hub-Signature-256", providers::github::sign("gh secret", form)},
      {"X-GitHub-Delivery", "2f1c9a70-0b8f-11ef-8d2a-6d1c3f0e5f39"},
      {"X-GitHub-Event", "pull_request"}};
  for (int i = 0; i < 2; ++i) {
    const auto res = client.Post("/webhooks", headers, form, "application/x-www-form-urlencoded");
    REQUIRE(res);
    CHECK(res->status == 200);
  }
  CHECK(handled_events(client) ==
        handled_one("2f1c9a70-0b8f-11ef-8d2a-6d1c3f0e5f39", "pull_request", 1, 0));
}

TEST_CASE("merchant-receiver: the Svix service's headers; a form to a JSON-only receiver is 415") {
  const std::string secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  MerchantProcess server("merchant_svix", {"--secret", secret});
  httplib::Client client("127.0.0.1", server.port);
  const std::string body = event_body("msg_2Lh9KpA", "order.created");
  const std::int64_t now = system_clock().now_seconds();
  const httplib::Headers svix{{"svix-id", "msg_2Lh9KpA"},
                              {"svix-timestamp", std::to_string(now)},
                              {"svix-signature", sign(secret, "msg_2Lh9KpA", now, body)}};
  for (int i = 0; i < 2; ++i) {
    const auto res = client.Post("/webhooks", svix, body, "application/json");
    REQUIRE(res);
    CHECK(res->status == 200);
  }
  httplib::Headers mixed = svix;
  mixed.erase("svix-timestamp");
  mixed.emplace("webhook-timestamp", std::to_string(now));
  const auto refused = client.Post("/webhooks", mixed, body, "application/json");
  REQUIRE(refused);
  CHECK(refused->status == 400);
  const auto form =
      client.Post("/webhooks", svix, "payload=%7B%7D", "application/x-www-form-urlencoded");
  REQUIRE(form);
  CHECK(form->status == 415);
  CHECK(handled_events(client) == handled_one("msg_2Lh9KpA", "order.created", 1, 1));
}

TEST_CASE(
    "merchant-receiver --provider: unknown names, and secrets checked by the provider's rule") {
  const std::string dir = test::temp_dir("merchant_provider_flags");
  const auto refused = [&](const std::vector<std::string>& args, const std::string& message) {
    const webhooks::launcher::Finished run =
        webhooks::launcher::run_to_end("merchant-receiver", args, dir);
    CHECK(run.exit_code == 2);
    CHECK(run.err.find(message) != std::string::npos);
  };
  refused(
      {"--provider", "paypal", "--secret", "s"},
      "--provider: unknown provider paypal (one of standard, stripe, github, shopify, slack)\n");
  // A raw secret is a Standard Webhooks secret only under --provider standard, in either order.
  refused({"--secret", "It's a Secret to Everybody"}, "--secret: secret contains whitespace");
  refused({"--secret", "It's a Secret", "--provider", "standard"},
          "--secret: secret contains whitespace");
  refused({"--provider", "github", "--secret", ""}, "--secret: secret is empty\n");
}
