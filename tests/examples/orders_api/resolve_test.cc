// `orders-api reconcile --resolve` against a real immature partner (--ignore-idempotency-key, and
// --drop-after-commit 1 per doubled payout): 50 payouts, 10 of them with a duplicate transfer, 3
// whose transfer the partner lost. Resolved in one run, or in a run SIGKILLed after N partner calls
// and run again: exactly one reversal per duplicate, and the partner's net amount per payout is the
// payout's.
#include <httplib.h>
#include <signal.h>

#include <catch2/catch.hpp>
#include <map>
#include <random>

#include "harness.h"

using webhooks::test::Stack;

namespace {

constexpr int kPayouts = 50;
constexpr int kDuplicates = 10;  // the first 10 payouts: answer dropped, retried, doubled
const std::vector<int> kLost = {20, 30, 40};

// The report lines of a reconcile that found `duplicates` and `missing` (details not compared).
std::string counts(int transfers, int reversed, int matched, int duplicates, int missing) {
  return "payouts: 50\ntransfers: " + std::to_string(transfers) +
         "\nreversed: " + std::to_string(reversed) + "\nmatched: " + std::to_string(matched) +
         "\nduplicates: " + std::to_string(duplicates) + "\nmissing: " + std::to_string(missing) +
         "\namount_differences: 0\nunknown_transfers: 0\npending: 0\nrejected: 0\n";
}

const std::string kResolved = counts(60, 10, 50, 0, 0) + "result: clean\n";

// 50 payouts of 1001..1050 EUR cents through orders-api; the partner doubles the first 10 (each
// sent to a partner restarted with --drop-after-commit 1: orders-api's retry makes a second
// transfer) and then loses the transfers of payouts 20, 30 and 40 (deleted from its database).
void make_findings(Stack& s) {
  const std::vector<std::string> immature = {"--ignore-idempotency-key"};
  s.start_partner(immature);
  s.start_api();
  for (int i = 1; i <= kPayouts; ++i) {
    if (i <= kDuplicates) {
      const int port = s.partner_port;
      s.stop_partner();
      s.start_partner({"--ignore-idempotency-key", "--drop-after-commit", "1"}, port);
    } else if (i == kDuplicates + 1) {
      const int port = s.partner_port;
      s.stop_partner();
      s.start_partner(immature, port);
    }
    const auto a = s.post("/payouts", "p-" + std::to_string(i),
                          R"({"amount":)" + std::to_string(1000 + i) +
                              R"(,"currency":"EUR","destination":"NL91ABNA0417164300"})");
    REQUIRE(a.status == 201);
  }
  auto partner_db = webhooks::db::Database::open(s.partner_db);
  for (int i : kLost) {
    const auto key = s.db().exec("SELECT downstream_key FROM payouts WHERE idempotency_key = $1",
                                 {"p-" + std::to_string(i)});
    REQUIRE(partner_db->exec("DELETE FROM transfers WHERE idempotency_key = $1", {key.text(0, 0)})
                .affected() == 1);
  }
  const auto found = s.reconcile();
  CHECK(found.exit_code == 1);
  CHECK(found.out.starts_with(counts(57, 0, 37, 10, 3)));
  CHECK(found.out.ends_with("result: 13 findings\n"));
}

// The non-empty pieces of `text` between `separator`s ("" lines kept when separator is '\n').
std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(separator, start);
    if (end == std::string::npos) end = text.size();
    if (separator == '\n' || end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// One reversal per duplicate, of its later transfer, under kxr-<id>; net amount = payout amount.
void check_settled(Stack& s) {
  const nlohmann::json transfers = s.transfers();
  std::map<std::string, std::vector<nlohmann::json>> by_key;
  for (const auto& t : transfers) by_key[t["idempotency_key"]].push_back(t);
  const auto payouts = s.db().exec("SELECT downstream_key, amount, transfer_id FROM payouts");
  REQUIRE(payouts.size() == kPayouts);
  int reversed = 0;
  for (std::size_t i = 0; i < payouts.size(); ++i) {
    const auto& list = by_key[payouts.text(i, 0)];
    std::int64_t net = 0;
    for (std::size_t j = 0; j < list.size(); ++j) {
      if (list[j]["reversed_by"].is_null()) {
        net += list[j]["amount"].get<std::int64_t>();
        CHECK(payouts.text(i, 2) == list[j]["id"]);  // the payout points at the kept transfer
      } else {
        ++reversed;
        // The transfer the payout records (the one its client was told about) is kept.
        CHECK(list[j]["id"] != payouts.text(i, 2));
      }
    }
    CHECK(net == payouts.integer(i, 1));
  }
  CHECK(reversed == kDuplicates);
  CHECK(s.count("SELECT COUNT(*) FROM reconciliations WHERE action = 'reverse' AND state = 'done'"
                " AND idempotency_key = 'kxr-' || transfer_id") == kDuplicates);
  CHECK(s.count("SELECT COUNT(*) FROM reconciliations WHERE action = 'resubmit' AND state ="
                " 'done'") == 3);
  CHECK(s.count("SELECT COUNT(*) FROM reconciliations WHERE state <> 'done'") == 0);
  const auto again = s.reconcile();
  CHECK(again.exit_code == 0);
  CHECK(again.out == kResolved);
}

}  // namespace

TEST_CASE("reconcile --dry-run prints the plan and changes nothing; --resolve settles it") {
  Stack s;
  make_findings(s);
  const auto dry = s.reconcile({"--resolve", "--dry-run"});
  CHECK(dry.exit_code == 1);
  const std::vector<std::string> lines = split(dry.out, '\n');
  REQUIRE(lines.size() > 15);
  CHECK(lines[0] == "plan (dry run): 13 steps");
  CHECK(split(lines[1], ' ') == std::vector<std::string>{"action", "payout", "transfer", "key",
                                                         "amount", "state", "result"});
  const auto first =
      split(lines[2], ' ');  // reverse payout transfer kxr-transfer 1001 EUR planned -
  REQUIRE(first.size() == 8);
  CHECK(first[0] == "reverse");
  CHECK(first[3] == "kxr-" + first[2]);
  CHECK(first[4] == "1001");
  CHECK(first[5] == "EUR");
  CHECK(first[6] == "planned");
  CHECK(first[7] == "-");
  const auto last = split(lines[14], ' ');  // resubmit payout - downstream-key 1040 EUR planned -
  REQUIRE(last.size() == 8);
  CHECK(last[0] == "resubmit");
  CHECK(last[2] == "-");
  CHECK(last[4] == "1040");
  CHECK(lines[15] == "");
  CHECK(s.transfers().size() == 57);
  const auto dry_json = s.reconcile({"--resolve", "--dry-run", "--json"});
  CHECK(dry_json.exit_code == 1);
  const nlohmann::json plan = nlohmann::json::parse(dry_json.out);
  CHECK(plan["dry_run"] == true);
  REQUIRE(plan["plan"].size() == 13);
  CHECK(plan["plan"][0]["action"] == "reverse");
  CHECK(plan["plan"][0]["idempotency_key"] ==
        "kxr-" + plan["plan"][0]["transfer_id"].get<std::string>());
  CHECK(plan["plan"][12]["action"] == "resubmit");
  CHECK(plan["plan"][12]["state"] == "planned");
  CHECK(plan["report"]["duplicates"] == 10);
  CHECK(plan["report"]["missing"] == 3);
  CHECK(plan["report"]["result"] == "13 findings");

  const auto resolved = s.reconcile({"--resolve"});
  CHECK(resolved.exit_code == 0);
  CHECK(resolved.out.starts_with("plan: 13 steps\n"));
  CHECK(resolved.out.ends_with("\n\n" + kResolved));
  check_settled(s);
  const auto nothing = s.reconcile({"--resolve", "--json"});
  CHECK(nothing.exit_code == 0);
  CHECK(nlohmann::json::parse(nothing.out)["plan"].empty());
}

TEST_CASE("reconcile --resolve SIGKILLed after N partner calls, run again: each reversed once") {
  // 0: right after the plan is committed; 5: mid-reversals; 11: after the first re-submission
  // reached the partner (a re-run must not send it again); and a point drawn afresh each run.
  std::random_device entropy;
  const int drawn = std::uniform_int_distribution<int>(1, 13)(entropy);
  const int calls = GENERATE_COPY(0, 5, 11, drawn);
  INFO("SIGKILL after " << calls << " partner calls");
  Stack s;
  make_findings(s);
  const auto killed =
      s.reconcile({"--resolve", "--crash-after-partner-calls", std::to_string(calls)});
  CHECK(killed.exit_code == 128 + SIGKILL);
  CHECK(s.count("SELECT COUNT(*) FROM reconciliations") == 13);
  CHECK(s.count("SELECT COUNT(*) FROM reconciliations WHERE state = 'done'") ==
        std::max(calls - 1, 0));
  const auto rerun = s.reconcile({"--resolve"});
  CHECK(rerun.exit_code == 0);
  const int left = 13 - std::max(calls - 1, 0);
  CHECK(rerun.out.starts_with("plan: " + std::to_string(left) +
                              (left == 1 ? " step\n" : " steps\n")));
  check_settled(s);
}

TEST_CASE("reconcile --resolve leaves amount differences and unknown transfers to a human") {
  Stack s;
  s.start_partner();
  s.start_api();
  for (int i = 1; i <= 3; ++i) {
    REQUIRE(s.post("/payouts", "p-" + std::to_string(i),
                   R"({"amount":100)" + std::to_string(i) +
                       R"(,"currency":"EUR","destination":"NL91ABNA0417164300"})")
                .status == 201);
  }
  const auto key = s.db().exec("SELECT downstream_key FROM payouts WHERE idempotency_key = 'p-2'");
  auto partner_db = webhooks::db::Database::open(s.partner_db);
  REQUIRE(
      partner_db
          ->exec("UPDATE transfers SET amount = 999 WHERE idempotency_key = $1", {key.text(0, 0)})
          .affected() == 1);
  httplib::Client partner("127.0.0.1", s.partner_port);
  REQUIRE(partner
              .Post("/transfers", {{"X-Idempotency-Key", "stray"}},
                    R"({"amount":5,"currency":"EUR","destination":"NL91"})", "application/json")
              ->status == 201);
  const auto before = s.transfers();

  const auto resolved = s.reconcile({"--resolve"});
  CHECK(resolved.exit_code == 1);
  const std::vector<std::string> lines = split(resolved.out, '\n');
  REQUIRE(lines.size() == 16);
  CHECK(lines[0] == "plan: 0 steps");
  CHECK(resolved.out.substr(0, resolved.out.find("amount_difference payout=")) ==
        "plan: 0 steps\n\npayouts: 3\ntransfers: 4\nreversed: 0\nmatched: 2\nduplicates: 0\n"
        "missing: 0\namount_differences: 1\nunknown_transfers: 1\npending: 0\nrejected: 0\n");
  CHECK(lines[14] == "result: 2 findings");
  CHECK(s.transfers() == before);
  CHECK(s.count("SELECT COUNT(*) FROM reconciliations") == 0);

  const auto json = s.reconcile({"--json"});
  CHECK(json.exit_code == 1);
  const nlohmann::json report = nlohmann::json::parse(json.out);
  CHECK(report["amount_differences"] == 1);
  CHECK(report["unknown_transfers"] == 1);
  CHECK(report["result"] == "2 findings");
  CHECK(report["details"].size() == 2);
}

TEST_CASE("reconcile --resolve with the partner down: exit 2, nothing planned") {
  Stack s;
  s.start_partner();
  s.start_api();
  REQUIRE(s.post("/payouts", "p-1", R"({"amount":1001,"currency":"EUR","destination":"NL91"})")
              .status == 201);
  s.stop_partner();
  const auto down = s.reconcile({"--resolve"});
  CHECK(down.exit_code == 2);
  CHECK(down.out == "");
  CHECK(down.err.starts_with("orders-api: GET http://127.0.0.1:"));
  CHECK(s.count("SELECT COUNT(*) FROM reconciliations") == 0);
}

namespace {

// A second transfer under payout p-N's downstream key (the partner ignores keys); its id.
std::string add_transfer(Stack& s, int n, int amount) {
  const auto key = s.db().exec("SELECT downstream_key FROM payouts WHERE idempotency_key = $1",
                               {"p-" + std::to_string(n)});
  httplib::Client partner("127.0.0.1", s.partner_port);
  const auto made = partner.Post(
      "/transfers", {{"X-Idempotency-Key", key.text(0, 0)}},
      R"({"amount":)" + std::to_string(amount) + R"(,"currency":"EUR","destination":"NL91"})",
      "application/json");
  REQUIRE(made->status == 201);
  return nlohmann::json::parse(made->body)["id"];
}

void pay(Stack& s, int count) {
  for (int i = 1; i <= count; ++i) {
    REQUIRE(s.post("/payouts", "p-" + std::to_string(i),
                   R"({"amount":100)" + std::to_string(i) +
                       R"(,"currency":"EUR","destination":"NL91ABNA0417164300"})")
                .status == 201);
  }
}

}  // namespace

TEST_CASE("reconcile --resolve: a duplicate of another amount, a reversed payout: a human's") {
  Stack s;
  s.start_partner({"--ignore-idempotency-key"});
  s.start_api();
  pay(s, 2);
  add_transfer(s, 1, 999);  // p-1 (1001) has a second transfer of 999: which to keep is unclear
  const std::string p2 = s.db()
                             .exec(
                                 "SELECT transfer_id FROM payouts WHERE idempotency_key = "
                                 "'p-2'")
                             .text(0, 0);
  httplib::Client partner("127.0.0.1", s.partner_port);
  REQUIRE(partner
              .Post("/transfers/" + p2 + "/reversals", {{"X-Idempotency-Key", "h-1"}}, "{}",
                    "application/json")
              ->status == 201);  // p-2 reversed at the partner, by hand
  const auto before = s.transfers();
  const auto resolved = s.reconcile({"--resolve"});
  CHECK(resolved.exit_code == 1);
  CHECK(resolved.out.starts_with(
      "plan: 0 steps\n\npayouts: 2\ntransfers: 3\nreversed: 1\nmatched: 0\nduplicates: 0\n"
      "missing: 1\namount_differences: 1\nunknown_transfers: 0\npending: 0\nrejected: 0\n"));
  CHECK(resolved.out.find(" transfers=") != std::string::npos);
  CHECK(resolved.out.find(" reversed_at_partner=true\n") != std::string::npos);
  CHECK(s.transfers() == before);  // nothing reversed, nothing re-submitted
  CHECK(s.count("SELECT COUNT(*) FROM reconciliations") == 0);
}

TEST_CASE("reconcile --resolve tries a step an earlier run recorded as failed again") {
  Stack s;
  s.start_partner({"--ignore-idempotency-key"});
  s.start_api();
  pay(s, 1);
  REQUIRE(s.reconcile({"--resolve"}).exit_code == 0);  // clean; creates the table
  const std::string kept =
      s.db().exec("SELECT transfer_id FROM payouts WHERE idempotency_key = 'p-1'").text(0, 0);
  const std::string extra = add_transfer(s, 1, 1001);
  s.db().exec(
      "INSERT INTO reconciliations (id, payout_id, action, transfer_id, kept_transfer_id,"
      " idempotency_key, amount, currency, state, result, created_at, updated_at)"
      " SELECT 'rc_failed', id, 'reverse', $1, $2, $3, 1001, 'EUR', 'failed', 'refused', 1, 1"
      " FROM payouts WHERE idempotency_key = 'p-1'",
      {extra, kept, "kxr-" + extra});
  const auto resolved = s.reconcile({"--resolve"});
  CHECK(resolved.exit_code == 0);
  CHECK(resolved.out.starts_with("plan: 1 step\n"));
  CHECK(s.count("SELECT COUNT(*) FROM reconciliations") == 1);
  CHECK(s.count("SELECT COUNT(*) FROM reconciliations WHERE id = 'rc_failed' AND state = 'done'") ==
        1);
  int reversed = 0;
  for (const auto& t : s.transfers()) {
    if (!t["reversed_by"].is_null()) {
      ++reversed;
      CHECK(t["id"] == extra);
    }
  }
  CHECK(reversed == 1);
}
