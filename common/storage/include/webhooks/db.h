// One database interface, two engines: SQLite (embedded default, a file in WAL mode) and
// PostgreSQL (libpq, for several processes or machines on one database). Stores in this toolkit
// (idempotency records, the publisher's queue, the outbox) are written against it, with their
// statements as named constants per engine, and each creates its tables with its own migrations
// (Component, Database::migrate). A store never reads the clock: callers pass `now`.
//
// SQL uses PostgreSQL-style placeholders $1..$n on both engines. Values are NULL, 64-bit integers,
// text (which may hold arbitrary bytes on SQLite; UTF-8 on PostgreSQL) or bytes (Bytes: a BLOB
// column on SQLite, bytea on PostgreSQL). Times are stored as integer Unix milliseconds.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace webhooks::db {

enum class Engine { sqlite, postgres };

// Raw bytes, any length (0 included), bound as a BLOB on SQLite and as bytea (binary format) on
// PostgreSQL; `data` is not copied and must outlive the call it is passed to.
struct Bytes {
  std::string_view data;
};

// A statement parameter: NULL, an integer, text, or bytes.
using Param = std::variant<std::nullptr_t, std::int64_t, std::string_view, Bytes>;

// `text` as a parameter, NULL when it is empty (an optional text column). `text` must outlive
// the call the parameter is passed to.
inline Param text_or_null(std::string_view text) {
  return text.empty() ? Param(nullptr) : Param(text);
}

// The rows a statement returned (all cells kept as strings, NULL as std::nullopt), and the number
// of rows it changed. A cell holds the value's text; a BLOB (SQLite) or bytea (PostgreSQL) cell
// holds its raw bytes, the same on both engines.
class Rows {
 public:
  Rows() = default;
  Rows(std::size_t columns, std::vector<std::optional<std::string>> cells, std::int64_t affected)
      : columns_(columns), cells_(std::move(cells)), affected_(affected) {}

  std::size_t size() const { return columns_ ? cells_.size() / columns_ : 0; }
  bool empty() const { return size() == 0; }
  // Rows changed by an INSERT, UPDATE or DELETE.
  std::int64_t affected() const { return affected_; }
  bool is_null(std::size_t row, std::size_t col) const { return !cell(row, col).has_value(); }
  // The cell as text (raw bytes for a BLOB/bytea cell); "" for NULL. Throws Error(storage) for
  // an index out of range.
  const std::string& text(std::size_t row, std::size_t col) const;
  // The cell as an integer; 0 for NULL. Throws Error(storage) if it is not an integer.
  std::int64_t integer(std::size_t row, std::size_t col) const;

 private:
  const std::optional<std::string>& cell(std::size_t row, std::size_t col) const;
  std::size_t columns_ = 0;
  std::vector<std::optional<std::string>> cells_;
  std::int64_t affected_ = 0;
};

// What runs SQL: a Transaction (each statement inside it) and a Database (each statement on its
// own, in autocommit mode). $1..$n placeholders on both engines; Binary values go as Bytes.
class Statements {
 public:
  virtual ~Statements() = default;
  virtual Engine engine() const = 0;

  // Runs one statement. In a Transaction, without parameters the text may hold several
  // statements separated by ';' (then the rows are those of the last one), and a failure rolls
  // the transaction back; on a Database it is one round trip and one commit. Throws
  // webhooks::Error(ErrorCode::storage) with the engine's message (and SQLSTATE on PostgreSQL) on
  // any failure. On PostgreSQL, a text parameter holding a NUL byte (its text type cannot hold
  // one) throws Error(invalid_argument) before anything is sent; SQLite stores it as given.
  virtual Rows exec(std::string_view sql, std::span<const Param> params) = 0;
  Rows exec(std::string_view sql, std::initializer_list<Param> params = {}) {
    return exec(sql, std::span<const Param>(params.begin(), params.size()));
  }

