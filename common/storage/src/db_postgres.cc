// PostgreSQL engine: a pool of libpq connections, statements prepared once per connection.
// A connection that broke (the server closed it, e.g. pg_terminate_backend or a restart) is
// dropped, never handed out again: an idle one is checked when it is taken from the pool (the
// server's FATAL or end of stream is already waiting on its socket), and one whose statement
// failed with a connection error is not put back.
#include <libpq-fe.h>
#include <poll.h>

#include <charconv>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "detail/db_engines.h"
#include "detail/fiber.h"
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
  // SQL -> statement name, looked up by the caller's std::string_view without a copy.
  std::unordered_map<std::string, std::string, TextHash, std::equal_to<>> prepared;
  // The server said it closes the connection (a FATAL message), or a statement failed with a
  // connection error: never reused.
  bool broken = false;
  ~Connection() { PQfinish(conn); }
};

// Messages the server sends outside a statement's result. A FATAL one (57P01 "terminating
// connection due to administrator command", a shutdown) precedes the end of the connection;
// others (NOTICEs such as "relation already exists, skipping") are dropped instead of printed.
void on_notice(void* arg, const PGresult* res) {
  const char* severity = PQresultErrorField(res, PG_DIAG_SEVERITY_NONLOCALIZED);
  if (severity && (std::strcmp(severity, "FATAL") == 0 || std::strcmp(severity, "PANIC") == 0)) {
    static_cast<Connection*>(arg)->broken = true;
  }
}

// SQLSTATEs after which the connection is gone: class 08 (connection exception) and the
// operator-intervention ones that end the session (57P01 admin shutdown, 57P02 crash shutdown,
// 57P03 cannot connect now).
bool ends_connection(const std::string& state) {
  return state.starts_with("08") || state == "57P01" || state == "57P02" || state == "57P03";
}

// Whether a connection taken from the pool can still run a statement: not marked broken, and
// nothing unread on its socket says otherwise (an idle connection is sent nothing but a
// FATAL before the server closes it, or a notice).
bool usable(Connection& c) {
  if (c.broken || PQstatus(c.conn) != CONNECTION_OK) return false;
  pollfd readable{PQsocket(c.conn), POLLIN, 0};
  const int ready = ::poll(&readable, 1, 0);
  if (ready < 0) return false;
  if (ready == 0) return true;
  if (PQconsumeInput(c.conn) == 0) return false;  // end of stream: libpq marks it bad
  while (PGnotify* n = PQnotifies(c.conn)) PQfreemem(n);
  return !c.broken && PQstatus(c.conn) == CONNECTION_OK;
}

// The type OID of bytea (pg_type.h), whose cells arrive in text format: \x and hex digits.
constexpr Oid kByteaOid = 17;

// A bytea cell's raw bytes; std::nullopt when libpq cannot decode it (out of memory).
std::optional<std::string> unescape_bytea(const PGresult* res, int row, int col) {
  std::size_t size = 0;
  unsigned char* raw =
      PQunescapeBytea(reinterpret_cast<const unsigned char*>(PQgetvalue(res, row, col)), &size);
  if (!raw) return std::nullopt;
  std::string bytes(reinterpret_cast<const char*>(raw), size);
  PQfreemem(raw);
  return bytes;
}

class PgTransaction final : public Transaction {
 public:
  explicit PgTransaction(Connection& c) : c_(c) {}
  Engine engine() const override { return Engine::postgres; }

