// PostgreSQL going away under the publisher: its connections terminated (pg_terminate_backend, as a
// restart or failover does) and new ones refused, while a batch is in flight. Real PostgreSQL (the
// `postgres` CTest fixture), the daemon as a real process, a real endpoint on loopback.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "daemon_client.h"
#include "process.h"
#include "publisher/receiver.h"
#include "support/test_env.h"
#include "webhooks/error.h"

namespace webhooks::test {
namespace {

using nlohmann::json;
// The database name of a postgresql://…/NAME URL.
std::string database_name(const std::string& url) { return url.substr(url.rfind('/') + 1); }

// A connection to the test server's `postgres` database, for what an operator does to another
// database: terminate its sessions, refuse or allow new ones.
class Operator {
 public:
  Operator() : db_(db::Database::open(postgres_url(), pool_options())) {}

  // Terminates every session of `name` and waits (up to 10 s) until PostgreSQL lists none of
  // them (new ones may have been opened meanwhile). Returns how many it terminated.
  std::int64_t terminate_sessions(const std::string& name) {
    const db::Rows terminated = db_->exec(
        "SELECT pid FROM (SELECT pid, pg_terminate_backend(pid) AS done FROM pg_stat_activity "
        "WHERE datname = $1 AND pid <> pg_backend_pid()) t WHERE done",
        {name});
    std::string pids = "{";
    for (std::size_t r = 0; r < terminated.size(); ++r) {
      pids += (r ? "," : "") + terminated.text(r, 0);
    }
    pids += "}";
    const auto alive = [&] {
      return db_->exec("SELECT COUNT(*) FROM pg_stat_activity WHERE pid = ANY($1::int[])", {pids})
          .integer(0, 0);
    };
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (alive() > 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    REQUIRE(alive() == 0);
    return static_cast<std::int64_t>(terminated.size());
  }
  std::int64_t sessions(const std::string& name) {
    return db_->exec("SELECT COUNT(*) FROM pg_stat_activity WHERE datname = $1", {name})
        .integer(0, 0);
  }
  // ALTER DATABASE … ALLOW_CONNECTIONS: while false, every new connection is refused.
  void allow_connections(const std::string& name, bool allow) {
    db_->exec("ALTER DATABASE " + name + " ALLOW_CONNECTIONS " + (allow ? "true" : "false"));
  }

 private:
  static db::Options pool_options() {
    db::Options o;
    o.pool_size = 1;
    return o;
  }
  std::unique_ptr<db::Database> db_;
};

TEST_CASE("the pool drops connections PostgreSQL terminated: the next statement succeeds",
          "[pg_faults]") {
  const std::string target = database_target("pool-terminate");
  const std::string name = database_name(target);
  db::Options options;
  options.pool_size = 3;
  auto db = db::Database::open(target, options);
  // Three connections in the pool: three transactions open at once.
  std::vector<std::thread> holders;
  std::atomic<int> inside{0};
  for (int i = 0; i < 3; ++i) {
    holders.emplace_back([&] {
      db->transact([&](db::Transaction& tx) {
        tx.exec("SELECT 1");
        ++inside;
        while (inside.load() < 3) std::this_thread::yield();
      });
    });
  }
  for (std::thread& t : holders) t.join();
  Operator op;
  REQUIRE(op.sessions(name) == 3);
  CHECK(op.terminate_sessions(name) == 3);
  REQUIRE(op.sessions(name) == 0);
  // Each of these would be the first statement on a terminated connection without the check.
  CHECK(db->exec("SELECT 41 + 1").integer(0, 0) == 42);
  CHECK(db->exec("SELECT 2").integer(0, 0) == 2);
  std::int64_t in_tx = 0;
  db->transact([&](db::Transaction& tx) { in_tx = tx.exec("SELECT 3").integer(0, 0); });
  CHECK(in_tx == 3);
  CHECK(db->read("SELECT 4").integer(0, 0) == 4);
  CHECK(op.sessions(name) == 1);  // the terminated three replaced by one fresh connection

  // Terminated while checked out of the pool, in a transaction: that transaction fails with a
  // storage error, and the connection is not reused.
  bool failed = false;
  try {
    db->transact([&](db::Transaction& tx) {
      tx.exec("SELECT 1");
      op.terminate_sessions(name);
      tx.exec("SELECT 2");
    });
  } catch (const Error& e) {
    failed = e.code() == ErrorCode::storage;
  }
  CHECK(failed);
  CHECK(db->exec("SELECT 5").integer(0, 0) == 5);
}

// An endpoint for `receiver` and five events for it (key-0 to key-4); their event ids.
std::vector<std::string> five_events(Client& client, const Receiver& receiver) {
  auto created = client.post("/v1/endpoints", {{"merchant_id", "m1"}, {"url", receiver.url()}});
  REQUIRE(created->status == 201);
  std::vector<std::string> events;
  for (int i = 0; i < 5; ++i) {
    auto accepted = client.post(
        "/v1/events", {{"merchant_id", "m1"}, {"type", "order.created"}, {"data", {{"n", i}}}},
        "key-" + std::to_string(i));
    REQUIRE(accepted->status == 202);
    events.push_back(json::parse(accepted->body)["event_id"].get<std::string>());
  }
  return events;
}

// The database refuses connections: the daemon is not healthy, and says so with 503.
void check_unavailable(Client& client, const Daemon& daemon) {
  const auto health = client.http.Get("/healthz");
  REQUIRE(health);
  CHECK(health->status == 503);
  CHECK(json::parse(health->body)["error"]["code"] == "storage_unavailable");
  CHECK(health->get_header_value("Retry-After") == "1");
  const auto metrics = client.http.Get("/metrics");
  REQUIRE(metrics);
  CHECK(metrics->status == 503);
  CHECK(json::parse(metrics->body)["error"]["code"] == "storage_unavailable");
  // Writing the attempts failed and is being retried.
  REQUIRE(eventually(
      [&] { return daemon.err().find(R"("event":"record_retry")") != std::string::npos; }));
}

// Each event was delivered exactly once, and that attempt is on record.
void check_delivered_once(Client& client, const Receiver& receiver,
                          const std::vector<std::string>& events) {
  std::multiset<std::string> delivered;
  for (const Received& r : receiver.received()) delivered.insert(r.header("webhook-id"));
  CHECK(delivered == std::multiset<std::string>(events.begin(), events.end()));
  for (const std::string& id : events) {
    INFO(id);
    const json attempts = json::parse(client.get("/v1/events/" + id + "/attempts")->body);
    REQUIRE(attempts["attempts"].size() == 1);
    CHECK(attempts["attempts"][0]["status"] == 200);
    CHECK(attempts["attempts"][0]["attempt_number"] == 1);
    const json event = json::parse(client.get("/v1/events/" + id)->body);
    CHECK(event["tasks"][0]["attempts"] == 1);
    CHECK(event["tasks"][0]["last_status"] == 200);
  }
  CHECK(receiver.count() == 5);
}

// Every task of `events` has succeeded (one task each).
bool all_succeeded(Client& client, const std::vector<std::string>& events) {
  for (const std::string& id : events) {
    auto event = client.get("/v1/events/" + id);
    if (!event || event->status != 200) return false;
    if (json::parse(event->body)["tasks"][0]["state"] != "succeeded") return false;
  }
  return true;
}

TEST_CASE(
    "PostgreSQL gone while a batch is in flight: the answered deliveries are recorded once it is "
    "back, without waiting out the lease; /healthz and /metrics answer 503 meanwhile",
    "[pg_faults]") {
  const std::string target = database_target("pg-gone");
  const std::string name = database_name(target);
  Operator op;
  // Deliveries wait (up to 30 s) until the test has ingested every event; then, before the first
  // is answered 200, new connections to the publisher's database are refused and its sessions
  // terminated, as a failover does.
  std::mutex gate_mutex;
  std::condition_variable gate;
  bool armed = false, refused = false;
  Receiver receiver([&](std::size_t, const Received&) {
    std::unique_lock lock(gate_mutex);
    gate.wait_for(lock, std::chrono::seconds(30), [&] { return armed; });
    if (!refused) {
      refused = true;
      op.allow_connections(name, false);
      op.terminate_sessions(name);
    }
    return Receiver::Reply{200, {}};
  });
  Daemon daemon({"--listen", "127.0.0.1:0", "--db", target, "--admin-token", kToken,
                 "--allow-private-networks", "--retry-schedule", "1s", "--timeout", "5s",
                 // A lost record would leave its task delivering this long: past the test's wait.
                 "--delivery-lease", "10m", "--batch-size", "8", "--poll-interval", "20ms",
                 "--log-level", "info"},
                temp_dir("publisherd-pg-gone"));
  Client client(daemon.wait_listening(), std::chrono::seconds(20));

  const std::vector<std::string> events = five_events(client, receiver);
  {
    std::lock_guard lock(gate_mutex);
    armed = true;
  }
  gate.notify_all();

  // The deliveries in flight are answered (the workers took one or more tasks each; a task no
  // worker had claimed yet waits for the database).
  REQUIRE(eventually([&] { return receiver.count() >= 1; }));
  check_unavailable(client, daemon);

  op.allow_connections(name, true);
  REQUIRE(eventually([&] { return all_succeeded(client, events); }));
  // Logged after the commit that settled the tasks, by the logger's own thread (asynchronous).
  CHECK(eventually(
      [&] { return daemon.err().find(R"("event":"record_stored")") != std::string::npos; }));
  CHECK(client.http.Get("/healthz")->status == 200);

  check_delivered_once(client, receiver, events);

  // Terminated again with nothing in flight: the first request afterwards succeeds, on a fresh
  // connection instead of a dead one from the pool.
  REQUIRE(op.terminate_sessions(name) >= 1);
  auto accepted = client.post(
      "/v1/events", {{"merchant_id", "m1"}, {"type", "order.created"}, {"data", {{"n", 5}}}},
      "key-5");
  REQUIRE(accepted);
  CHECK(accepted->status == 202);
}

}  // namespace
}  // namespace webhooks::test
