// The idempotency core: begin + complete pairs per second and their latency, on SQLite and on
// PostgreSQL, with 1 and 8 threads, beside the same engine's raw single-row
// INSERT ... ON CONFLICT DO NOTHING rate with the same settings, alternating in the same run.
// PostgreSQL comes from WEBHOOKS_BENCH_POSTGRES_URL (scripts/bench starts a durable server).
#include <libpq-fe.h>
#include <sqlite3.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>

#include "bench_util.h"
#include "webhooks/clock.h"
#include "webhooks/idempotency/store.h"

namespace {

using namespace webhooks;
using steady = std::chrono::steady_clock;
constexpr auto kRound = std::chrono::milliseconds(1500);
constexpr long kMaxOpsPerRound = 200'000;
std::atomic<long> g_sequence{0};

struct Figures {
  double rate = 0;
  std::vector<double> latencies_ms;
};

// Runs `op(thread, sequence)` on `threads` threads for one round; returns ops/s and latencies.
template <typename Op>
Figures run_round(int threads, Op op) {
  std::atomic<long> done{0};
  std::vector<std::vector<double>> lat(static_cast<std::size_t>(threads));
  const auto start = steady::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      while (steady::now() - start < kRound && done.load() < kMaxOpsPerRound) {
        const auto t0 = steady::now();
        op(t, g_sequence.fetch_add(1));
        lat[static_cast<std::size_t>(t)].push_back(
            std::chrono::duration<double, std::milli>(steady::now() - t0).count());
        done.fetch_add(1);
      }
    });
  }
  for (auto& th : pool) th.join();
  Figures f;
  f.rate = static_cast<double>(done.load()) /
           std::chrono::duration<double>(steady::now() - start).count();
  for (auto& l : lat) f.latencies_ms.insert(f.latencies_ms.end(), l.begin(), l.end());
  return f;
}

// The baseline inserts the same row into the same table (schema/*/0001_idempotency.sql, with its
// indexes) of its own database, so both sides write the same pages.
constexpr const char* kRawInsert =
    "INSERT INTO idempotency_records (scope, idempotency_key, fingerprint, state, lease_owner, "
    "lease_expires_at, attempts, created_at, updated_at, expires_at) "
    "VALUES ($1, $2, $3, 'in_progress', 'token', $4, 1, $4, $4, $4) "
    "ON CONFLICT (scope, idempotency_key) DO NOTHING";

void migrate(const std::string& target) {
  db::Database::open(target)->migrate(system_clock().now_ms());
}

