// What a client can put in a JSON body on orders-api (issue 12, items 1-3 and the Unicode policy):
// nesting, invalid UTF-8 and numbers a double cannot hold. Same suite on SQLite and PostgreSQL.
#include <catch2/catch.hpp>

#include "harness.h"
#include "orders_checks.h"

using webhooks::test::Answer;
using webhooks::test::Stack;

namespace {

const char* const kDepthMessage =
    "invalid JSON: nested deeper than the limit of 128 arrays and objects";

std::string nested_arrays(std::size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

}  // namespace

TEST_CASE("invalid UTF-8 inside a string is 400 invalid_json without Retry-After") {
  Stack s;
  s.start_api();
  int n = 0;
  for (const std::string bad : {"\xff", "\xc0\xaf", "\xed\xa0\x80"}) {
    for (const std::string path : {"/orders", "/payouts"}) {
      const std::string field = path == "/orders" ? "reference" : "destination";
      const std::string body =
          R"({"amount":1000,"currency":"EUR",")" + field + R"(":"inv-)" + bad + R"("})";
      INFO(path << " " << body);
      const Answer answer = s.post(path, "utf8-" + std::to_string(n++), body);
      check_error(answer, 400, "invalid_json");
      CHECK(answer.json()["error"]["message"].get<std::string>().find("ill-formed UTF-8 byte") !=
            std::string::npos);
      CHECK(answer.header("Retry-After") == "");
    }
  }
  // PUT /orders/{id} parses its body without the idempotency guard.
  const Answer created =
      s.post("/orders", "utf8-order", R"({"amount":1,"currency":"EUR","reference":"r"})");
  REQUIRE(created.status == 201);
  const Answer put =
      s.put("/orders/" + created.json()["id"].get<std::string>(), "{\"status\":\"capt\xff\"}");
  check_error(put, 400, "invalid_json");
  CHECK(s.count("SELECT COUNT(*) FROM orders") == 1);
  CHECK(s.get("/healthz").status == 200);
}

TEST_CASE("a reference or destination with a NUL character is 422, not stored cut short") {
  // Found by the red team: on PostgreSQL "a\u0000b" was answered 201 with reference "a\u0000b"
  // and stored as "a" (text parameters end at a NUL); GET /orders/{id} then said "a".
  Stack s;
  s.start_api();
  for (const std::string path : {"/orders", "/payouts"}) {
    const std::string field = path == "/orders" ? "reference" : "destination";
    const Answer answer =
        s.post(path, "nul" + path.substr(1),
               R"({"amount":1000,"currency":"EUR",")" + field + R"(":"a\u0000b"})");
    check_error(answer, 422, "validation_failed");
    CHECK(answer.json()["error"]["message"] ==
          field + " must be a non-empty string of at most 255 bytes without NUL characters");
  }
  CHECK(s.count("SELECT COUNT(*) FROM orders") == 0);
  CHECK(s.count("SELECT COUNT(*) FROM payouts") == 0);
}

TEST_CASE("nesting deeper than 128 is 400 invalid_json naming the limit; the server stays up") {
  Stack s;
  s.start_api();
  const std::string deep =
      "{\"amount\":1000,\"currency\":\"EUR\",\"reference\":" + nested_arrays(100'000) + "}";
  const std::string mib = nested_arrays(512 * 1024);  // 1 MiB: ~19 s of CPU before the limit
  for (const std::string* body : {&deep, &mib}) {
    for (const std::string path : {"/orders", "/payouts"}) {
      const Answer answer = s.post(path, "deep-" + path.substr(1), *body);
      check_error(answer, 400, "invalid_json");
      CHECK(answer.json()["error"]["message"] == kDepthMessage);
    }
  }
  const Answer put = s.put("/orders/o1", "{\"status\":" + nested_arrays(100'000) + "}");
  CHECK(put.status == 400);
  CHECK(put.json()["error"]["message"] == kDepthMessage);
  // 128 levels are JSON; this one is merely not a valid reference.
  const Answer deepest =
      s.post("/orders", "deep-128",
             R"({"amount":1000,"currency":"EUR","reference":)" + nested_arrays(127) + "}");
  check_error(deepest, 422, "validation_failed");
  CHECK(s.get("/healthz").status == 200);
  CHECK(
      s.post("/orders", "after-deep", R"({"amount":1,"currency":"EUR","reference":"r"})").status ==
      201);
}

TEST_CASE("an amount that is not an exact integer in range is 422, never rounded") {
  Stack s;
  s.start_api();
  const std::string message =
      "amount must be an exact integer number of minor units from 1 to 9223372036854775807 "
      "(written with a fraction or an exponent, at most 9007199254740992)";
  int n = 0;
  for (const std::string amount :
       {"9007199254740993.0", "9.007199254740993e15", "1000.00000000000001", "0.5", "-1",
        "9223372036854775808", "1e19"}) {
    for (const std::string path : {"/orders", "/payouts"}) {
      const std::string field = path == "/orders" ? "reference" : "destination";
      const std::string body =
          R"({"amount":)" + amount + R"(,"currency":"EUR",")" + field + R"(":"x"})";
      INFO(body);
      const Answer answer = s.post(path, "amount-" + std::to_string(n++), body);
      check_error(answer, 422, "validation_failed");
      CHECK(answer.json()["error"]["message"] == message);
    }
  }
  CHECK(s.count("SELECT COUNT(*) FROM orders") == 0);
  CHECK(s.count("SELECT COUNT(*) FROM payouts") == 0);
  // Exact integers in any spelling, up to 2^53 when written with a fraction or an exponent.
  for (const auto& [amount, value] : std::vector<std::pair<std::string, std::int64_t>>{
           {"9007199254740992.0", 9007199254740992LL},
           {"9.007199254740992e15", 9007199254740992LL},
           {"1000.000", 1000},
           {"9223372036854775807", 9223372036854775807LL}}) {
    const Answer ok = s.post("/orders", "exact-" + amount,
                             R"({"amount":)" + amount + R"(,"currency":"EUR","reference":"x"})");
    INFO(amount);
    CHECK(ok.status == 201);
    CHECK(ok.json()["amount"] == value);
  }
}

TEST_CASE("Unicode is not normalised: NFC and NFD spellings under one key are 422") {
  Stack s;
  s.start_api();
  const Answer nfc = s.post("/orders", "unicode-1",
                            "{\"amount\":1000,\"currency\":\"EUR\",\"reference\":\"caf\xc3\xa9\"}");
  REQUIRE(nfc.status == 201);
  CHECK(nfc.json()["reference"] == "caf\xc3\xa9");
  const Answer nfd =
      s.post("/orders", "unicode-1",
             "{\"amount\":1000,\"currency\":\"EUR\",\"reference\":\"cafe\xcc\x81\"}");
  check_error(nfd, 422, "idempotency_key_reused");
  // The same NFC text written with an escape is the same request.
  const Answer escaped =
      s.post("/orders", "unicode-1", R"({"amount":1000,"currency":"EUR","reference":"caf\u00e9"})");
  CHECK(escaped.status == 201);
  CHECK(escaped.header("Idempotent-Replayed") == "true");
  CHECK(s.count("SELECT COUNT(*) FROM orders") == 1);
}
