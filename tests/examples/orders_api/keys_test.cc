// GET /v1/idempotency-keys/{key} on a real orders-api (and payout partner): a key in each of its
// three states, the counted replays, 409s and 422s, another merchant's key and no API key.
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "harness.h"
#include "orders_checks.h"
#include "webhooks/fingerprint.h"

using namespace std::chrono;
using webhooks::test::Answer;
using webhooks::test::kOrder;
using webhooks::test::kPayout;
using webhooks::test::Stack;

namespace {

// GET /v1/idempotency-keys/KEY until `done` holds of the answer, at most 10 s; the last answer.
template <typename F>
Answer key_until(Stack& s, const std::string& key, F done) {
  const auto deadline = steady_clock::now() + seconds(10);
  Answer answer = s.get("/v1/idempotency-keys/" + key);
  while (!done(answer) && steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(50));
    answer = s.get("/v1/idempotency-keys/" + key);
  }
  return answer;
}

}  // namespace

TEST_CASE("a completed order's key: route, status, resource, counted replays and 422s") {
  Stack s;
  s.start_api();
  const Answer created = create_order(s, "order-1");
  for (int i = 0; i < 3; ++i) CHECK(s.post("/orders", "order-1", kOrder).status == 201);
  for (int i = 0; i < 2; ++i) {
    CHECK(s.post("/orders", "order-1", R"({"amount":2,"currency":"EUR","reference":"x"})").status ==
          422);
  }
  // The counts are flushed about once a second.
  const Answer found = key_until(s, "order-1", [](const Answer& a) {
    return a.status == 200 && a.json()["replays"] == 3 && a.json()["mismatches"] == 2;
  });
  REQUIRE(found.status == 200);
  const nlohmann::json k = found.json();
  CHECK(k["key"] == "order-1");
  CHECK(k["state"] == "completed");
  CHECK(k["route"] == "POST /orders");
  CHECK(k["fingerprint"] == webhooks::request_fingerprint("POST", "/orders", kOrder));
  CHECK(k["attempts"] == 1);
  CHECK(k["status"] == 201);
  CHECK(k["resource_id"] == created.json()["id"]);
  CHECK(k["replays"] == 3);
  CHECK(k["conflicts"] == 0);
  CHECK(k["mismatches"] == 2);
  // Inserted already completed (SQLite), or begun then completed (PostgreSQL): RFC 3339 strings
  // of one length compare as their times.
  CHECK(k["created_at"].get<std::string>() <= k["updated_at"].get<std::string>());
  CHECK(k["created_at"].get<std::string>().size() == 24);  // 2026-12-02T13:00:00.123Z
  CHECK(k.size() == 13);

  // Another merchant's key, an unknown key: 404; no API key: 401.
  const Answer other = s.get("/v1/idempotency-keys/order-1", "key-m2");
  check_error(other, 404, "not_found");
  CHECK(s.get("/v1/idempotency-keys/nope").status == 404);
  httplib::Client anonymous("127.0.0.1", s.api_port);
  const auto unauthorized = anonymous.Get("/v1/idempotency-keys/order-1");
  REQUIRE(unauthorized);
  CHECK(unauthorized->status == 401);
  CHECK(nlohmann::json::parse(unauthorized->body)["error"]["code"] == "unauthorized");
  CHECK(s.get("/v1/idempotency-keys/order-1", "wrong").status == 401);
}

TEST_CASE("a payout's key while it runs (in_progress, a 409 counted) and once it failed") {
  Stack s;
  s.start_partner();
  s.start_api(
      {"--operation-delay", "1500ms", "--partner-attempts", "1", "--partner-timeout", "1s"});
  s.stop_partner();  // the partner is down: the payout answers 502 and its record is failed
  std::optional<Answer> first;
  std::thread running([&] { first = s.try_post("/payouts", "payout-1", kPayout); });
  const Answer busy = key_until(s, "payout-1", [](const Answer& a) { return a.status == 200; });
  REQUIRE(busy.status == 200);
  CHECK(busy.json()["state"] == "in_progress");
  CHECK(busy.json()["route"] == "POST /payouts");
  CHECK(busy.json()["status"] == nullptr);
  CHECK(busy.json()["resource_id"] == nullptr);
  CHECK(busy.json()["attempts"] == 1);
  CHECK(s.post("/payouts", "payout-1", kPayout).status == 409);
  running.join();
  REQUIRE(first);
  CHECK(first->status == 502);

  const Answer failed = key_until(s, "payout-1", [](const Answer& a) {
    return a.json()["state"] == "failed" && a.json()["conflicts"] == 1;
  });
  const nlohmann::json k = failed.json();
  CHECK(k["state"] == "failed");
  CHECK(k["status"] == 502);
  CHECK(k["attempts"] == 1);
  CHECK(k["conflicts"] == 1);
  CHECK(k["replays"] == 0);
  CHECK(k["resource_id"] == nullptr);
  CHECK(k["fingerprint"] == webhooks::request_fingerprint("POST", "/payouts", kPayout));
  CHECK(k["updated_at"].get<std::string>() > k["created_at"].get<std::string>());
  CHECK(s.get("/v1/idempotency-keys/payout-1", "key-m2").status == 404);
}
