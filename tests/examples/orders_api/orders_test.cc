// POST /orders over real HTTP: replays, mismatches, scopes, fingerprints, key validation, final
// and non-final answers, the TTL. Same suite on SQLite and PostgreSQL (WEBHOOKS_TEST_ENGINE).
// The executables' flags: flags_test.cc.
#include <signal.h>

#include <catch2/catch.hpp>
#include <thread>

#include "harness.h"
#include "orders_checks.h"
#include "support/test_env.h"
#include "webhooks/uuid.h"

using webhooks::test::Answer;
using webhooks::test::kOrder;
using webhooks::test::Stack;

TEST_CASE(
    "orders.db holds the API's tables, its idempotency records and outbox, no publisher table") {
  Stack s;
  s.start_api();
  REQUIRE(s.post("/orders", "order-1", kOrder).status == 201);
  CHECK(webhooks::test::table_names(s.db()) ==
        std::vector<std::string>{"idempotency_records", "orders", "orders_revoked_sessions",
                                 "outbox", "payouts", "reconciliations", "webhooks_migrations"});
  CHECK(s.count("SELECT COUNT(*) FROM webhooks_migrations WHERE component = 'publisher'") == 0);
  CHECK(s.count("SELECT COUNT(*) FROM webhooks_migrations WHERE component = 'outbox'") == 3);
  CHECK(s.count("SELECT COUNT(*) FROM webhooks_migrations WHERE component = 'idempotency'") == 5);
  CHECK(s.count("SELECT COUNT(*) FROM webhooks_migrations WHERE component = 'orders_api'") == 3);
}

TEST_CASE("same key and body twice: the second gets the first's status and body, replayed") {
  Stack s;
  s.start_api();
  const Answer first = create_order(s, "order-1");
  CHECK(first.header("Idempotent-Replayed") == "");
  const nlohmann::json order = first.json();
  CHECK(webhooks::is_uuid_v7(order["id"].get<std::string>()));
  CHECK(order["merchant_id"] == "m1");
  CHECK(order["amount"] == 1000);
  CHECK(order["currency"] == "EUR");
  CHECK(order["reference"] == "inv-1");
  CHECK(order["status"] == "created");
  CHECK(order["created_at"].get<std::string>().size() == 24);
  CHECK(first.header("Location") == "/orders/" + order["id"].get<std::string>());

  const Answer second = s.post("/orders", "order-1", kOrder);
  check_replayed(second, 201, first.body);
  CHECK(second.header("Location") == first.header("Location"));
  CHECK(s.count("SELECT COUNT(*) FROM orders") == 1);
  CHECK(s.count("SELECT COUNT(*) FROM outbox WHERE event_type = 'order.created'") == 1);

  const Answer read = s.get("/orders/" + order["id"].get<std::string>());
  CHECK(read.status == 200);
  CHECK(read.body == first.body);
  const Answer other = s.get("/orders/" + order["id"].get<std::string>(), "key-m2");
  check_error(other, 404, "not_found");
  CHECK(s.api->kill_and_wait(SIGTERM) == 0);  // SIGTERM: a clean exit 0 (and no sanitizer report)
}

TEST_CASE("same key with another body, path or merchant") {
  Stack s;
  s.start_api();
  const Answer first = create_order(s, "order-2");

  SECTION("a different body: 422 idempotency_key_reused") {
    const Answer reused =
        s.post("/orders", "order-2", R"({"amount":1001,"currency":"EUR","reference":"inv-1"})");
    check_error(reused, 422, "idempotency_key_reused");
    CHECK(reused.header("Idempotent-Replayed") == "");
    CHECK(s.count("SELECT COUNT(*) FROM orders") == 1);
  }
  SECTION("POST /payouts after POST /orders: 422, never the order's answer") {
    const Answer reused = s.post("/payouts", "order-2",
                                 R"({"amount":1000,"currency":"EUR","destination":"NL91ABNA01"})");
    check_error(reused, 422, "idempotency_key_reused");
    CHECK(reused.body != first.body);
    CHECK(s.count("SELECT COUNT(*) FROM payouts") == 0);
  }
  SECTION("another merchant: its own order") {
    const Answer theirs = s.post("/orders", "order-2", kOrder, "key-m2");
    check_fresh(theirs, 201);
    CHECK(theirs.json()["merchant_id"] == "m2");
    CHECK(theirs.json()["id"] != first.json()["id"]);
    CHECK(s.count("SELECT COUNT(*) FROM orders") == 2);
    CHECK(s.count("SELECT COUNT(*) FROM orders WHERE merchant_id = 'm2'") == 1);
  }
}

