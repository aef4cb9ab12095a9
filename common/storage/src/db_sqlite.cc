// SQLite engine: one writing connection in WAL mode, transactions serialised in-process (SQLite
// has one writer at a time anyway; a mutex is cheaper than BEGIN IMMEDIATE busy-waiting), plus a
// few read connections for Database::read, which WAL lets run beside a write transaction;
// prepared statements cached per connection and SQL text.
#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <chrono>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "detail/db_engines.h"
#include "detail/fiber.h"
#include "webhooks/backoff.h"
#include "webhooks/error.h"
#include "webhooks/periodic_task.h"

namespace webhooks::db::detail {
namespace {

const char* placeholder(std::size_t i) {
  static const auto names = [] {
    std::vector<std::string> out;
    for (int n = 0; n <= 99; ++n) out.push_back("$" + std::to_string(n));
    return out;
  }();
  if (i >= names.size()) throw Error(ErrorCode::storage, "more than 99 parameters");
  return names[i].c_str();
}

// The PRAGMA synchronous value for `value` (one of kSqliteSynchronousValues, any case), upper
// case. Throws Error(invalid_argument) for anything else: the value is pasted into the PRAGMA.
std::string synchronous_pragma_value(const std::string& value) {
  std::string upper = value;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const std::string_view allowed : kSqliteSynchronousValues) {
    if (upper == allowed) return upper;
  }
  throw Error(ErrorCode::invalid_argument,
              "SQLite synchronous must be NORMAL, FULL or EXTRA, not '" + value + "'");
}

bool blank(const char* text) {
  for (; *text; ++text) {
    if (*text != ' ' && *text != '\n' && *text != '\t' && *text != '\r') return false;
  }
  return true;
}

// One SQLite connection and its prepared statements, cached per SQL text. Not thread-safe: each
// user holds its own mutex.
struct Connection {
  sqlite3* db = nullptr;
  // Looked up by the caller's std::string_view without building a std::string (C++20
  // heterogeneous lookup): a cached statement costs no allocation per exec.
  std::unordered_map<std::string, sqlite3_stmt*, TextHash, std::equal_to<>> cache;

  // Opens `path` (creating it when `create`), with the busy timeout; throws Error(storage)
  // naming `what` and the path.
  void open(const std::string& path, bool create, int busy_timeout_ms, const std::string& what) {
    const int flags =
        SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (create ? SQLITE_OPEN_CREATE : 0);
    if (sqlite3_open_v2(path.c_str(), &db, flags, nullptr) != SQLITE_OK) {
      const std::string message = db ? sqlite3_errmsg(db) : "out of memory";
      close();
      throw Error(ErrorCode::storage, "cannot open " + what + " " + path + ": " + message);
    }
    sqlite3_busy_timeout(db, busy_timeout_ms);
  }

  void close() {
    for (auto& [sql, stmt] : cache) sqlite3_finalize(stmt);
    cache.clear();
    sqlite3_close(db);
    db = nullptr;
  }

  Rows run(std::string_view sql, std::span<const Param> params) {
    auto it = cache.find(sql);
    if (it != cache.end()) return step(it->second, params, sql);
    sqlite3_stmt* stmt = nullptr;
    const char* tail = nullptr;
    if (sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                           &stmt, &tail) != SQLITE_OK) {
      fail(sql);
    }
    const std::size_t used = static_cast<std::size_t>(tail - sql.data());
    if (used < sql.size() && !blank(std::string(sql.substr(used)).c_str())) {
      // Several statements (a migration): run them one by one, uncached.
      if (!params.empty()) {
        sqlite3_finalize(stmt);
        throw Error(ErrorCode::storage, "parameters given for several statements");
      }
      Rows rows;
      try {
        if (stmt) rows = step(stmt, params, sql);
      } catch (...) {
        sqlite3_finalize(stmt);
        throw;
      }
      sqlite3_finalize(stmt);
      return run(sql.substr(used), params);
    }
    if (!stmt) return Rows();  // only whitespace or comments
    cache.emplace(std::string(sql), stmt);
    return step(stmt, params, sql);
  }

