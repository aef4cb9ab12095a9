#include "webhooks/db.h"

#include <charconv>

#include "detail/db_engines.h"
#include "webhooks/error.h"

namespace webhooks::db {

const std::optional<std::string>& Rows::cell(std::size_t row, std::size_t col) const {
  if (col >= columns_ || row >= size()) {
    throw Error(ErrorCode::storage, "row " + std::to_string(row) + ", column " +
                                        std::to_string(col) + " is out of range");
  }
  return cells_[row * columns_ + col];
}

const std::string& Rows::text(std::size_t row, std::size_t col) const {
  static const std::string kEmpty;
  const auto& value = cell(row, col);
  return value ? *value : kEmpty;
}

std::int64_t Rows::integer(std::size_t row, std::size_t col) const {
  const auto& value = cell(row, col);
  if (!value) return 0;
  std::int64_t out = 0;
  const auto [ptr, ec] = std::from_chars(value->data(), value->data() + value->size(), out);
  if (ec != std::errc() || ptr != value->data() + value->size()) {
    throw Error(ErrorCode::storage, "column " + std::to_string(col) + " is not an integer: '" +
                                        *value + "'");
  }
  return out;
}

std::unique_ptr<Database> Database::open(const std::string& target, const Options& options) {
  if (target.starts_with("postgres://") || target.starts_with("postgresql://")) {
    return detail::open_postgres(target, options);
  }
  if (target.empty()) throw Error(ErrorCode::storage, "no database given (a SQLite path or a postgres:// URL)");
  return detail::open_sqlite(target, options);
}

int Database::migrate(std::int64_t now) {
  const Engine eng = engine();
  int applied = 0;
  transact([&](Transaction& tx) {
    if (eng == Engine::postgres) tx.exec("SELECT pg_advisory_xact_lock(7242024001)");
    tx.exec(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, "
        "name TEXT NOT NULL, applied_at BIGINT NOT NULL)");
    const Rows done = tx.exec("SELECT COALESCE(MAX(version), 0) FROM schema_migrations");
    const std::int64_t current = done.integer(0, 0);
    for (const Migration& m : migrations(eng)) {
      if (m.version <= current) continue;
      tx.exec(m.sql);
      tx.exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
              {std::int64_t{m.version}, m.name, std::int64_t{now}});
      ++applied;
    }
  });
  return applied;
}

}  // namespace webhooks::db
