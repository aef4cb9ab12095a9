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
    throw Error(ErrorCode::storage,
                "column " + std::to_string(col) + " is not an integer: '" + *value + "'");
  }
  return out;
}

std::unique_ptr<Database> Database::open(const std::string& target, const Options& options) {
  if (target.starts_with("postgres://") || target.starts_with("postgresql://")) {
    return detail::open_postgres(target, options);
  }
  if (target.empty())
    throw Error(ErrorCode::storage, "no database given (a SQLite path or a postgres:// URL)");
  return detail::open_sqlite(target, options);
}

}  // namespace webhooks::db
