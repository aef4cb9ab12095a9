// The idempotency core, on SQLite and on PostgreSQL:
// - begin + complete pairs per second and their latency, with 1 and 8 threads, beside the same
//   engine's raw single-row INSERT ... ON CONFLICT DO NOTHING rate with the same settings,
//   alternating in the same run;
// - database bytes per record after 1,000,000 begin+complete pairs (`bench_idempotency size`
//   runs only this part, `bench_idempotency size uuid` with random UUIDv4 keys instead of key-N:
//   random keys fill the B-trees' pages less, and take minutes more to write; `bench_idempotency
//   pairs` only the first part).
// PostgreSQL comes from WEBHOOKS_BENCH_POSTGRES_URL (scripts/bench starts a durable server).
#include <libpq-fe.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <random>
#include <string>
#include <thread>

#include "bench_util.h"
#include "webhooks/clock.h"
#include "webhooks/fingerprint.h"
#include "webhooks/idempotency/schema.h"
#include "webhooks/idempotency/store.h"
#include "webhooks/uuid.h"

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

// The baseline inserts the same row into the same table (schema/idempotency/*/, with its
// indexes) of its own database, so both sides write the same pages: a 32-byte fingerprint, state 0
// (in_progress).
constexpr const char* kRawInsert =
    "INSERT INTO idempotency_records (scope, idempotency_key, fingerprint, state, lease_owner, "
    "lease_expires_at, attempts, created_at, expires_at) "
    "VALUES ($1, $2, $3, 0, 'token', $4, 1, $4, $4) "
    "ON CONFLICT (scope, idempotency_key) DO NOTHING";
constexpr char kRawFingerprint[] = "0123456789abcdef0123456789abcdef";  // 32 bytes
constexpr const char* kFingerprint =
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

void migrate(const std::string& target) {
  db::Database::open(target)->migrate({idempotency::schema()}, system_clock().now_ms());
}

