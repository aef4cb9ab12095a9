// Databases as the toolkit made them before migrations were per component: every database got
// every table, recorded in one sequence, schema_migrations (version, name, applied_at), versions
// 1..5. Built here the way that code did it, so upgrade tests start from what today's databases
// hold.
#pragma once

#include <cstdint>

#include "webhooks/db.h"

namespace webhooks::test {

// What Database::migrate did before components, stopping after legacy version `through`
// (1..5): in one transaction (PostgreSQL: under advisory lock 7242024001), CREATE TABLE IF NOT
// EXISTS schema_migrations, then each version's SQL (the same files, now under
// schema/<component>/) and its row, applied_at = `applied_at`.
void migrate_as_before_components(db::Database& db, int through, std::int64_t applied_at);

}  // namespace webhooks::test
