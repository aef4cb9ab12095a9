// The two engines behind webhooks::db::Database. Private.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "webhooks/db.h"

namespace webhooks::db::detail {

// Hash of SQL text for the engines' per-connection statement caches, keyed by std::string and
// looked up by std::string_view without a copy (with std::equal_to<>: heterogeneous lookup).
struct TextHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view text) const noexcept {
    return std::hash<std::string_view>{}(text);
  }
};

std::unique_ptr<Database> open_sqlite(const std::string& path, const Options& options);
std::unique_ptr<Database> open_postgres(const std::string& url, const Options& options);

}  // namespace webhooks::db::detail