// Raw SQLite: one connection (as ours), same pragmas, a prepared statement, autocommit.
class RawSqlite {
 public:
  explicit RawSqlite(const std::string& path) {
    sqlite3_open(path.c_str(), &db_);
    sqlite3_exec(db_, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", nullptr, nullptr,
                 nullptr);
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
    sqlite3_bind_blob(stmt_, 3, kRawFingerprint, 32, SQLITE_STATIC);
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
    const char* values[] = {"m1", key.c_str(), kRawFingerprint, at.c_str()};
    const int lengths[] = {0, 0, 32, 0};
    const int formats[] = {0, 0, 1, 0};  // the fingerprint as raw bytea
    PQclear(PQexecPrepared(conns_[static_cast<std::size_t>(thread)], "ins", 4, values, lengths,
                           formats, 0));
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

void report(const char* engine, int threads, const char* settings, double target,
            const std::vector<Figures>& ours, const std::vector<Figures>& raw) {
  std::vector<double> ours_rates, raw_rates, ratios, lat;
  for (std::size_t i = 0; i < ours.size(); ++i) {
    ours_rates.push_back(ours[i].rate);
    raw_rates.push_back(raw[i].rate);
    ratios.push_back(ours[i].rate / raw[i].rate);
    lat.insert(lat.end(), ours[i].latencies_ms.begin(), ours[i].latencies_ms.end());
  }
  std::printf(
      "%-10s %d thread%s  begin+complete %8.0f pairs/s  p50 %6.2f ms  p99 %6.2f ms | raw insert "
      "%8.0f/s | ratio %.2f (target >= %.2f)  [%s]\n",
      engine, threads, threads == 1 ? " " : "s", bench::median(ours_rates),
      bench::quantile(lat, 0.50), bench::quantile(lat, 0.99), bench::median(raw_rates),
      bench::median(ratios), target, settings);
}

void bench_engine(const std::string& target, const char* engine, int threads, const char* settings,
                  double ratio_target, const std::function<void(int, long)>& raw_insert) {
  db::Options options;
  options.pool_size = threads;
  auto database = std::shared_ptr<db::Database>(db::Database::open(target, options));
  database->migrate({idempotency::schema()}, system_clock().now_ms());
  idempotency::Store store(database);
  const idempotency::Response response{
      201, {}, "{\"id\":\"0190a5d4-ac96-774b-bcce-b302099a8057\"}"};
  auto ours_op = [&](int, long seq) {
    const std::string key = "key-" + std::to_string(seq);
    const UnixMillis now = system_clock().now_ms();
    const auto begun = store.begin("m1", key, kFingerprint, now);
    store.complete(begun.lease, response, now);
  };
  std::vector<Figures> ours, raw;
  run_round(threads, ours_op);  // warm-up
  for (int round = 0; round < 5; ++round) {
    ours.push_back(run_round(threads, ours_op));
    raw.push_back(run_round(threads, raw_insert));
  }
  report(engine, threads, settings, ratio_target, ours, raw);
}

// ---- Bytes per record ----------------------------------------------------------------------

constexpr long kFillPairs = 1'000'000;
constexpr int kFillBatch = 1'000;  // pairs per transaction
// A fill that has not reached kFillPairs by then stops; the figure is then per record written.
constexpr auto kFillLimit = std::chrono::seconds(240);

enum class KeyShape { sequence, uuid_v4 };

const char* describe(KeyShape shape) {
  return shape == KeyShape::sequence ? "keys key-N (5-11 chars, as above)"
                                     : "keys random UUIDv4 (36 chars)";
}

std::string make_key(KeyShape shape, long seq, std::mt19937_64& random) {
  if (shape == KeyShape::sequence) return "key-" + std::to_string(seq);
  UuidBytes bytes;
  for (std::size_t i = 0; i < bytes.size(); i += 8) {
    const std::uint64_t r = random();
    std::memcpy(bytes.data() + i, &r, 8);
  }
  bytes[6] = static_cast<std::uint8_t>((bytes[6] & 0x0F) | 0x40);  // version 4
  bytes[8] = static_cast<std::uint8_t>((bytes[8] & 0x3F) | 0x80);  // variant 10
  return uuid_to_string(bytes);
}

// kFillPairs begin+complete pairs with distinct keys and fingerprints (the SHA-256 of the key)
// and the throughput rounds' answer, kFillBatch pairs per transaction (Store::begin(tx) and
// complete(tx)), on `threads` threads. Returns the pairs done and the seconds taken.
std::pair<long, double> fill(const std::shared_ptr<db::Database>& database, int threads,
                             KeyShape shape) {
  idempotency::Store store(database);
  const idempotency::Response response{
      201, {}, "{\"id\":\"0190a5d4-ac96-774b-bcce-b302099a8057\"}"};
  std::atomic<long> next{0};
  const auto start = steady::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::mt19937_64 random(static_cast<std::uint64_t>(t) * 7919 + 17);
      while (steady::now() - start < kFillLimit) {
        const long first = next.fetch_add(kFillBatch);
        if (first >= kFillPairs) break;
        database->transact([&](db::Transaction& tx) {
          for (long seq = first; seq < std::min(first + kFillBatch, kFillPairs); ++seq) {
            const std::string key = make_key(shape, seq, random);
            const UnixMillis now = system_clock().now_ms();
            const auto begun = store.begin(tx, "m1", key, sha256_hex(key), now, "POST /orders");
            store.complete(tx, begun.lease, response, now);
          }
        });
      }
    });
  }
  for (auto& th : pool) th.join();
  return {std::min(next.load(), kFillPairs),
          std::chrono::duration<double>(steady::now() - start).count()};
}

std::uintmax_t file_bytes(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return ec ? 0 : size;
}

// The SQLite file with its WAL, after a checkpoint that empties the WAL, minus the same file
// freshly migrated (the empty table's and the bookkeeping's pages).
void size_sqlite(const std::string& dir, KeyShape shape) {
  const std::string path = dir + "/size-" + std::to_string(static_cast<int>(shape)) + ".db";
  auto database = std::shared_ptr<db::Database>(db::Database::open(path));
  database->migrate({idempotency::schema()}, system_clock().now_ms());
  database->exec("PRAGMA wal_checkpoint(TRUNCATE)");
  const std::uintmax_t empty = file_bytes(path) + file_bytes(path + "-wal");
  const auto [records, seconds] = fill(database, 1, shape);
  database->exec("PRAGMA wal_checkpoint(TRUNCATE)");
  const std::uintmax_t full = file_bytes(path) + file_bytes(path + "-wal");
  const double per_record = static_cast<double>(full - empty) / static_cast<double>(records);
  std::printf(
      "SQLite     %7ld records  %6.1f bytes/record (target <= 200)  file incl. WAL after "
      "checkpoint %.1f MB  [%s; filled in %.0f s, %d pairs per transaction]\n",
      records, per_record, static_cast<double>(full) / 1e6, describe(shape), seconds, kFillBatch);
}

std::int64_t pg_number(PGconn* c, const char* sql) {
  PGresult* res = PQexec(c, sql);
  const std::int64_t value =
      PQresultStatus(res) == PGRES_TUPLES_OK ? std::atoll(PQgetvalue(res, 0, 0)) : -1;
  PQclear(res);
  return value;
}