TEST_CASE("bodies that differ only in key order, whitespace or number spelling are one request") {
  Stack s;
  s.start_api();
  const Answer first = create_order(s, "order-3");
  for (const char* body : {
           R"({"reference":"inv-1","currency":"EUR","amount":1000})",
           "{ \"amount\" : 1000 ,\n\t\"currency\":\"EUR\", \"reference\":\"inv-1\" }",
           R"({"amount":1000.0,"currency":"EUR","reference":"inv-1"})",
           R"({"amount":1e3,"currency":"EUR","reference":"inv-1"})",
       }) {
    INFO(body);
    const Answer again = s.post("/orders", "order-3", body);
    check_replayed(again, 201, first.body);
  }
  CHECK(s.count("SELECT COUNT(*) FROM orders") == 1);

  // Integers are exact: 2^53 + 1 and 2^53 are two numbers, not one double.
  const Answer big = s.post("/orders", "order-4",
                            R"({"amount":9007199254740993,"currency":"EUR","reference":"big"})");
  CHECK(big.status == 201);
  CHECK(big.json()["amount"] == 9007199254740993LL);
  const Answer near = s.post("/orders", "order-4",
                             R"({"amount":9007199254740992,"currency":"EUR","reference":"big"})");
  check_error(near, 422, "idempotency_key_reused");
  CHECK(s.count("SELECT COUNT(*) FROM orders") == 2);
}

TEST_CASE("a NUL byte after the JSON document is 400 invalid_json, not the same request") {
  // Found by tests/fuzz/canonical_json (corpus regression-nul-after-value): nlohmann's lexer read
  // NUL as the end of input, so this body had kOrder's fingerprint and was replayed as kOrder.
  Stack s;
  s.start_api();
  const Answer first = create_order(s, "order-nul");
  const std::string with_nul = kOrder + std::string("\0{\"amount\":1}", 13);
  for (const char* key : {"order-nul", "order-nul-2"}) {
    INFO(key);
    const Answer answer = s.post("/orders", key, with_nul);
    check_error(answer, 400, "invalid_json");
    CHECK(answer.json()["error"]["message"] ==
          "invalid JSON: NUL byte at byte offset 52 (write it as \\u0000 inside a string)");
    CHECK(answer.header("Idempotent-Replayed") == "");
  }
  CHECK(s.count("SELECT COUNT(*) FROM orders") == 1);
}

TEST_CASE("Idempotency-Key validation") {
  Stack s;
  s.start_api();
  const Answer missing = s.post("/orders", std::nullopt, kOrder);
  check_error(missing, 400, "idempotency_key_missing");
  // cpp-httplib 0.11 drops a header field whose value is empty, so a bare empty key arrives as no
  // key at all; the structured-field form "" is the empty key that reaches the guard.
  const Answer bare_empty = s.post("/orders", "", kOrder);
  check_error(bare_empty, 400, "idempotency_key_missing");
  for (const std::string& key :
       {std::string("\"\""), std::string(256, 'k'), std::string("k\xc3\xa9")}) {
    INFO("key of " << key.size() << " bytes");
    const Answer invalid = s.post("/orders", key, kOrder);
    check_error(invalid, 400, "idempotency_key_invalid");
  }
  // A control character never reaches the guard: the HTTP edge refuses the request.
  for (const std::string& key : {std::string("ab\x01"
                                             "cd"),
                                 std::string("ab\x7f"
                                             "cd")}) {
    const Answer invalid = s.post("/orders", key, kOrder);
    check_error(invalid, 400, "bad_request");
  }
  CHECK(s.count("SELECT COUNT(*) FROM orders") == 0);
  CHECK(s.count("SELECT COUNT(*) FROM idempotency_records") == 0);

  const Answer longest = s.post("/orders", std::string(255, 'k'), kOrder);
  CHECK(longest.status == 201);

  const Answer quoted = s.post("/orders", "\"order-5\"", kOrder);
  check_fresh(quoted, 201);
  const Answer bare = s.post("/orders", "order-5", kOrder);
  check_replayed(bare, 201, quoted.body);
  CHECK(s.count("SELECT COUNT(*) FROM orders") == 2);
}

