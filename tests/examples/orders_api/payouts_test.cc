// POST /payouts against a real payout partner: the partner down, answers lost after the partner
// committed, orders-api killed right after the partner committed, and an immature partner that
// ignores the key, with `orders-api reconcile` as the judge.
#include <signal.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "harness.h"
#include "orders_checks.h"
#include "webhooks/idempotency/store.h"

using namespace std::chrono;
using webhooks::test::Answer;
using webhooks::test::kPayout;
using webhooks::test::Stack;

namespace {

std::string report(int payouts, int transfers, int matched, int duplicates, int pending,
                   const std::string& details, const std::string& result) {
  return "payouts: " + std::to_string(payouts) + "\ntransfers: " + std::to_string(transfers) +
         "\nreversed: 0\nmatched: " + std::to_string(matched) +
         "\nduplicates: " + std::to_string(duplicates) +
         "\nmissing: 0\namount_differences: 0\nunknown_transfers: 0\npending: " +
         std::to_string(pending) + "\nrejected: 0\n" + details + "result: " + result + "\n";
}

const std::string kClean = report(1, 1, 1, 0, 0, "", "clean");

// Retries until the answer is not 409 (the crashed attempt's lease has to lapse first).
Answer retry_until_settled(Stack& s, const std::string& key) {
  const auto deadline = steady_clock::now() + seconds(15);
  Answer answer;
  while (steady_clock::now() < deadline) {
    answer = s.post("/payouts", key, kPayout);
    if (answer.status != 409) break;
    std::this_thread::sleep_for(milliseconds(100));
  }
  return answer;
}

void check_submitted(const Answer& answer, const std::string& key) {
  CHECK(answer.status == 201);
  const nlohmann::json p = answer.json();
  CHECK(p["downstream_key"] == "kxp-" + p["id"].get<std::string>() + "-" + key);
  CHECK(p["status"] == "submitted");
  CHECK(p["amount"] == 7500);
  CHECK(p["currency"] == "EUR");
  CHECK(p["destination"] == "NL91ABNA0417164300");
  CHECK(p["merchant_id"] == "m1");
}

}  // namespace

TEST_CASE("a payout with the partner reachable: 201, one transfer, reconcile is clean") {
  Stack s;
  s.start_partner();
  s.start_api();
  const Answer created = s.post("/payouts", "payout-1", kPayout);
  check_submitted(created, "payout-1");
  const nlohmann::json transfers = s.transfers();
  REQUIRE(transfers.size() == 1);
  CHECK(transfers[0]["idempotency_key"] == created.json()["downstream_key"]);
  CHECK(transfers[0]["id"] == created.json()["transfer_id"]);
  CHECK(transfers[0]["amount"] == 7500);
  const Answer replay = s.post("/payouts", "payout-1", kPayout);
  CHECK(replay.header("Idempotent-Replayed") == "true");
  CHECK(replay.body == created.body);
  CHECK(s.count("SELECT COUNT(*) FROM outbox WHERE event_type = 'payout.created'") == 1);
  const auto reconciled = s.reconcile();
  CHECK(reconciled.exit_code == 0);
  CHECK(reconciled.out == kClean);
  CHECK(s.api->kill_and_wait(SIGTERM) == 0);
  CHECK(s.partner->kill_and_wait(SIGTERM) == 0);
}

TEST_CASE("the partner is down (502, not final): the retry runs again with the same payout") {
  Stack s;
  s.start_partner();
  s.start_api({"--partner-attempts", "2", "--partner-timeout", "1s"});
  const int port = s.partner_port;
  s.stop_partner();

  const Answer down = s.post("/payouts", "payout-2", kPayout);
  check_error(down, 502, "partner_unavailable");
  std::shared_ptr<webhooks::db::Database> db(&s.db(), [](webhooks::db::Database*) {});
  auto r = webhooks::idempotency::Store(db).find("orders-api:m1", "payout-2");
  REQUIRE(r);
  CHECK(r->state == webhooks::idempotency::State::failed);
  const auto saved = s.db().exec("SELECT id, status FROM payouts");
  REQUIRE(saved.size() == 1);
  CHECK(saved.text(0, 1) == "pending");

  s.start_partner({}, port);  // the same partner comes back on the same port
  const Answer retry = s.post("/payouts", "payout-2", kPayout);
  check_submitted(retry, "payout-2");
  CHECK(retry.header("Idempotent-Replayed") == "");
  CHECK(retry.json()["id"] == saved.text(0, 0));  // reused, not a new payout id
  const nlohmann::json transfers = s.transfers();
  REQUIRE(transfers.size() == 1);
  CHECK(transfers[0]["idempotency_key"] == retry.json()["downstream_key"]);
  CHECK(s.count("SELECT COUNT(*) FROM payouts") == 1);
  CHECK(s.count("SELECT COUNT(*) FROM outbox WHERE event_type = 'payout.created'") == 1);
  r = webhooks::idempotency::Store(db).find("orders-api:m1", "payout-2");
  REQUIRE(r);
  CHECK(r->attempts == 2);
  const Answer replay = s.post("/payouts", "payout-2", kPayout);
  CHECK(replay.header("Idempotent-Replayed") == "true");
  CHECK(replay.body == retry.body);
  CHECK(s.reconcile().out == kClean);
}

