// The receiver's answer table (DESIGN.md, "The receiver") row by row, the Standard Webhooks
// vectors through the receiver, signatures, secrets and timestamps; on the engine named by
// WEBHOOKS_TEST_ENGINE, with a fake clock.
#include <httplib.h>

#include <fstream>
#include <vector>

#include "receiver_support.h"
#include "webhooks/ed25519.h"
#include "webhooks/error.h"
#include "webhooks/idempotency/schema.h"

using namespace receiver_test;

namespace {

struct Fixture {
  FakeClock clock{kNow * 1000};
  std::shared_ptr<db::Database> db =
      test::open_database("receiver_answers", {idempotency::schema()});
  Receiver receiver{test_config(clock), db};
  int calls = 0;
  Answer post(const Headers& headers, const std::string& body) {
    return receiver.handle(headers, body, [&](const Event&) {
      ++calls;
      return Reply{};
    });
  }
};

}  // namespace

TEST_CASE("the Standard Webhooks vectors through the receiver") {
  FakeClock clock;
  const auto db = test::open_database("receiver_vectors", {idempotency::schema()});
  const auto vectors =
      nlohmann::json::parse(test::read_file(test::vectors_dir() + "/standard-webhooks-v1.json"));
  int n = 0;
  for (const auto& v : vectors["sign"]) {
    INFO(v["name"].get<std::string>());
    clock.set_ms(v["timestamp"].get<std::int64_t>() * 1000);
    Config config = test_config(clock, "sign" + std::to_string(n++));
    config.secrets = {v["secret"].get<std::string>()};
    Receiver receiver(config, db);
    const std::string id = v["id"], body = v["body"], signature = v["signature"];
    const std::string ts = std::to_string(v["timestamp"].get<std::int64_t>());
    CHECK(sign(config.secrets[0], id, std::stoll(ts), body) == signature);
    const Headers headers{
        {"webhook-id", id}, {"webhook-timestamp", ts}, {"webhook-signature", signature}};
    const Answer answer = receiver.handle(headers, body, ok);
    CHECK(answer.status == 200);
    CHECK(answer.body == "{\"received\":true}");
  }
  const std::vector<std::pair<int, std::string>> expected = {{200, ""},
                                                             {401, "signature_invalid"},
                                                             {401, "signature_invalid"},
                                                             {401, "timestamp_out_of_tolerance"},
                                                             {401, "timestamp_out_of_tolerance"}};
  REQUIRE(vectors["verify"].size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const auto& v = vectors["verify"][i];
    INFO(v["name"].get<std::string>());
    clock.set_ms(v["now"].get<std::int64_t>() * 1000);
    Config config = test_config(clock, "verify" + std::to_string(i));
    config.secrets = {v["secret"].get<std::string>()};
    Receiver receiver(config, db);
    const Headers headers{{"webhook-id", v["id"].get<std::string>()},
                          {"webhook-timestamp", std::to_string(v["timestamp"].get<std::int64_t>())},
                          {"webhook-signature", v["header"].get<std::string>()}};
    const Answer answer = receiver.handle(headers, v["body"].get<std::string>(), ok);
    CHECK(answer.status == expected[i].first);
    CHECK(error_code(answer) == expected[i].second);
    CHECK(v["valid"].get<bool>() == (answer.status == 200));
  }
}

TEST_CASE("step 1: a body over the limit is 413 before anything else") {
  Fixture f;
  const std::string big(1024 * 1024 + 1, ' ');
  const Answer answer = f.receiver.handle(Headers{}, big, ok);
  CHECK(answer.status == 413);
  CHECK(error_code(answer) == "payload_too_large");

  FakeClock clock{kNow * 1000};
  Config config = test_config(clock, "small");
  config.max_body_bytes = 20;
  Receiver small(config, f.db);
  const std::string at_limit = "{\"a\":\"0123456789ab\"}";  // 20 bytes
  REQUIRE(at_limit.size() == 20);
  CHECK(small.handle(signed_headers("e_limit", at_limit), at_limit, ok).status == 200);
  const std::string over = "{\"a\":\"0123456789abc\"}";
  CHECK(small.handle(signed_headers("e_over", over), over, ok).status == 413);
}