  // One statement that only reads (a SELECT). On a Database, in autocommit mode: it sees what was
  // committed when it starts; on SQLite it runs on one of a few read connections of its own, so
  // it does not wait for a write or transaction in progress (WAL mode; an in-memory database has
  // one connection and runs it as exec does), and a statement that writes fails there (PRAGMA
  // query_only). Elsewhere (a Transaction, PostgreSQL) it is exec. Throws Error(storage).
  virtual Rows read(std::string_view sql, std::span<const Param> params) {
    return exec(sql, params);
  }
  Rows read(std::string_view sql, std::initializer_list<Param> params = {}) {
    return read(sql, std::span<const Param>(params.begin(), params.size()));
  }
};

// An open transaction on one connection. Obtained only through Database::transact; not
// thread-safe; never outlives the callback it was passed to.
class Transaction : public Statements {};

// The values Options::sqlite_synchronous accepts (compared case-insensitively).
inline constexpr std::string_view kSqliteSynchronousValues[] = {"NORMAL", "FULL", "EXTRA"};

struct Options {
  // Connections kept open. SQLite serialises writers in-process anyway; PostgreSQL uses them all.
  int pool_size = 8;
  // SQLite PRAGMA synchronous, one of kSqliteSynchronousValues (any case): "NORMAL" (default;
  // durable across process crashes, a power loss may lose the last transactions), "FULL" (also
  // across power loss), "EXTRA" (FULL, and the directory is synced too). Anything else, "OFF"
  // included (it can lose committed transactions), makes open() throw Error(invalid_argument).
  std::string sqlite_synchronous = "NORMAL";
  // How long a SQLite connection waits for a lock held by another process (milliseconds).
  int sqlite_busy_timeout_ms = 10'000;
  // SQLite WAL checkpoints off the commit path. By default SQLite checkpoints inside the commit
  // that takes the WAL past 1,000 pages, and that commit (and every writer queued behind it)
  // waits for the copy and two fsyncs. When true, such a commit instead wakes a thread that
  // checkpoints on a second connection (passive: writers go on), with the same durability (the
  // WAL is synced before the copy, the database file after it); only a WAL past 8,000 pages is
  // checkpointed by the committing call itself, so the WAL stays bounded under any load. It
  // halved the publisher's p99 latencies in bench_publisher and did not help the receiver
  // (docs/operations.md, docs/receiver.md). Ignored for PostgreSQL and in-memory databases.
  bool sqlite_background_checkpoint = false;
  // PostgreSQL: how long opening one connection may take (seconds; 0: no bound). A connection
  // opened for a call is also bounded by postgres_pool_wait_ms.
  int postgres_connect_timeout_s = 10;
  // PostgreSQL: how long one statement may take (milliseconds; 0: no bound). Set as each
  // connection's statement_timeout, so the server cancels a statement that runs longer (SQLSTATE
  // 57014; the connection is kept). The client also stops waiting for the answer 250 ms after
  // that (a server that stopped answering, e.g. a frozen host, cancels nothing): the connection
  // is dropped, and whether the statement ran is unknown, as after a broken connection. Either
  // way the call throws Error(storage). It bounds each statement of a transaction (a transaction
  // of n statements may take n times as long). Migrations (migrate()) are not bounded: one may
  // rewrite a large table, or wait for another process's. Default 5,000 (5 s).
  int postgres_statement_timeout_ms = 5'000;
  // PostgreSQL: how long a call waits for a pooled connection (milliseconds; 0: no bound): for
  // one to come free when all pool_size are in use, or for a new one to open. Past it the call
  // throws Error(storage). Default 3,000 (3 s).
  int postgres_pool_wait_ms = 3'000;
};

// One migration of a component: its version (1..n within the component), its title (the file
// name without .sql, e.g. "0001_records") and its SQL (several statements).
struct Migration {
  int version;
  std::string_view name;
  std::string_view sql;
};

// A component's tables, created and changed only by its own migrations: `name` is its key in
// webhooks_migrations ("idempotency", "outbox", "publisher"); each engine's migrations are the
// files schema/<name>/<engine>/NNNN_title.sql compiled into the component's library
// (cmake/EmbedSchema.cmake), versions 1..n in order. Obtained from the component, e.g.
// idempotency::schema() (webhooks/idempotency/schema.h).
struct Component {
  std::string_view name;
  std::span<const Migration> sqlite;
  std::span<const Migration> postgres;

