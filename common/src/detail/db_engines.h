// The two engines behind webhooks::db::Database. Private.
#pragma once

#include <memory>
#include <string>

#include "webhooks/db.h"

namespace webhooks::db::detail {

std::unique_ptr<Database> open_sqlite(const std::string& path, const Options& options);
std::unique_ptr<Database> open_postgres(const std::string& url, const Options& options);

}  // namespace webhooks::db::detail