TEST_CASE("the partner commits and its answer is lost: the same key again, one transfer") {
  Stack s;
  SECTION("lost once: orders-api's own retry repeats the key") {
    s.start_partner({"--drop-after-commit", "1"});
    s.start_api({"--partner-attempts", "3"});
    const Answer created = s.post("/payouts", "payout-3", kPayout);
    check_submitted(created, "payout-3");
    const nlohmann::json transfers = s.transfers();
    REQUIRE(transfers.size() == 1);
    CHECK(transfers[0]["id"] == created.json()["transfer_id"]);
  }
  SECTION("lost on every try: 502, then the client's retry repeats the key") {
    s.start_partner({"--drop-after-commit", "2"});
    s.start_api({"--partner-attempts", "2"});
    const Answer lost = s.post("/payouts", "payout-3", kPayout);
    check_error(lost, 502, "partner_unavailable");
    CHECK(s.transfers().size() == 1);  // committed, twice asked, once created
    const Answer retry = s.post("/payouts", "payout-3", kPayout);
    check_submitted(retry, "payout-3");
    const nlohmann::json transfers = s.transfers();
    REQUIRE(transfers.size() == 1);
    CHECK(transfers[0]["id"] == retry.json()["transfer_id"]);
  }
  CHECK(s.count("SELECT COUNT(*) FROM payouts") == 1);
  const auto reconciled = s.reconcile();
  CHECK(reconciled.exit_code == 0);
  CHECK(reconciled.out == kClean);
}

TEST_CASE("orders-api dies right after the partner committed: the retry finds the saved payout") {
  const bool immature = GENERATE(false, true);
  Stack s;
  INFO((immature ? "a partner that ignores X-Idempotency-Key" : "a deduplicating partner"));
  s.start_partner(immature ? std::vector<std::string>{"--ignore-idempotency-key"}
                           : std::vector<std::string>{});
  s.start_api({"--lease", "1s", "--crash-after-partner-commit"});
  CHECK_FALSE(s.try_post("/payouts", "payout-4", kPayout));
  const auto status = s.api->wait_exit(seconds(15));
  REQUIRE(status);
  CHECK(WIFSIGNALED(*status));
  CHECK(WTERMSIG(*status) == SIGKILL);

  const auto saved = s.db().exec("SELECT id, downstream_key, status FROM payouts");
  REQUIRE(saved.size() == 1);
  CHECK(saved.text(0, 2) == "pending");
  const nlohmann::json before = s.transfers();
  REQUIRE(before.size() == 1);
  CHECK(before[0]["idempotency_key"] == saved.text(0, 1));
  const auto in_doubt = s.reconcile();
  CHECK(in_doubt.exit_code == 0);
  CHECK(in_doubt.out ==
        report(1, 1, 0, 0, 1,
               "pending payout=" + saved.text(0, 0) + " downstream_key=" + saved.text(0, 1) +
                   " transfer=" + before[0]["id"].get<std::string>() + "\n",
               "clean"));

  s.start_api({"--lease", "1s"});
  const Answer retry = retry_until_settled(s, "payout-4");
  check_submitted(retry, "payout-4");
  CHECK(retry.json()["id"] == saved.text(0, 0));
  CHECK(s.count("SELECT COUNT(*) FROM payouts") == 1);
  const nlohmann::json after = s.transfers();
  const auto reconciled = s.reconcile();
  if (!immature) {
    REQUIRE(after.size() == 1);
    CHECK(retry.json()["transfer_id"] == before[0]["id"]);
    CHECK(reconciled.exit_code == 0);
    CHECK(reconciled.out == kClean);
  } else {
    // The same downstream request reached a partner that does not deduplicate: reconcile sees it.
    REQUIRE(after.size() == 2);
    CHECK(after[0]["idempotency_key"] == after[1]["idempotency_key"]);
    CHECK(retry.json()["transfer_id"] == after[1]["id"]);
    CHECK(reconciled.exit_code == 1);
    CHECK(reconciled.out ==
          report(1, 2, 0, 1, 0,
                 "duplicate payout=" + saved.text(0, 0) + " downstream_key=" + saved.text(0, 1) +
                     " transfers=" + after[1]["id"].get<std::string>() + "," +  // the recorded one
                     after[0]["id"].get<std::string>() + "\n",
                 "1 finding"));
  }
}