TEST_CASE("a validation error (422) is final: the retry gets it replayed") {
  Stack s;
  s.start_api();
  const std::string body = R"({"amount":-5,"currency":"EUR","reference":"inv-1"})";
  const Answer first = s.post("/orders", "order-6", body);
  check_error(first, 422, "validation_failed");
  CHECK(first.json()["error"]["message"] ==
        "amount must be an exact integer number of minor units from 1 to 9223372036854775807 "
        "(written with a fraction or an exponent, at most 9007199254740992)");
  const Answer retry = s.post("/orders", "order-6", body);
  check_replayed(retry, 422, first.body);

  const Answer currency =
      s.post("/orders", "order-7", R"({"amount":5,"currency":"eur","reference":"inv-1"})");
  CHECK(currency.status == 422);
  CHECK(currency.json()["error"]["message"] ==
        "currency must be three uppercase letters, e.g. \"EUR\"");
  const Answer not_object = s.post("/orders", "order-8", "[1,2]");
  check_error(not_object, 400, "invalid_request");
  const Answer not_json = s.post("/orders", "order-9", "{\"amount\":");
  check_error(not_json, 400, "invalid_json");
  CHECK(s.count("SELECT COUNT(*) FROM orders") == 0);
}

TEST_CASE("the same key after the TTL is a new request") {
  Stack s;
  s.start_api({"--ttl", "2s"});
  const Answer first = create_order(s, "order-10");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  Answer later;
  int replays = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    later = s.post("/orders", "order-10", kOrder);
    if (later.header("Idempotent-Replayed") != "true") break;
    ++replays;
    CHECK(later.body == first.body);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  CHECK(replays >= 1);
  check_fresh(later, 201);
  CHECK(later.json()["id"] != first.json()["id"]);
  CHECK(s.count("SELECT COUNT(*) FROM orders") == 2);
}

TEST_CASE("bearer API keys and order updates") {
  Stack s;
  s.start_api();
  const Answer anonymous = s.post("/orders", "order-11", kOrder, "");
  check_error(anonymous, 401, "unauthorized");
  const Answer unknown = s.post("/orders", "order-11", kOrder, "key-nobody");
  CHECK(unknown.status == 401);
  CHECK(s.get("/orders/x", "key-nobody").status == 401);
  CHECK(s.count("SELECT COUNT(*) FROM idempotency_records") == 0);

  const Answer created = create_order(s, "order-11");
  const std::string path = "/orders/" + created.json()["id"].get<std::string>();
  const Answer captured = s.put(path, R"({"status":"captured"})");
  CHECK(captured.status == 200);
  CHECK(captured.json()["status"] == "captured");
  const Answer again = s.put(path, R"({"status":"captured"})");
  CHECK(again.status == 200);
  CHECK(again.body == captured.body);
  const Answer cancel = s.put(path, R"({"status":"cancelled"})");
  check_error(cancel, 409, "invalid_transition");
  CHECK(s.put(path, R"({"status":"shipped"})").status == 422);
  CHECK(s.put(path, R"({"status":"captured"})", "key-m2").status == 404);
  CHECK(s.count("SELECT COUNT(*) FROM outbox WHERE event_type = 'order.captured'") == 1);
  CHECK(s.get(path).json()["status"] == "captured");
}

TEST_CASE(
    "a form body over 8 KiB is 415 unsupported_media_type, not a false 413; JSON types pass") {
  Stack s;
  s.start_api();
  httplib::Client client("127.0.0.1", s.api_port);
  const httplib::Headers headers = {{"Authorization", "Bearer key-m1"},
                                    {"Idempotency-Key", "form-1"}};
  auto form = client.Post("/orders", headers, "a=" + std::string(9000, 'x'),
                          "application/x-www-form-urlencoded");
  REQUIRE(form);
  CHECK(form->status == 415);
  CHECK(
      form->body ==
      R"({"error":{"code":"unsupported_media_type","message":"send the body as application/json, not application/x-www-form-urlencoded"}})");
  auto text = client.Post("/orders", headers, kOrder, "text/plain");
  REQUIRE(text);
  CHECK(text->status == 415);
  CHECK(s.count("SELECT COUNT(*) FROM orders") == 0);
  auto json = client.Post("/orders", headers, kOrder, "Application/JSON; charset=utf-8");
  REQUIRE(json);
  CHECK(json->status == 201);
  CHECK(s.count("SELECT COUNT(*) FROM orders") == 1);
}
