// PostgreSQL engine: a pool of libpq connections, statements prepared once per connection, every
// wait bounded (db::Options: postgres_statement_timeout_ms, postgres_pool_wait_ms,
// postgres_connect_timeout_s; the waits themselves: detail/pg_connection.h). A connection that
// broke (the server closed it, e.g. pg_terminate_backend or a restart) or stopped answering is
// dropped, never handed out again: an idle one is checked when it is taken from the pool (the
// server's FATAL or end of stream is already waiting on its socket), and one whose statement
// failed with a connection error or timed out is not put back. A call made on a fiber runs on a
// thread of fibers::run_on_thread, so that its waits hold no fiber worker thread.
#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <optional>

#include "detail/db_engines.h"
#include "detail/fiber.h"
#include "detail/pg_connection.h"
#include "webhooks/error.h"

namespace webhooks::db::detail {
namespace {

using std::chrono::milliseconds;

std::string without_password(const std::string& url) {
  const std::size_t scheme = url.find("://");
  const std::size_t at = url.find('@');
  if (scheme == std::string::npos || at == std::string::npos) return url;
  const std::size_t colon = url.find(':', scheme + 3);
  if (colon == std::string::npos || colon > at) return url;
  return url.substr(0, colon + 1) + "***" + url.substr(at);
}

// now + `ms`, or no deadline for 0.
PgClock::time_point after(PgClock::time_point now, std::int64_t ms) {
  return ms > 0 ? now + milliseconds(ms) : PgClock::time_point::max();
}

// `work()` on a thread of fibers::run_on_thread when called on a fiber that may suspend (its
// worker thread serves other requests while the database is waited for), else right here.
Rows off_fiber(const std::function<Rows()>& work) {
  if (!fibers::can_suspend()) return work();
  std::optional<Rows> rows;
  fibers::run_on_thread([&] { rows.emplace(work()); });
  return std::move(*rows);
}

class PgTransaction final : public Transaction {
 public:
  explicit PgTransaction(PgConnection& c) : c_(c), bound_ms_(c.statement_timeout_ms) {}
  // The connection's client-side bound is back once the transaction ends (SET LOCAL ends with it).
  ~PgTransaction() override { c_.statement_timeout_ms = bound_ms_; }
  Engine engine() const override { return Engine::postgres; }
  Rows exec(std::string_view sql, std::span<const Param> params) override {
    Rows rows = pg_exec(c_, sql, params);
    if (sql == kUnboundedStatements) c_.statement_timeout_ms = 0;
    return rows;
  }

 private:
  PgConnection& c_;
  const int bound_ms_;
};

class PgDatabase final : public Database {
 public:
  PgDatabase(const std::string& url, const Options& options)
      : url_(url),
        pool_size_(std::max(1, options.pool_size)),
        connect_timeout_ms_(std::int64_t{options.postgres_connect_timeout_s} * 1000),
        statement_timeout_ms_(options.postgres_statement_timeout_ms),
        pool_wait_ms_(options.postgres_pool_wait_ms) {
    if (options.postgres_connect_timeout_s < 0 || statement_timeout_ms_ < 0 || pool_wait_ms_ < 0) {
      throw Error(ErrorCode::invalid_argument,
                  "the PostgreSQL connect, statement and pool-wait timeouts must be 0 or more");
    }
    // Fail early with a clear message.
    idle_.push_back(pg_connect(url_, describe(), after(PgClock::now(), connect_timeout_ms_),
                               statement_timeout_ms_));
    ++open_;
  }

  Engine engine() const override { return Engine::postgres; }
  std::string describe() const override { return without_password(url_); }

  Rows exec(std::string_view sql, std::span<const Param> params) override {
    return off_fiber([&] { return run(sql, params, 0, PgClock::time_point::max()); });
  }

  // A read has no effect, so one that failed because its connection was gone runs again on
  // another (a fresh one once the pool's idle ones are used up).
  Rows read(std::string_view sql, std::span<const Param> params) override {
    return off_fiber([&] { return run(sql, params, pool_size_, PgClock::time_point::max()); });
  }

  void ping(milliseconds timeout) override {
    off_fiber([&] {
      const PgClock::time_point deadline = PgClock::now() + std::max(timeout, milliseconds(1));
      return run("SELECT 1", {}, pool_size_, deadline);
    });
  }

  void transact(const std::function<void(Transaction&)>& fn) override {
    fibers::run_on_thread([&] { transact_here(fn); });
  }

