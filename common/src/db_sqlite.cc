// SQLite engine: one connection in WAL mode, transactions serialised in-process (SQLite has one
// writer at a time anyway; a mutex is cheaper than BEGIN IMMEDIATE busy-waiting), prepared
// statements cached per SQL text.
#include <sqlite3.h>

#include <cctype>
#include <mutex>
#include <unordered_map>

#include "detail/db_engines.h"
#include "webhooks/error.h"

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
  SqliteDatabase(const std::string& path, const Options& options) : path_(path) {
    const std::string synchronous = synchronous_pragma_value(options.sqlite_synchronous);
    if (sqlite3_open_v2(path.c_str(), &db_,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        nullptr) != SQLITE_OK) {
      const std::string message = db_ ? sqlite3_errmsg(db_) : "out of memory";
      sqlite3_close(db_);
      throw Error(ErrorCode::storage, "cannot open SQLite database " + path + ": " + message);
    }
    sqlite3_busy_timeout(db_, options.sqlite_busy_timeout_ms);
    run_script("PRAGMA journal_mode=WAL; PRAGMA synchronous=" + synchronous +
               "; PRAGMA foreign_keys=ON;");
  }

  ~SqliteDatabase() override {
    for (auto& [sql, stmt] : cache_) sqlite3_finalize(stmt);
    sqlite3_close(db_);
  }

  Engine engine() const override { return Engine::sqlite; }
  std::string describe() const override { return "sqlite:" + path_; }

  Rows exec(std::string_view sql, std::span<const Param> params) override {
    std::lock_guard lock(mutex_);
    return run(sql, params);
  }

  void transact(const std::function<void(Transaction&)>& fn) override {
    std::lock_guard lock(mutex_);
    run_script("BEGIN IMMEDIATE");
    try {
      fn(transaction_);
    } catch (...) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
    if (sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) {
      const std::string message = sqlite3_errmsg(db_);
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      throw Error(ErrorCode::storage, "sqlite: COMMIT failed: " + message);
    }
  }

 private:
  friend class SqliteTransaction;

  Rows run(std::string_view sql, std::span<const Param> params) {
    auto it = cache_.find(std::string(sql));
    if (it != cache_.end()) return step(it->second, params, sql);
    sqlite3_stmt* stmt = nullptr;
    const char* tail = nullptr;
    if (sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
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
    cache_.emplace(std::string(sql), stmt);
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
      } else {
        rc = sqlite3_bind_null(stmt, index);
      }
      if (rc != SQLITE_OK) fail(sql);
    }
    const auto before = sqlite3_total_changes64(db_);
    const int columns = sqlite3_column_count(stmt);
    std::vector<std::optional<std::string>> cells;
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      for (int c = 0; c < columns; ++c) {
        if (sqlite3_column_type(stmt, c) == SQLITE_NULL) {
          cells.emplace_back(std::nullopt);
        } else {
          const auto* data = static_cast<const char*>(sqlite3_column_blob(stmt, c));
          cells.emplace_back(std::string(data ? data : "", static_cast<std::size_t>(
                                                               sqlite3_column_bytes(stmt, c))));
        }
      }
    }
    if (rc != SQLITE_DONE) {
      const std::string message = sqlite3_errmsg(db_);
      sqlite3_reset(stmt);
      throw Error(ErrorCode::storage, "sqlite: " + message + " in: " + std::string(sql.substr(0, 120)));
    }
    sqlite3_reset(stmt);
    return Rows(static_cast<std::size_t>(columns), std::move(cells),
                sqlite3_total_changes64(db_) - before);
  }

  void run_script(const std::string& sql) {
    char* error = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
      const std::string message = error ? error : sqlite3_errmsg(db_);
      sqlite3_free(error);
      throw Error(ErrorCode::storage, "sqlite: " + message + " in: " + sql.substr(0, 120));
    }
  }

  [[noreturn]] void fail(std::string_view sql) {
    throw Error(ErrorCode::storage,
                std::string("sqlite: ") + sqlite3_errmsg(db_) + " in: " + std::string(sql.substr(0, 120)));
  }

  std::string path_;
  sqlite3* db_ = nullptr;
  std::mutex mutex_;
  std::unordered_map<std::string, sqlite3_stmt*> cache_;
  SqliteTransaction transaction_{*this};
};

Rows SqliteTransaction::exec(std::string_view sql, std::span<const Param> params) {
  return db_.run(sql, params);
}

}  // namespace

std::unique_ptr<Database> open_sqlite(const std::string& path, const Options& options) {
  return std::make_unique<SqliteDatabase>(path, options);
}

}  // namespace webhooks::db::detail