  Rows step(sqlite3_stmt* stmt, std::span<const Param> params, std::string_view sql) {
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
    for (std::size_t i = 0; i < params.size(); ++i) {
      const int index = sqlite3_bind_parameter_index(stmt, placeholder(i + 1));
      if (index == 0) continue;  // not used by this statement
      int rc = SQLITE_OK;
      if (const auto* v = std::get_if<std::int64_t>(&params[i])) {
        rc = sqlite3_bind_int64(stmt, index, *v);
      } else if (const auto* t = std::get_if<std::string_view>(&params[i])) {
        rc = sqlite3_bind_text64(stmt, index, t->data(), t->size(), SQLITE_STATIC, SQLITE_UTF8);
      } else if (const auto* b = std::get_if<Bytes>(&params[i])) {
        // A non-null pointer even for no bytes: a NULL one would bind SQL NULL.
        rc = sqlite3_bind_blob64(stmt, index, b->data.empty() ? "" : b->data.data(), b->data.size(),
                                 SQLITE_STATIC);
      } else {
        rc = sqlite3_bind_null(stmt, index);
      }
      if (rc != SQLITE_OK) fail(sql);
    }
    const auto before = sqlite3_total_changes64(db);
    const int columns = sqlite3_column_count(stmt);
    std::vector<std::optional<std::string>> cells;
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      for (int c = 0; c < columns; ++c) {
        if (sqlite3_column_type(stmt, c) == SQLITE_NULL) {
          cells.emplace_back(std::nullopt);
        } else {
          const auto* data = static_cast<const char*>(sqlite3_column_blob(stmt, c));
          cells.emplace_back(std::string(data ? data : "",
                                         static_cast<std::size_t>(sqlite3_column_bytes(stmt, c))));
        }
      }
    }
    if (rc != SQLITE_DONE) {
      const std::string message = sqlite3_errmsg(db);
      sqlite3_reset(stmt);
      throw Error(ErrorCode::storage,
                  "sqlite: " + message + " in: " + std::string(sql.substr(0, 120)));
    }
    sqlite3_reset(stmt);
    return Rows(static_cast<std::size_t>(columns), std::move(cells),
                sqlite3_total_changes64(db) - before);
  }

  // PRAGMA journal_mode=WAL. Switching a new file to WAL needs an exclusive lock, and SQLite
  // answers SQLITE_BUSY at once, without the busy handler, when several connections (processes
  // starting on one fresh file) try it together: tried again for up to `busy_timeout_ms`.
  void enable_wal(int busy_timeout_ms) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(busy_timeout_ms);
    const Backoff backoff{.first = std::chrono::milliseconds(1),
                          .max = std::chrono::milliseconds(50)};
    for (int retry = 1;; ++retry) {
      const int rc = sqlite3_exec(db, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr);
      if (rc == SQLITE_OK) return;
      const std::chrono::milliseconds pause = backoff.delay(retry);
      if ((rc != SQLITE_BUSY && rc != SQLITE_LOCKED) ||
          std::chrono::steady_clock::now() + pause > deadline) {
        fail("PRAGMA journal_mode=WAL");
      }
      std::this_thread::sleep_for(pause);
    }
  }

  void run_script(const std::string& sql) {
    char* error = nullptr;
    if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
      const std::string message = error ? error : sqlite3_errmsg(db);
      sqlite3_free(error);
      throw Error(ErrorCode::storage, "sqlite: " + message + " in: " + sql.substr(0, 120));
    }
  }

  [[noreturn]] void fail(std::string_view sql) {
    throw Error(ErrorCode::storage, std::string("sqlite: ") + sqlite3_errmsg(db) +
                                        " in: " + std::string(sql.substr(0, 120)));
  }
};

class SqliteDatabase;

class SqliteTransaction final : public Transaction {
 public:
  explicit SqliteTransaction(SqliteDatabase& db) : db_(db) {}
  Engine engine() const override { return Engine::sqlite; }
  Rows exec(std::string_view sql, std::span<const Param> params) override;

 private:
  SqliteDatabase& db_;
};