 private:
  void transact_here(const std::function<void(Transaction&)>& fn) {
    const fibers::NoSuspend holding_a_connection;  // another fiber of this thread may want it
    std::unique_ptr<PgConnection> c = begin();
    try {
      PgTransaction tx(*c);
      try {
        fn(tx);
      } catch (...) {
        if (!c->broken && PQstatus(c->conn) == CONNECTION_OK) {
          try {
            pg_exec(*c, "ROLLBACK", {});
          } catch (const Error&) {  // c is broken, or not idle: dropped by release
          }
        }
        throw;
      }
      tx.exec("COMMIT", {});
    } catch (...) {
      release(std::move(c));
      throw;
    }
    release(std::move(c));
  }

  // Runs one statement in its own transaction on a pooled connection, the whole by `deadline`
  // (besides the pool's and the statement's own bounds); when it failed because its connection
  // broke (not because it stalled), runs it again on another, at most `reruns` times.
  Rows run(std::string_view sql, std::span<const Param> params, int reruns,
           PgClock::time_point deadline) {
    for (int tries = 0;; ++tries) {
      std::unique_ptr<PgConnection> c = acquire(deadline);
      try {
        Rows rows = pg_exec(*c, sql, params, deadline);
        release(std::move(c));
        return rows;
      } catch (...) {
        const bool rerun = c->broken && !c->stalled && tries < reruns;
        release(std::move(c));
        if (!rerun) throw;
      }
    }
  }

  // A pooled connection with a transaction begun on it. A BEGIN that failed because the
  // connection was gone changed nothing, so it is tried again on another (at most the pool's
  // size of times, the last ones on fresh connections); one that got no answer is not.
  std::unique_ptr<PgConnection> begin() {
    for (int tries = 0;; ++tries) {
      std::unique_ptr<PgConnection> c = acquire(PgClock::time_point::max());
      try {
        pg_exec(*c, "BEGIN", {});
        return c;
      } catch (...) {
        const bool retry = c->broken && !c->stalled && tries < pool_size_;
        release(std::move(c));
        if (!retry) throw;
      }
    }
  }

  // An idle connection, or a new one when fewer than pool_size_ are open: waited for at most
  // pool_wait_ms_ (and until `deadline`), a new one's opening included.
  std::unique_ptr<PgConnection> acquire(PgClock::time_point deadline) {
    const PgClock::time_point start = PgClock::now();
    deadline = std::min(deadline, after(start, pool_wait_ms_));
    std::unique_lock lock(mutex_);
    const auto free = [&] { return !idle_.empty() || open_ < pool_size_; };
    if (deadline == PgClock::time_point::max()) {
      available_.wait(lock, free);
    } else if (!available_.wait_until(lock, deadline, free)) {
      throw Error(ErrorCode::storage,
                  "postgres: none of the pool's " + std::to_string(pool_size_) +
                      " connections came free within " +
                      std::to_string(std::chrono::ceil<milliseconds>(deadline - start).count()) +
                      " ms (the server may have stopped answering)");
    }
    while (!idle_.empty()) {
      auto c = std::move(idle_.back());
      idle_.pop_back();
      if (pg_usable(*c)) return c;
      --open_;  // closed by the server while idle: dropped, a fresh one replaces it
    }
    ++open_;
    lock.unlock();
    try {
      return pg_connect(url_, describe(),
                        std::min(deadline, after(PgClock::now(), connect_timeout_ms_)),
                        statement_timeout_ms_);
    } catch (...) {
      std::lock_guard relock(mutex_);
      --open_;
      available_.notify_one();
      throw;
    }
  }

  // Puts `c` back in the pool, or drops it (the next acquire opens a fresh one) if it broke.
  void release(std::unique_ptr<PgConnection> c) {
    const bool healthy = !c->broken && PQstatus(c->conn) == CONNECTION_OK &&
                         PQtransactionStatus(c->conn) == PQTRANS_IDLE;
    if (!healthy) c.reset();  // closed outside the lock
    std::lock_guard lock(mutex_);
    if (healthy) {
      idle_.push_back(std::move(c));
    } else {
      --open_;
    }
    available_.notify_one();
  }

  std::string url_;
  int pool_size_;
  std::int64_t connect_timeout_ms_;
  int statement_timeout_ms_;
  int pool_wait_ms_;
  std::mutex mutex_;
  std::condition_variable available_;
  std::vector<std::unique_ptr<PgConnection>> idle_;
  int open_ = 0;
};

}  // namespace

std::unique_ptr<Database> open_postgres(const std::string& url, const Options& options) {
  return std::make_unique<PgDatabase>(url, options);
}

}  // namespace webhooks::db::detail