  Rows exec(std::string_view sql, std::span<const Param> params) override {
    if (params.empty() && sql.find(';') != std::string_view::npos) {
      return collect(PQexec(c_.conn, std::string(sql).c_str()), sql);  // a script
    }
    auto it = c_.prepared.find(sql);
    if (it == c_.prepared.end()) {
      std::string key(sql);
      const std::string name = "s" + std::to_string(c_.prepared.size());
      collect(PQprepare(c_.conn, name.c_str(), key.c_str(), 0, nullptr), sql);
      it = c_.prepared.emplace(std::move(key), name).first;
    }
    // Text parameters must end in NUL: every value is copied, one after another, into one
    // buffer reserved up front (so the pointers into it stay valid): one allocation, not one
    // string per parameter. NULL is a null pointer.
    std::size_t bytes = 0;
    for (const Param& p : params) {
      const auto* t = std::get_if<std::string_view>(&p);
      const auto* b = std::get_if<Bytes>(&p);
      bytes += (t ? t->size() : b ? b->data.size() : 20) + 1;  // an int64: at most 20 digits
    }
    std::string buffer;
    buffer.reserve(bytes);
    std::vector<const char*> values(params.size());
    std::vector<int> lengths(params.size());
    std::vector<int> formats(params.size(), 0);  // text, but bytes in binary format (raw)
    for (std::size_t i = 0; i < params.size(); ++i) {
      const std::size_t start = buffer.size();
      if (const auto* v = std::get_if<std::int64_t>(&params[i])) {
        char digits[24];
        buffer.append(digits, std::to_chars(digits, digits + sizeof digits, *v).ptr);
      } else if (const auto* t = std::get_if<std::string_view>(&params[i])) {
        buffer.append(*t);
      } else if (const auto* b = std::get_if<Bytes>(&params[i])) {
        buffer.append(b->data);
        formats[i] = 1;
      } else {
        continue;  // NULL: values[i] stays nullptr, lengths[i] 0
      }
      values[i] = buffer.data() + start;
      lengths[i] = static_cast<int>(buffer.size() - start);
      buffer.push_back('\0');
    }
    return collect(PQexecPrepared(c_.conn, it->second.c_str(), static_cast<int>(params.size()),
                                  values.data(), lengths.data(), formats.data(), 0),
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
      if (ends_connection(state) || PQstatus(c_.conn) != CONNECTION_OK) c_.broken = true;
      throw Error(ErrorCode::storage, "postgres: " + message +
                                          (state.empty() ? "" : " (SQLSTATE " + state + ")") +
                                          " in: " + std::string(sql.substr(0, 120)));
    }
    const int rows = PQntuples(res), columns = PQnfields(res);
    std::vector<std::optional<std::string>> cells;
    cells.reserve(static_cast<std::size_t>(rows) * static_cast<std::size_t>(columns));
    for (int r = 0; r < rows; ++r) {
      for (int c = 0; c < columns; ++c) {
        if (PQgetisnull(res, r, c)) {
          cells.emplace_back(std::nullopt);
        } else if (PQftype(res, c) == kByteaOid) {
          std::optional<std::string> bytes = unescape_bytea(res, r, c);
          if (!bytes) {
            PQclear(res);
            throw Error(ErrorCode::storage, "postgres: cannot decode a bytea value in: " +
                                                std::string(sql.substr(0, 120)));
          }
          cells.emplace_back(std::move(bytes));
        } else {
          cells.emplace_back(
              std::string(PQgetvalue(res, r, c), static_cast<std::size_t>(PQgetlength(res, r, c))));
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
      : url_(url),
        pool_size_(std::max(1, options.pool_size)),
        connect_timeout_s_(options.postgres_connect_timeout_s) {
    idle_.push_back(connect());  // fail early with a clear message
    ++open_;
  }

  Engine engine() const override { return Engine::postgres; }
  std::string describe() const override { return without_password(url_); }

  Rows exec(std::string_view sql, std::span<const Param> params) override {
    return run(sql, params, 0);
  }

  // A read has no effect, so one that failed because its connection was gone runs again on
  // another (a fresh one once the pool's idle ones are used up).
  Rows read(std::string_view sql, std::span<const Param> params) override {
    return run(sql, params, pool_size_);
  }

  void transact(const std::function<void(Transaction&)>& fn) override {
    const fibers::NoSuspend holding_a_connection;  // another fiber of this thread may want it
    std::unique_ptr<Connection> c = begin();
    try {
      PgTransaction tx(*c);
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
      release(std::move(c));
      throw;
    }
    release(std::move(c));
  }

 private:
  // Runs one statement in its own transaction on a pooled connection; when it failed because its
  // connection broke, runs it again on another, at most `reruns` times.
  Rows run(std::string_view sql, std::span<const Param> params, int reruns) {
    for (int tries = 0;; ++tries) {
      std::unique_ptr<Connection> c = acquire();
      try {
        PgTransaction tx(*c);
        Rows rows = tx.exec(sql, params);
        release(std::move(c));
        return rows;
      } catch (...) {
        const bool rerun = c->broken && tries < reruns;
        release(std::move(c));
        if (!rerun) throw;
      }
    }
  }

  // A pooled connection with a transaction begun on it. A BEGIN that failed because the
  // connection was gone changed nothing, so it is tried again on another (at most the pool's
  // size of times, the last ones on fresh connections).
  std::unique_ptr<Connection> begin() {
    for (int tries = 0;; ++tries) {
      std::unique_ptr<Connection> c = acquire();
      try {
        PgTransaction(*c).exec("BEGIN", {});
        return c;
      } catch (...) {
        const bool retry = c->broken && tries < pool_size_;
        release(std::move(c));
        if (!retry) throw;
      }
    }
  }

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
      throw Error(ErrorCode::storage,
                  "cannot connect to PostgreSQL at " + describe() + ": " + message);
    }
    PQsetNoticeReceiver(c->conn, on_notice, c.get());
    return c;
  }

  std::unique_ptr<Connection> acquire() {
    std::unique_lock lock(mutex_);
    available_.wait(lock, [&] { return !idle_.empty() || open_ < pool_size_; });
    while (!idle_.empty()) {
      auto c = std::move(idle_.back());
      idle_.pop_back();
      if (usable(*c)) return c;
      --open_;  // closed by the server while idle: dropped, a fresh one replaces it
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

  // Puts `c` back in the pool, or drops it (the next acquire opens a fresh one) if it broke.
  void release(std::unique_ptr<Connection> c) {
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