class SqliteDatabase final : public Database {
 public:
  SqliteDatabase(const std::string& path, const Options& options)
      : path_(path), busy_timeout_ms_(options.sqlite_busy_timeout_ms) {
    const std::string synchronous = synchronous_pragma_value(options.sqlite_synchronous);
    writer_.open(path, true, busy_timeout_ms_, "SQLite database");
    try {
      writer_.enable_wal(busy_timeout_ms_);
      // temp_store=MEMORY: a savepoint's journal (one a request in a group commit, GroupCommit)
      // stays in memory; past 64 KiB SQLite would spill it to a temporary file, one write per
      // page (merchant-receiver's new events: a third of the writer thread's pwrite calls).
      writer_.run_script("PRAGMA synchronous=" + synchronous +
                         "; PRAGMA foreign_keys=ON; PRAGMA temp_store=MEMORY;");
      if (options.sqlite_background_checkpoint && !in_memory(path)) {
        start_checkpointer(options, synchronous);
      }
    } catch (...) {
      checkpoint_.close();
      writer_.close();
      throw;
    }
  }

  ~SqliteDatabase() override {
    checkpointer_.stop();
    checkpoint_.close();
    for (Reader& reader : readers_) reader.connection.close();
    writer_.close();
  }

  Engine engine() const override { return Engine::sqlite; }
  std::string describe() const override { return "sqlite:" + path_; }
  std::string file_path() const override { return in_memory(path_) ? std::string() : path_; }

  Rows exec(std::string_view sql, std::span<const Param> params) override {
    std::lock_guard lock(mutex_);
    return writer_.run(sql, params);
  }

  // On a read connection of its own (WAL: readers do not wait for the writer), the first of
  // kReaders that is free, else the next in turn. An in-memory database has one connection only.
  Rows read(std::string_view sql, std::span<const Param> params) override {
    if (in_memory(path_)) return exec(sql, params);
    const std::size_t first = next_reader_.fetch_add(1, std::memory_order_relaxed) % kReaders;
    for (std::size_t i = 0; i < kReaders; ++i) {
      Reader& reader = readers_[(first + i) % kReaders];
      std::unique_lock lock(reader.mutex, std::try_to_lock);
      if (lock.owns_lock()) return read_on(reader, sql, params);
    }
    Reader& reader = readers_[first];
    std::lock_guard lock(reader.mutex);
    return read_on(reader, sql, params);
  }