// Raw SQLite: one connection (as ours), same pragmas, a prepared statement, autocommit.
class RawSqlite {
 public:
  explicit RawSqlite(const std::string& path) {
    sqlite3_open(path.c_str(), &db_);
    sqlite3_exec(db_, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", nullptr, nullptr, nullptr);
    sqlite3_prepare_v2(db_, kRawInsert, -1, &stmt_, nullptr);
  }
  ~RawSqlite() {
    sqlite3_finalize(stmt_);
    sqlite3_close(db_);
  }
  void insert(long seq) {
    const std::string key = "raw-" + std::to_string(seq);
    std::lock_guard lock(mutex_);
    sqlite3_bind_text(stmt_, 1, "m1", -1, SQLITE_STATIC);
    sqlite3_bind_text(stmt_, 2, key.c_str(), -1, SQLITE_STATIC);
    sqlite3_bind_text(stmt_, 3, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", -1,
                      SQLITE_STATIC);
    sqlite3_bind_int64(stmt_, 4, seq);
    sqlite3_step(stmt_);
    sqlite3_reset(stmt_);
  }

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  std::mutex mutex_;
};

// Raw PostgreSQL: one connection per thread (as ours), a prepared statement, autocommit.
class RawPostgres {
 public:
  RawPostgres(const std::string& url, int connections) {
    for (int i = 0; i < connections; ++i) {
      PGconn* c = PQconnectdb(url.c_str());
      PQclear(PQprepare(c, "ins", kRawInsert, 0, nullptr));
      conns_.push_back(c);
    }
  }
  ~RawPostgres() {
    for (PGconn* c : conns_) PQfinish(c);
  }
  void insert(int thread, long seq) {
    const std::string key = "raw-" + std::to_string(seq), at = std::to_string(seq);
    const char* values[] = {"m1", key.c_str(),
                            "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                            at.c_str()};
    PQclear(PQexecPrepared(conns_[static_cast<std::size_t>(thread)], "ins", 4, values, nullptr,
                           nullptr, 0));
  }

 private:
  std::vector<PGconn*> conns_;
};

// A fresh database on the server at `url`; returns its URL.
std::string create_database(const std::string& url, const std::string& name) {
  PGconn* c = PQconnectdb(url.c_str());
  PQclear(PQexec(c, ("DROP DATABASE IF EXISTS " + name).c_str()));
  PQclear(PQexec(c, ("CREATE DATABASE " + name).c_str()));
  PQfinish(c);
  return url.substr(0, url.rfind('/') + 1) + name;
}

void report(const char* engine, int threads, const char* settings, const std::vector<Figures>& ours,
            const std::vector<Figures>& raw) {
  std::vector<double> ours_rates, raw_rates, ratios, lat;
  for (std::size_t i = 0; i < ours.size(); ++i) {
    ours_rates.push_back(ours[i].rate);
    raw_rates.push_back(raw[i].rate);
    ratios.push_back(ours[i].rate / raw[i].rate);
    lat.insert(lat.end(), ours[i].latencies_ms.begin(), ours[i].latencies_ms.end());
  }
  std::printf(
      "%-10s %d thread%s  begin+complete %8.0f pairs/s  p50 %6.2f ms  p99 %6.2f ms | raw insert "
      "%8.0f/s | ratio %.2f (target >= 0.40)  [%s]\n",
      engine, threads, threads == 1 ? " " : "s", bench::median(ours_rates),
      bench::quantile(lat, 0.50), bench::quantile(lat, 0.99), bench::median(raw_rates),
      bench::median(ratios), settings);
}

void bench_engine(const std::string& target, const char* engine, int threads, const char* settings,
                  const std::function<void(int, long)>& raw_insert) {
  db::Options options;
  options.pool_size = threads;
  auto database = std::shared_ptr<db::Database>(db::Database::open(target, options));
  database->migrate(system_clock().now_ms());
  idempotency::Store store(database);
  const idempotency::Response response{201, {}, "{\"id\":\"0190a5d4-ac96-774b-bcce-b302099a8057\"}"};
  auto ours_op = [&](int, long seq) {
    const std::string key = "key-" + std::to_string(seq);
    const UnixMillis now = system_clock().now_ms();
    const auto begun = store.begin("m1", key, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", now);
    store.complete(begun.lease, response, now);
  };
  std::vector<Figures> ours, raw;
  run_round(threads, ours_op);  // warm-up
  for (int round = 0; round < 5; ++round) {
    ours.push_back(run_round(threads, ours_op));
    raw.push_back(run_round(threads, raw_insert));
  }
  report(engine, threads, settings, ours, raw);
}

}  // namespace

int main() {
  std::printf("== idempotency core: begin+complete pairs vs raw single-row INSERT ON CONFLICT DO NOTHING, "
              "medians of 5 alternating %lld ms rounds ==\n",
              static_cast<long long>(kRound.count()));
  const std::string dir = std::filesystem::temp_directory_path() / ("webhooks-bench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (int threads : {1, 8}) {
    migrate(dir + "/raw-" + std::to_string(threads) + ".db");
    RawSqlite raw(dir + "/raw-" + std::to_string(threads) + ".db");
    bench_engine(dir + "/ours-" + std::to_string(threads) + ".db", "SQLite", threads,
                 "WAL, synchronous=NORMAL, 1 connection each",
                 [&](int, long seq) { raw.insert(seq); });
  }
  std::filesystem::remove_all(dir);
  const char* url = std::getenv("WEBHOOKS_BENCH_POSTGRES_URL");
  if (!url || !*url) {
    std::printf("PostgreSQL: not measured (run through `make bench`, which starts a server)\n");
    return 1;
  }
  const std::string raw_url = create_database(url, "bench_raw");
  const std::string ours_url = create_database(url, "bench_ours");
  migrate(raw_url);
  for (int threads : {1, 8}) {
    RawPostgres raw(raw_url, threads);
    const std::string settings = "synchronous_commit=on, fsync=on, " + std::to_string(threads) +
                                 " connection" + (threads == 1 ? "" : "s") + " each";
    bench_engine(ours_url, "PostgreSQL", threads, settings.c_str(),
                 [&](int t, long seq) { raw.insert(t, seq); });
  }
  return 0;
}