TEST_CASE("step 2: missing or malformed headers are 400 headers_invalid, naming the header") {
  Fixture f;
  const std::string body = event_body("e1");
  const Headers good = signed_headers("e1", body);
  const std::string sig = sign(kSecret, "e1", kNow, body);
  const std::string ts = std::to_string(kNow);
  const std::vector<std::pair<Headers, std::string>> cases = {
      {Headers{{"webhook-timestamp", ts}, {"webhook-signature", sig}}, "webhook-id"},
      {Headers{{"webhook-id", "e1"}, {"webhook-signature", sig}}, "webhook-timestamp"},
      {Headers{{"webhook-id", "e1"}, {"webhook-timestamp", ts}}, "webhook-signature"},
      {Headers{{"webhook-id", "e 1"}, {"webhook-timestamp", ts}, {"webhook-signature", sig}},
       "webhook-id"},
      {Headers{{"webhook-id", ""}, {"webhook-timestamp", ts}, {"webhook-signature", sig}},
       "webhook-id"},
      // milliseconds, a sign, a fraction
      {Headers{{"webhook-id", "e1"}, {"webhook-timestamp", ts + "000"}, {"webhook-signature", sig}},
       "webhook-timestamp"},
      {Headers{{"webhook-id", "e1"}, {"webhook-timestamp", "+" + ts}, {"webhook-signature", sig}},
       "webhook-timestamp"},
      {Headers{{"webhook-id", "e1"}, {"webhook-timestamp", ts + ".5"}, {"webhook-signature", sig}},
       "webhook-timestamp"},
      // reduced to "v1": no "<version>,<signature>" entry at all
      {Headers{{"webhook-id", "e1"}, {"webhook-timestamp", ts}, {"webhook-signature", "v1"}},
       "webhook-signature"},
      {Headers{{"webhook-id", "e1"}, {"webhook-timestamp", ts}, {"webhook-signature", ""}},
       "webhook-signature"},
  };
  for (const auto& [headers, name] : cases) {
    INFO(name);
    const Answer answer = f.post(headers, body);
    CHECK(answer.status == 400);
    CHECK(error_code(answer) == "headers_invalid");
    CHECK(nlohmann::json::parse(answer.body)["error"]["message"].get<std::string>().find(name) !=
          std::string::npos);
  }
  CHECK(f.calls == 0);
  CHECK(f.post(good, body).status == 200);
}

TEST_CASE("header names are case-insensitive; repeated signature lines are one list") {
  Fixture f;
  const std::string body = event_body("e1");
  const std::string sig = sign(kSecret, "e1", kNow, body);
  CHECK(f.post(Headers{{"Webhook-Id", "e1"},
                       {"WEBHOOK-TIMESTAMP", std::to_string(kNow)},
                       {"Webhook-Signature", sig}},
               body)
            .status == 200);
  const std::string body2 = event_body("e2");
  const Headers split{{"webhook-id", "e2"},
                      {"webhook-timestamp", std::to_string(kNow)},
                      {"webhook-signature", sign(kOtherSecret, "e2", kNow, body2)},
                      {"webhook-signature", sign(kSecret, "e2", kNow, body2)}};
  CHECK(f.post(split, body2).status == 200);
  CHECK(f.calls == 2);
}