  void transact(const std::function<void(Transaction&)>& fn) override {
    const fibers::NoSuspend holding_the_writer;  // another fiber of this thread may want it
    std::lock_guard lock(mutex_);
    writer_.run_script("BEGIN IMMEDIATE");
    try {
      fn(transaction_);
    } catch (...) {
      sqlite3_exec(writer_.db, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
    if (sqlite3_exec(writer_.db, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) {
      const std::string message = sqlite3_errmsg(writer_.db);
      sqlite3_exec(writer_.db, "ROLLBACK", nullptr, nullptr, nullptr);
      throw Error(ErrorCode::storage, "sqlite: COMMIT failed: " + message);
    }
  }

 private:
  friend class SqliteTransaction;

  static constexpr std::size_t kReaders = 4;
  struct Reader {
    std::mutex mutex;
    Connection connection;  // opened on first use, under mutex
  };

  // Caller holds reader.mutex. query_only: a read connection refuses to write.
  Rows read_on(Reader& reader, std::string_view sql, std::span<const Param> params) {
    if (!reader.connection.db) {
      reader.connection.open(path_, false, busy_timeout_ms_, "a read connection to");
      try {
        reader.connection.run_script("PRAGMA query_only=1;");
      } catch (...) {
        reader.connection.close();
        throw;
      }
    }
    return reader.connection.run(sql, params);
  }

  // Options::sqlite_background_checkpoint: once kCheckpointPages frames have been appended to
  // the WAL since the last checkpoint's end, a commit wakes a thread that runs a passive
  // checkpoint on its own connection while writers go on. A checkpoint copies each page once,
  // its last version, however many frames of the window hold it: over windows of 1,000 frames
  // of merchant-receiver's new events, 39 % of the frames; checkpointing again after every
  // commit, as SQLite's wal_autocheckpoint does past its threshold, copied nearly every frame.
  // The WAL restarts from its beginning at the first write transaction after a checkpoint has
  // copied all of it. So past kRestartPages every commit wakes the checkpointer again: small
  // checkpoints catch up with the writers within a few hundred frames. Only if they do not, past
  // kCatchUpPages the committing call copies the rest itself (its fsyncs stall that commit).
  static constexpr int kCheckpointPages = 1000;  // SQLite's own wal_autocheckpoint default
  static constexpr int kRestartPages = 4000;
  static constexpr int kCatchUpPages = 8000;

  static bool in_memory(const std::string& path) {
    return path.empty() || path == ":memory:" || path.rfind("file::memory:", 0) == 0 ||
           path.find("mode=memory") != std::string::npos;
  }

  void start_checkpointer(const Options& options, const std::string& synchronous) {
    checkpoint_.open(path_, false, options.sqlite_busy_timeout_ms, "the checkpoint connection to");
    // The checkpointing connection's own setting decides the checkpoint's fsyncs.
    const std::string pragma = "PRAGMA synchronous=" + synchronous;
    if (sqlite3_exec(checkpoint_.db, pragma.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
      throw Error(ErrorCode::storage, "sqlite: " + pragma + " failed on the checkpoint connection");
    }
    sqlite3_wal_hook(writer_.db, &SqliteDatabase::on_commit, this);  // replaces wal_autocheckpoint
    checkpointer_.start();
  }

  // Called by SQLite after each commit on writer_ (under mutex_) with the WAL's size in pages.
  static int on_commit(void* self, sqlite3* db, const char* name, int pages) {
    auto& me = *static_cast<SqliteDatabase*>(self);
    int copied = me.checkpointed_frames_.load();
    if (pages < copied) {  // the WAL restarted: its frames count from its beginning again
      me.checkpointed_frames_.compare_exchange_strong(copied, 0);
      copied = 0;
    }
    if (pages >= kCatchUpPages) {
      // Waits (busy handler) for a running background checkpoint, then copies the rest.
      sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_FULL, nullptr, nullptr);
    } else if ((pages >= kRestartPages || pages - copied >= kCheckpointPages) &&
               !me.checkpoint_wanted_.exchange(true)) {
      me.checkpointer_.wake();
    }
    return SQLITE_OK;
  }

  // The checkpointer's step: a passive checkpoint when a commit asked for one; then it waits
  // for the next commit's wake().
  std::chrono::milliseconds checkpoint_when_wanted() {
    if (checkpoint_wanted_.exchange(false)) {
      int copied = 0;
      if (sqlite3_wal_checkpoint_v2(checkpoint_.db, nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr,
                                    &copied) == SQLITE_OK) {
        checkpointed_frames_.store(copied);
      }
    }
    return std::chrono::hours(1);
  }

  std::string path_;
  int busy_timeout_ms_;
  Connection writer_;      // under mutex_: every write, every transaction
  Connection checkpoint_;  // Options::sqlite_background_checkpoint only
  std::atomic<bool> checkpoint_wanted_{false};
  // The WAL frames the last background checkpoint had copied (its end), 0 since the WAL restarted.
  std::atomic<int> checkpointed_frames_{0};
  // Options::sqlite_background_checkpoint only: checkpoint_when_wanted, woken by on_commit.
  PeriodicTask checkpointer_{"sqlite_checkpoint_failed",
                             [this] { return checkpoint_when_wanted(); },
                             {.first_wait = std::chrono::hours(1)}};
  std::mutex mutex_;
  std::array<Reader, kReaders> readers_;
  std::atomic<std::size_t> next_reader_{0};
  SqliteTransaction transaction_{*this};
};

Rows SqliteTransaction::exec(std::string_view sql, std::span<const Param> params) {
  return db_.writer_.run(sql, params);
}

}  // namespace

std::unique_ptr<Database> open_sqlite(const std::string& path, const Options& options) {
  return std::make_unique<SqliteDatabase>(path, options);
}

}  // namespace webhooks::db::detail
