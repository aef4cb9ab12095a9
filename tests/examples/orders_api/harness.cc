#include "harness.h"

#include <sys/wait.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

#include "orders.h"
#include "support/test_env.h"

namespace webhooks::test {
namespace {

using namespace std::chrono;

Answer to_answer(const httplib::Result& result) {
  Answer answer;
  answer.status = result->status;
  answer.body = result->body;
  answer.headers = result->headers;
  return answer;
}

std::unique_ptr<httplib::Client> client(int port) {
  auto c = std::make_unique<httplib::Client>("127.0.0.1", port);
  c->set_connection_timeout(seconds(5));
  c->set_read_timeout(seconds(90));
  c->set_write_timeout(seconds(5));
  return c;
}

httplib::Headers auth_headers(const std::string& token, const std::optional<std::string>& key) {
  httplib::Headers headers = {{"Authorization", "Bearer " + token}};
  if (key) headers.emplace("Idempotency-Key", *key);
  return headers;
}

}  // namespace

std::string Answer::header(const std::string& name) const {
  const auto it = headers.find(name);
  return it == headers.end() ? "" : it->second;
}

nlohmann::json Answer::json() const {
  const nlohmann::json parsed = nlohmann::json::parse(body, nullptr, false);
  if (parsed.is_discarded()) FAIL("not JSON: " << body);
  return parsed;
}

std::string Answer::error_code() const {
  const nlohmann::json parsed = json();
  if (!parsed.contains("error")) FAIL("no error in: " << body);
  return parsed["error"]["code"].get<std::string>();
}

Stack::Stack()
    : dir(temp_dir("orders")),
      orders_db(database_target("orders")),
      partner_db(dir + "/partner.db") {}

Stack::~Stack() = default;

void Stack::start_partner(const std::vector<std::string>& extra, int port) {
  std::vector<std::string> args = {"--listen", "127.0.0.1:" + std::to_string(port), "--db",
                                   partner_db};
  args.insert(args.end(), extra.begin(), extra.end());
  partner = std::make_unique<launcher::ChildProcess>("payout-partner", args, dir);
  partner_port = partner->wait_listening();
}

void Stack::stop_partner() {
  partner->kill_and_wait(SIGTERM);
  partner.reset();
}

void Stack::start_api(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"--listen",  "127.0.0.1:0", "--db",      orders_db,
                                   "--api-key", "key-m1:m1",   "--api-key", "key-m2:m2"};
  if (partner_port != 0) {
    args.push_back("--partner-url");
    args.push_back("http://127.0.0.1:" + std::to_string(partner_port));
  }
  args.insert(args.end(), extra.begin(), extra.end());
  api.reset();
  api = std::make_unique<launcher::ChildProcess>("orders-api", args, dir);
  api_port = api->wait_listening();
}

std::optional<Answer> Stack::try_post(const std::string& path, std::optional<std::string> key,
                                      const std::string& body, const std::string& token) {
  const auto result =
      client(api_port)->Post(path.c_str(), auth_headers(token, key), body, "application/json");
  if (!result) return std::nullopt;
  return to_answer(result);
}

Answer Stack::post(const std::string& path, std::optional<std::string> key, const std::string& body,
                   const std::string& token) {
  const auto result =
      client(api_port)->Post(path.c_str(), auth_headers(token, key), body, "application/json");
  if (!result) FAIL("POST " << path << ": " << httplib::to_string(result.error()));
  return to_answer(result);
}

void Stack::post_at_once(const std::string& path, const std::string& key, const std::string& body,
                         std::vector<std::optional<Answer>>& answers) {
  const int clients_count = static_cast<int>(answers.size());
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> clients;
  for (int i = 0; i < clients_count; ++i) {
    clients.emplace_back([&, i] {
      ++ready;
      while (!go) std::this_thread::yield();
      answers[static_cast<std::size_t>(i)] = try_post(path, key, body);
    });
  }
  while (ready < clients_count) std::this_thread::yield();
  go = true;
  for (auto& t : clients) t.join();
}

Answer Stack::get(const std::string& path, const std::string& token) {
  const auto result = client(api_port)->Get(path.c_str(), auth_headers(token, std::nullopt));
  if (!result) FAIL("GET " << path << ": " << httplib::to_string(result.error()));
  return to_answer(result);
}

Answer Stack::put(const std::string& path, const std::string& body, const std::string& token,
                  std::optional<std::string> key) {
  const auto result =
      client(api_port)->Put(path.c_str(), auth_headers(token, key), body, "application/json");
  if (!result) FAIL("PUT " << path << ": " << httplib::to_string(result.error()));
  return to_answer(result);
}

nlohmann::json Stack::transfers() {
  const auto result = client(partner_port)->Get("/transfers");
  if (!result) FAIL("GET /transfers: " << httplib::to_string(result.error()));
  REQUIRE(result->status == 200);
  return nlohmann::json::parse(result->body)["transfers"];
}

launcher::Finished Stack::reconcile(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"reconcile", "--db", orders_db, "--partner-url",
                                   "http://127.0.0.1:" + std::to_string(partner_port)};
  args.insert(args.end(), extra.begin(), extra.end());
  return launcher::run_to_end("orders-api", args, dir);
}

db::Database& Stack::db() {
  if (!db_) db_ = db::Database::open(orders_db);
  return *db_;
}

std::int64_t Stack::count(const std::string& sql) { return db().exec(sql).integer(0, 0); }

std::optional<idempotency::Record> Stack::record(const std::string& key) {
  std::shared_ptr<db::Database> shared(&db(), [](db::Database*) {});
  idempotency::Settings settings;
  settings.renderer = std::make_shared<orders::CreatedOrderAnswers>();  // as orders-api's
  return idempotency::Store(shared, settings).find("orders-api:m1", key);
}

}  // namespace webhooks::test