TEST_CASE("Headers::view reads a container in place: case-insensitive, repeats joined in order") {
  // httplib::Request::headers (what headers_of views: a multimap ordered by case-folded name,
  // repeats in arrival order), and below a plain vector.
  httplib::Headers received{
      {"Webhook-Signature", "v1,a"}, {"webhook-id", "e1"}, {"WEBHOOK-SIGNATURE", "v1,b"}};
  Headers view = Headers::view(received);
  CHECK(view.get("webhook-id") == std::optional<std::string_view>("e1"));
  CHECK(view.get("Webhook-Signature") == std::optional<std::string_view>("v1,a"));
  CHECK(view.joined("webhook-signature") == std::optional<std::string>("v1,a v1,b"));
  CHECK(view.get("webhook-timestamp") == std::nullopt);
  CHECK(view.joined("webhook-timestamp") == std::nullopt);
  // Not a copy: a value changed in the container is seen, and get() points into it.
  received.find("webhook-id")->second = "e2";
  CHECK(view.get("webhook-id") == std::optional<std::string_view>("e2"));
  CHECK(view.get("webhook-id")->data() == received.find("webhook-id")->second.data());
  // Entries added to a view come after the viewed ones.
  view.add("webhook-signature", "v1,c");
  view.add("webhook-timestamp", "1700000000");
  CHECK(view.joined("webhook-signature") == std::optional<std::string>("v1,a v1,b v1,c"));
  CHECK(view.get("webhook-timestamp") == std::optional<std::string_view>("1700000000"));

  Fixture f;
  const std::string body = event_body("e3");
  const std::vector<std::pair<std::string, std::string>> lines{
      {"Webhook-Id", "e3"},
      {"Webhook-Timestamp", std::to_string(kNow)},
      {"webhook-signature", sign(kOtherSecret, "e3", kNow, body)},
      {"Webhook-Signature", sign(kSecret, "e3", kNow, body)}};
  CHECK(f.post(Headers::view(lines), body).status == 200);
  CHECK(f.calls == 1);
}

TEST_CASE("step 3: signatures that match nothing are 401 signature_invalid") {
  Fixture f;
  const std::string body = event_body("e1");
  const std::string sig = sign(kSecret, "e1", kNow, body);
  const std::string ts = std::to_string(kNow);
  const auto with_signature = [&](const std::string& value) {
    return Headers{{"webhook-id", "e1"}, {"webhook-timestamp", ts}, {"webhook-signature", value}};
  };
  const std::vector<std::pair<std::string, Answer>> cases = {
      {"tampered body", f.post(signed_headers("e1", body), event_body("e1", "order.refunded"))},
      {"wrong secret", f.post(signed_headers("e1", body, kNow, kOtherSecret), body)},
      {"empty v1 entry", f.post(with_signature("v1,"), body)},
      {"entry split after the comma", f.post(with_signature("v1, " + sig.substr(3)), body)},
      {"unknown version only", f.post(with_signature("v2," + sig.substr(3)), body)},
      {"signed for another id", f.post(with_signature(sign(kSecret, "e2", kNow, body)), body)},
      {"signed for another timestamp",
       f.post(with_signature(sign(kSecret, "e1", kNow - 1, body)), body)},
  };
  for (const auto& [name, answer] : cases) {
    INFO(name);
    CHECK(answer.status == 401);
    CHECK(error_code(answer) == "signature_invalid");
  }
  CHECK(f.calls == 0);
  CHECK(f.post(with_signature("v1,bm9wZQ== " + sig), body).status == 200);
}

