// PostgreSQL engine: a pool of libpq connections, statements prepared once per connection,
// broken connections reset on their next use.
#include <libpq-fe.h>

#include <condition_variable>
#include <mutex>
#include <unordered_map>

#include "detail/db_engines.h"
#include "webhooks/error.h"

namespace webhooks::db::detail {
namespace {

std::string without_password(const std::string& url) {
  const std::size_t scheme = url.find("://");
  const std::size_t at = url.find('@');
  if (scheme == std::string::npos || at == std::string::npos) return url;
  const std::size_t colon = url.find(':', scheme + 3);
  if (colon == std::string::npos || colon > at) return url;
  return url.substr(0, colon + 1) + "***" + url.substr(at);
}

struct Connection {
  PGconn* conn = nullptr;
  std::unordered_map<std::string, std::string> prepared;  // SQL -> statement name
  ~Connection() { PQfinish(conn); }
};

class PgTransaction final : public Transaction {
 public:
  explicit PgTransaction(Connection& c) : c_(c) {}
  Engine engine() const override { return Engine::postgres; }

  Rows exec(std::string_view sql, std::span<const Param> params) override {
    if (params.empty() && sql.find(';') != std::string_view::npos) {
      return collect(PQexec(c_.conn, std::string(sql).c_str()), sql);  // a script
    }
    std::string key(sql);
    auto it = c_.prepared.find(key);
    if (it == c_.prepared.end()) {
      const std::string name = "s" + std::to_string(c_.prepared.size());
      collect(PQprepare(c_.conn, name.c_str(), key.c_str(), 0, nullptr), sql);
      it = c_.prepared.emplace(std::move(key), name).first;
    }
    std::vector<std::string> storage(params.size());
    std::vector<const char*> values(params.size());
    std::vector<int> lengths(params.size());
    for (std::size_t i = 0; i < params.size(); ++i) {
      if (const auto* v = std::get_if<std::int64_t>(&params[i])) {
        storage[i] = std::to_string(*v);
        values[i] = storage[i].c_str();
      } else if (const auto* t = std::get_if<std::string_view>(&params[i])) {
        storage[i].assign(*t);
        values[i] = storage[i].c_str();
      } else {
        values[i] = nullptr;
      }
      lengths[i] = static_cast<int>(storage[i].size());
    }
    return collect(PQexecPrepared(c_.conn, it->second.c_str(), static_cast<int>(params.size()),
                                  values.data(), lengths.data(), nullptr, 0),
                   sql);
  }

  Rows collect(PGresult* res, std::string_view sql) {
    const ExecStatusType status = PQresultStatus(res);
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
      std::string message = res ? PQresultErrorMessage(res) : PQerrorMessage(c_.conn);
      while (!message.empty() && message.back() == '\n') message.pop_back();
      const char* field = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
      const std::string state = field ? field : "";  // copied: PQclear frees it
      PQclear(res);
      throw Error(ErrorCode::storage, "postgres: " + message + (state.empty() ? "" : " (SQLSTATE " + state + ")") +
                                          " in: " + std::string(sql.substr(0, 120)));
    }
    const int rows = PQntuples(res), columns = PQnfields(res);
    std::vector<std::optional<std::string>> cells;
    cells.reserve(static_cast<std::size_t>(rows) * static_cast<std::size_t>(columns));
    for (int r = 0; r < rows; ++r) {
      for (int c = 0; c < columns; ++c) {
        if (PQgetisnull(res, r, c)) {
          cells.emplace_back(std::nullopt);
        } else {
          cells.emplace_back(std::string(PQgetvalue(res, r, c), static_cast<std::size_t>(PQgetlength(res, r, c))));
        }
      }
    }
    const char* tuples = PQcmdTuples(res);
    const std::int64_t affected = tuples && *tuples ? std::stoll(tuples) : 0;
    PQclear(res);
    return Rows(static_cast<std::size_t>(columns), std::move(cells), affected);
  }

 private:
  Connection& c_;
};

class PgDatabase final : public Database {
 public:
  PgDatabase(const std::string& url, const Options& options)
      : url_(url), pool_size_(std::max(1, options.pool_size)),
        connect_timeout_s_(options.postgres_connect_timeout_s) {
    idle_.push_back(connect());  // fail early with a clear message
    ++open_;
  }

  Engine engine() const override { return Engine::postgres; }
  std::string describe() const override { return without_password(url_); }

  Rows exec(std::string_view sql, std::span<const Param> params) override {
    std::unique_ptr<Connection> c = acquire();
    try {
      PgTransaction tx(*c);
      Rows rows = tx.exec(sql, params);
      release(std::move(c), true);
      return rows;
    } catch (...) {
      const bool healthy = PQstatus(c->conn) == CONNECTION_OK;
      release(std::move(c), healthy);
      throw;
    }
  }

  void transact(const std::function<void(Transaction&)>& fn) override {
    std::unique_ptr<Connection> c = acquire();
    bool healthy = true;
    try {
      PgTransaction tx(*c);
      tx.exec("BEGIN", {});
      try {
        fn(tx);
      } catch (...) {
        if (PQstatus(c->conn) == CONNECTION_OK) {
          PQclear(PQexec(c->conn, "ROLLBACK"));
        }
        throw;
      }
      tx.exec("COMMIT", {});
    } catch (...) {
      healthy = PQstatus(c->conn) == CONNECTION_OK;
      release(std::move(c), healthy);
      throw;
    }
    release(std::move(c), true);
  }

 private:
  std::unique_ptr<Connection> connect() {
    const std::string conninfo = url_;
    const char* keys[] = {"dbname", "connect_timeout", "application_name", nullptr};
    const std::string timeout = std::to_string(connect_timeout_s_);
    const char* values[] = {conninfo.c_str(), timeout.c_str(), "webhooks", nullptr};
    auto c = std::make_unique<Connection>();
    c->conn = PQconnectdbParams(keys, values, 1);
    if (PQstatus(c->conn) != CONNECTION_OK) {
      std::string message = PQerrorMessage(c->conn);
      while (!message.empty() && message.back() == '\n') message.pop_back();
      throw Error(ErrorCode::storage, "cannot connect to PostgreSQL at " + describe() + ": " + message);
    }
    return c;
  }

  std::unique_ptr<Connection> acquire() {
    std::unique_lock lock(mutex_);
    available_.wait(lock, [&] { return !idle_.empty() || open_ < pool_size_; });
    if (!idle_.empty()) {
      auto c = std::move(idle_.back());
      idle_.pop_back();
      return c;
    }
    ++open_;
    lock.unlock();
    try {
      return connect();
    } catch (...) {
      std::lock_guard relock(mutex_);
      --open_;
      available_.notify_one();
      throw;
    }
  }

  void release(std::unique_ptr<Connection> c, bool healthy) {
    std::lock_guard lock(mutex_);
    if (healthy && PQstatus(c->conn) == CONNECTION_OK) {
      idle_.push_back(std::move(c));
    } else {
      --open_;  // a broken connection is dropped; the next acquire opens a fresh one
    }
    available_.notify_one();
  }

  std::string url_;
  int pool_size_;
  int connect_timeout_s_;
  std::mutex mutex_;
  std::condition_variable available_;
  std::vector<std::unique_ptr<Connection>> idle_;
  int open_ = 0;
};

}  // namespace

std::unique_ptr<Database> open_postgres(const std::string& url, const Options& options) {
  return std::make_unique<PgDatabase>(url, options);
}

}  // namespace webhooks::db::detail