  std::span<const Migration> migrations(Engine engine) const {
    return engine == Engine::sqlite ? sqlite : postgres;
  }
};

class Database : public Statements {
 public:
  // Opens "postgres://…" or "postgresql://…" URLs with libpq, anything else as a SQLite file path
  // (created if absent). Throws Error(ErrorCode::storage) naming the target if it cannot connect,
  // Error(ErrorCode::invalid_argument) for a SQLite target with an unknown sqlite_synchronous.
  // Thread-safe: one Database is shared by all threads of a process.
  // PostgreSQL: a connection the server closed (pg_terminate_backend, a restart, a failover) is
  // dropped from the pool, never handed out again: idle ones are checked when taken, and one whose
  // statement failed with a connection error (SQLSTATE class 08, 57P01-57P03) is closed. A
  // transaction whose BEGIN failed that way, and a read, run again on another connection (at most
  // pool_size times), so the first call after the server is back succeeds. A statement or
  // transaction that was under way when its connection broke throws Error(storage): whether it
  // committed is for the caller to find out. A server that stops answering (frozen, or the
  // network drops its packets) costs a call at most postgres_pool_wait_ms waiting for a
  // connection plus postgres_statement_timeout_ms (and 250 ms) per statement, then Error(storage);
  // a connection that got no answer is dropped and the call is not run again. Once the server
  // answers again, the next calls succeed on fresh connections. A call made on a fiber worker of
  // webhooks::http::Server runs on another thread while its fiber is suspended, so its waits
  // hold up no other request. Throws Error(invalid_argument) for a negative timeout.
  static std::unique_ptr<Database> open(const std::string& target, const Options& options = {});
  // A description safe to log (the path, or the URL without its password).
  virtual std::string describe() const = 0;
  // SQLite: the database file's path, "" for an in-memory database. PostgreSQL: "".
  virtual std::string file_path() const { return {}; }

  // Runs `fn` in one transaction on a pooled connection: commits when `fn` returns, rolls back
  // and rethrows when it throws. SQLite transactions start with BEGIN IMMEDIATE (one writer at a
  // time); PostgreSQL ones at READ COMMITTED. Throws Error(storage) if BEGIN or COMMIT fails.
  virtual void transact(const std::function<void(Transaction&)>& fn) = 0;

  // Whether the database answers now, for health checks: runs SELECT 1, giving up after
  // `timeout` in all (PostgreSQL: the wait for a pooled connection, opening one and the answer;
  // 1 ms at least). Returns when it answered; throws Error(storage) saying why when it did not
  // (refused, failed, or no answer within `timeout`). SQLite: SELECT 1, `timeout` unused.
  virtual void ping(std::chrono::milliseconds timeout) {
    (void)timeout;
    read("SELECT 1");
  }

  // Brings the tables of each of `components` up to date: applies, in version order, every
  // migration of the component not yet recorded in webhooks_migrations (component, version, name,
  // applied_at), recording `now` (Unix ms) as applied_at. Tables of components not named are
  // neither created nor touched, so each user declares only what it uses, e.g.
  //   db.migrate({idempotency::schema()}, now);                        // a receiver
  //   db.migrate({idempotency::schema(), publisher::schema()}, now);   // the publisher
  // One transaction (PostgreSQL: under an advisory lock, so several processes may migrate one
  // database at once). A database made before components existed (a schema_migrations table of
  // versions 1..5, one sequence for every table) is adopted the first time: its rows are copied
  // into webhooks_migrations as the components' versions they were (docs/operations.md,
  // "Migrations"); schema_migrations and every table it made are left as they are.
  // Returns how many migrations were applied. Throws Error(storage).
  int migrate(std::span<const Component> components, std::int64_t now);
  int migrate(std::initializer_list<Component> components, std::int64_t now) {
    return migrate(std::span<const Component>(components.begin(), components.size()), now);
  }
};

}  // namespace webhooks::db