TEST_CASE("two secrets during a rotation; v1a with a public key") {
  FakeClock clock{kNow * 1000};
  const auto db = test::open_database("receiver_rotation", {idempotency::schema()});
  Config config = test_config(clock);
  config.secrets = {kSecret, kOtherSecret};
  const auto key = Ed25519SigningKey::generate();
  config.public_keys = {key.public_key().to_string()};
  Receiver receiver(config, db);
  const std::string b1 = event_body("e1"), b2 = event_body("e2"), b3 = event_body("e3");
  CHECK(receiver.handle(signed_headers("e1", b1, kNow, kSecret), b1, ok).status == 200);
  CHECK(receiver.handle(signed_headers("e2", b2, kNow, kOtherSecret), b2, ok).status == 200);
  const Headers v1a{{"webhook-id", "e3"},
                    {"webhook-timestamp", std::to_string(kNow)},
                    {"webhook-signature", key.sign("e3", kNow, b3)}};
  CHECK(receiver.handle(v1a, b3, ok).status == 200);
  const auto stranger = Ed25519SigningKey::generate();
  const Headers forged{{"webhook-id", "e4"},
                       {"webhook-timestamp", std::to_string(kNow)},
                       {"webhook-signature", stranger.sign("e4", kNow, b3)}};
  CHECK(error_code(receiver.handle(forged, b3, ok)) == "signature_invalid");

  config.secrets = {"whsec_not base64"};
  CHECK_THROWS_AS(Receiver(config, db), Error);
  config.secrets = {};
  config.public_keys = {};
  CHECK_THROWS_AS(Receiver(config, db), Error);
}

TEST_CASE("step 4: a timestamp 301 s old or ahead is 401 timestamp_out_of_tolerance") {
  Fixture f;
  const std::string body = event_body("e1");
  for (const std::int64_t ts : {kNow - 301, kNow + 301}) {
    const Answer answer = f.post(signed_headers("e1", body, ts), body);
    CHECK(answer.status == 401);
    CHECK(error_code(answer) == "timestamp_out_of_tolerance");
  }
  CHECK(f.post(signed_headers("e1", body, kNow - 300), body).status == 200);
  CHECK(f.post(signed_headers("e2", event_body("e2"), kNow + 300), event_body("e2")).status == 200);
  // The signature is checked before the time: a stale, badly signed delivery is signature_invalid.
  CHECK(error_code(f.post(signed_headers("e3", body, kNow - 301, kOtherSecret), body)) ==
        "signature_invalid");
}

TEST_CASE("step 5: a body that is not a JSON object is 400 invalid_json") {
  Fixture f;
  const std::vector<std::string> bad = {"",
                                        "[1,2]",
                                        "\"text\"",
                                        "{\"a\":",
                                        "not json",
                                        "{\"name\":\"caf\xe9\"}",    // Latin-1, not UTF-8
                                        "{\"name\":\"\xc3\x28\"}"};  // broken UTF-8 sequence
  int n = 0;
  for (const std::string& body : bad) {
    INFO(body);
    const Answer answer = f.post(signed_headers("bad" + std::to_string(n++), body), body);
    CHECK(answer.status == 400);
    CHECK(error_code(answer) == "invalid_json");
  }
  const std::string unicode =
      "{\"type\":\"order.captured\",\"name\":\"Zo\xc3\xab \xe2\x9c\x93 \xf0\x9f\x92\xb3\"}";
  CHECK(f.post(signed_headers("u1", unicode), unicode).status == 200);
  CHECK(f.calls == 1);
}

TEST_CASE("steps 6 and 8: a reused id with another body is 422; a duplicate replays") {
  Fixture f;
  const std::string body = event_body("e1");
  const Answer first = f.post(signed_headers("e1", body, kNow, kSecret, "d1"), body);
  CHECK(first.status == 200);
  CHECK(header(first, "Idempotent-Replayed").empty());
  for (const std::string delivery : {"d2", "d3"}) {
    f.clock.advance(std::chrono::seconds(60));
    const Answer dup = f.post(signed_headers("e1", body, kNow + 60, kSecret, delivery), body);
    CHECK(dup.status == 200);
    CHECK(dup.body == "{\"received\":true}");
    CHECK(header(dup, "Idempotent-Replayed") == "true");
  }
  CHECK(f.calls == 1);
  const std::string other = event_body("e1", "order.refunded");
  const Answer reused = f.post(signed_headers("e1", other, kNow + 120), other);
  CHECK(reused.status == 422);
  CHECK(error_code(reused) == "event_id_reused");
  CHECK(f.calls == 1);
}