// pg_total_relation_size('idempotency_records'): heap, TOAST and indexes, as filled (with the
// dead row versions the completions left: an UPDATE of indexed columns is never HOT), and after
// VACUUM FULL (live rows only).
void size_postgres(const std::string& url, KeyShape shape) {
  const std::string target = create_database(url, "bench_size");
  db::Options options;
  options.pool_size = 4;
  auto database = std::shared_ptr<db::Database>(db::Database::open(target, options));
  database->migrate({idempotency::schema()}, system_clock().now_ms());
  const auto [records, seconds] = fill(database, options.pool_size, shape);
  PGconn* c = PQconnectdb(target.c_str());
  const std::int64_t filled = pg_number(c, "SELECT pg_total_relation_size('idempotency_records')");
  PQclear(PQexec(c, "VACUUM FULL idempotency_records"));
  const std::int64_t live = pg_number(c, "SELECT pg_total_relation_size('idempotency_records')");
  PQfinish(c);
  std::printf(
      "PostgreSQL %7ld records  %6.1f bytes/record as filled, %6.1f after VACUUM FULL  "
      "(pg_total_relation_size incl. indexes)  [%s; filled in %.0f s, %d pairs per "
      "transaction, %d connections]\n",
      records, static_cast<double>(filled) / static_cast<double>(records),
      static_cast<double>(live) / static_cast<double>(records), describe(shape), seconds,
      kFillBatch, options.pool_size);
}

void bench_size(const std::string& dir, const char* url, const std::vector<KeyShape>& shapes) {
  std::printf(
      "== idempotency core: database bytes per record after %ld begin+complete pairs "
      "(batched %d per transaction to fill fast; the point is the size on disk) ==\n",
      kFillPairs, kFillBatch);
  for (KeyShape shape : shapes) size_sqlite(dir, shape);
  if (!url) {
    std::printf("PostgreSQL: not measured (run through `make bench`, which starts a server)\n");
    return;
  }
  for (KeyShape shape : shapes) size_postgres(url, shape);
}

}  // namespace

int main(int argc, char** argv) {
  const char* url = std::getenv("WEBHOOKS_BENCH_POSTGRES_URL");
  if (url && !*url) url = nullptr;
  const std::string dir =
      std::filesystem::temp_directory_path() / ("webhooks-bench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  if (argc > 1 && std::strcmp(argv[1], "size") == 0) {
    const bool uuid = argc > 2 && std::strcmp(argv[2], "uuid") == 0;
    bench_size(dir, url, {uuid ? KeyShape::uuid_v4 : KeyShape::sequence});
    std::filesystem::remove_all(dir);
    return url ? 0 : 1;
  }
  const bool pairs_only = argc > 1 && std::strcmp(argv[1], "pairs") == 0;
  std::printf(
      "== idempotency core: begin+complete pairs vs raw single-row INSERT ON CONFLICT DO NOTHING, "
      "medians of 5 alternating %lld ms rounds ==\n",
      static_cast<long long>(kRound.count()));
  for (int threads : {1, 8}) {
    migrate(dir + "/raw-" + std::to_string(threads) + ".db");
    RawSqlite raw(dir + "/raw-" + std::to_string(threads) + ".db");
    bench_engine(dir + "/ours-" + std::to_string(threads) + ".db", "SQLite", threads,
                 "WAL, synchronous=NORMAL, 1 connection each", 0.56,
                 [&](int, long seq) { raw.insert(seq); });
  }
  if (!url) {
    std::printf("PostgreSQL: not measured (run through `make bench`, which starts a server)\n");
    if (!pairs_only) {
      std::printf("\n");
      bench_size(dir, url, {KeyShape::sequence});
    }
    std::filesystem::remove_all(dir);
    return 1;
  }
  const std::string raw_url = create_database(url, "bench_raw");
  const std::string ours_url = create_database(url, "bench_ours");
  migrate(raw_url);
  for (int threads : {1, 8}) {
    RawPostgres raw(raw_url, threads);
    const std::string settings = "synchronous_commit=on, fsync=on, " + std::to_string(threads) +
                                 " connection" + (threads == 1 ? "" : "s") + " each";
    bench_engine(ours_url, "PostgreSQL", threads, settings.c_str(), 0.46,
                 [&](int t, long seq) { raw.insert(t, seq); });
  }
  if (!pairs_only) {
    std::printf("\n");
    bench_size(dir, url, {KeyShape::sequence});
  }
  std::filesystem::remove_all(dir);
  return 0;
}
