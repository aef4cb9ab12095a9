// Runs orders-api and payout-partner from build/bin as real processes and talks HTTP to them.
#pragma once

#include <httplib.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "webhooks/db.h"
#include "webhooks/idempotency/store.h"
#include "webhooks/launcher/child_process.h"

namespace webhooks::test {

// The request bodies most tests send: an order of 10.00 EUR, a payout of 75.00 EUR.
inline const std::string kOrder = R"({"amount":1000,"currency":"EUR","reference":"inv-1"})";
inline const std::string kPayout =
    R"({"amount":7500,"currency":"EUR","destination":"NL91ABNA0417164300"})";

// One HTTP answer.
struct Answer {
  int status = 0;
  std::string body;
  httplib::Headers headers;
  std::string header(const std::string& name) const;
  nlohmann::json json() const;
  std::string error_code() const;  // json()["error"]["code"]
};

// A payout partner and an orders API on loopback, with their databases: orders on the engine
// under test (a fresh database per Stack), the partner on SQLite. API keys: key-m1 -> m1,
// key-m2 -> m2.
class Stack {
 public:
  Stack();
  ~Stack();

  // Starts (or restarts, on the same database) the partner; `port` 0 picks one.
  void start_partner(const std::vector<std::string>& extra = {}, int port = 0);
  void start_api(const std::vector<std::string>& extra = {});
  void stop_partner();  // SIGTERM and wait

  // POST with `Authorization: Bearer token` and, when given, `Idempotency-Key: key`.
  // FAILs the test when no HTTP answer arrives.
  Answer post(const std::string& path, std::optional<std::string> key, const std::string& body,
              const std::string& token = "key-m1");
  // Like post, but std::nullopt when the connection fails (e.g. the server died).
  std::optional<Answer> try_post(const std::string& path, std::optional<std::string> key,
                                 const std::string& body, const std::string& token = "key-m1");
  // answers.size() identical POSTs of `body` with `key`, sent at once from a thread each (all
  // started before any is sent); each try_post's result in `answers`.
  void post_at_once(const std::string& path, const std::string& key, const std::string& body,
                    std::vector<std::optional<Answer>>& answers);
  Answer get(const std::string& path, const std::string& token = "key-m1");
  // PUT with `Authorization: Bearer token` and, when given, `Idempotency-Key: key`.
  Answer put(const std::string& path, const std::string& body, const std::string& token = "key-m1",
             std::optional<std::string> key = std::nullopt);
  // The partner's GET /transfers, as its "transfers" array.
  nlohmann::json transfers();
  // `orders-api reconcile` against this stack's databases, with `extra` arguments.
  launcher::Finished reconcile(const std::vector<std::string>& extra = {});

  // The orders database, opened from the test process.
  db::Database& db();
  std::int64_t count(const std::string& sql);
  // The orders API's idempotency record of merchant m1's `key`, read from db() by a Store with
  // orders-api's renderer (an order's 201 is stored by reference and rendered again).
  std::optional<idempotency::Record> record(const std::string& key);

  std::unique_ptr<launcher::ChildProcess> partner, api;
  int partner_port = 0, api_port = 0;
  std::string dir, orders_db, partner_db;

 private:
  std::shared_ptr<db::Database> db_;
};

}  // namespace webhooks::test
