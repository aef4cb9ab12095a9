// payout-partner's POST /transfers/{id}/reversals as a real process: created, replayed on the same
// key, 409 already_reversed under another key, 404 for an unknown transfer, 422 for a key reused on
// another transfer, and deduplicated even when the partner ignores keys for transfers.
#include <httplib.h>

#include <catch2/catch.hpp>

#include "harness.h"

using webhooks::test::Answer;
using webhooks::test::Stack;

namespace {

Answer partner_post(Stack& s, const std::string& path, const std::string& key,
                    const std::string& body) {
  httplib::Client c("127.0.0.1", s.partner_port);
  const httplib::Headers headers = {{"X-Idempotency-Key", key}};
  const auto result = c.Post(path.c_str(), headers, body, "application/json");
  if (!result) FAIL("POST " << path << ": " << httplib::to_string(result.error()));
  return {result->status, result->body, result->headers};
}

std::string transfer(Stack& s, const std::string& key, int amount) {
  const Answer a = partner_post(
      s, "/transfers", key,
      R"({"amount":)" + std::to_string(amount) + R"(,"currency":"EUR","destination":"NL91"})");
  REQUIRE(a.status == 201);
  return a.json()["id"].get<std::string>();
}

Answer reverse(Stack& s, const std::string& transfer_id, const std::string& key) {
  return partner_post(s, "/transfers/" + transfer_id + "/reversals", key, "");
}

}  // namespace

TEST_CASE("a reversal: 201, replayed on its key, 409 under another, one per transfer") {
  const bool immature = GENERATE(false, true);
  INFO((immature ? "--ignore-idempotency-key" : "a deduplicating partner"));
  Stack s;
  s.start_partner(immature ? std::vector<std::string>{"--ignore-idempotency-key"}
                           : std::vector<std::string>{});
  const std::string t1 = transfer(s, "k1", 7500);
  const std::string t2 = transfer(s, "k2", 1200);

  const Answer created = reverse(s, t1, "kxr-" + t1);
  CHECK(created.status == 201);
  CHECK(created.header("Idempotent-Replayed").empty());
  const nlohmann::json r = created.json();
  CHECK(r["id"].get<std::string>().starts_with("rv_"));
  CHECK(r == nlohmann::json{{"id", r["id"]},
                            {"transfer_id", t1},
                            {"idempotency_key", "kxr-" + t1},
                            {"amount", 7500},
                            {"currency", "EUR"}});

  const Answer replayed = reverse(s, t1, "kxr-" + t1);
  CHECK(replayed.status == 200);
  CHECK(replayed.header("Idempotent-Replayed") == "true");
  CHECK(replayed.json() == r);

  const Answer twice = reverse(s, t1, "another-key");
  CHECK(twice.status == 409);
  CHECK(twice.error_code() == "already_reversed");
  CHECK(twice.json()["reversal"] == r);

  const Answer reused = reverse(s, t2, "kxr-" + t1);
  CHECK(reused.status == 422);
  CHECK(reused.error_code() == "idempotency_key_reused");

  const Answer unknown = reverse(s, "tr_unknown", "kxr-tr_unknown");
  CHECK(unknown.status == 404);
  CHECK(unknown.error_code() == "transfer_not_found");

  const nlohmann::json list = s.transfers();
  REQUIRE(list.size() == 2);
  CHECK(list[0]["id"] == t1);
  CHECK(list[0]["reversed_by"] == r["id"]);
  CHECK(list[1]["id"] == t2);
  CHECK(list[1]["reversed_by"].is_null());
}

TEST_CASE("reversals without a key: still one per transfer") {
  Stack s;
  s.start_partner({"--ignore-idempotency-key"});
  const std::string t = transfer(s, "k1", 300);
  const Answer first = reverse(s, t, "");
  CHECK(first.status == 201);
  CHECK(first.json()["idempotency_key"] == "");
  const Answer second = reverse(s, t, "");
  CHECK(second.status == 409);
  CHECK(second.error_code() == "already_reversed");
  CHECK(second.json()["reversal"] == first.json());
  CHECK(s.transfers()[0]["reversed_by"] == first.json()["id"]);
}
