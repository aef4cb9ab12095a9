// Receivers of other providers' webhooks (Config::provider): the provider's id is the dedup key,
// its refusals get the receiver's answers; in process on the engine under test with a fake clock,
// and build/bin/merchant-receiver --provider as a real process on 127.0.0.1.
#include <httplib.h>

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
  CHECK(g.post(headers, body).status == 200);
  CHECK(g.post(headers, body).status == 200);
  CHECK(g.seen == std::vector<std::string>{"72d3162e-cc78-11e3-81ab-4c9367dc0958 ping 0"});

  Fixture s(Provider::shopify, "shpss_secret");
  const std::string order = R"({"id":820982911946154508,"email":"jon@example.com"})";
  const Headers shop{{"X-Shopify-Hmac-Sha256", providers::shopify::sign("shpss_secret", order)},
                     {"X-Shopify-Webhook-Id", "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043"},
                     {"X-Shopify-Topic", "orders/create"}};
  CHECK(s.post(shop, order).status == 200);
  CHECK(s.post(shop, order).status == 200);
  CHECK(s.seen == std::vector<std::string>{"b54557e4-bdd9-4b37-8a5f-bf7d70bcd043 orders/create 0"});
  CHECK(error_code(s.post(shop, order + " ")) == "signature_invalid");
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
  Process server("merchant-receiver",
                 {"--listen", "127.0.0.1:0", "--db", test::database_target("merchant_stripe"),
                  "--provider", "stripe", "--secret", "whsec_stripe endpoint secret"},
                 test::temp_dir("merchant_stripe"));
  httplib::Client client("127.0.0.1", server.wait_listening());
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
  const auto handled = client.Get("/handled");
  REQUIRE(handled);
  CHECK(nlohmann::json::parse(handled->body) == nlohmann::json::parse(R"({"events":[
      {"event_id":"evt_1NG8Du2eZvKYlo2CUI79vXWy","type":"payment_intent.succeeded","calls":1,
       "effects":0}]})"));
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
