// Database::migrate: each component's migrations, recorded as (component, version) in
// webhooks_migrations, and the one-time adoption of a database made before components existed.
#include <string>

#include "detail/pg_connection.h"
#include "webhooks/db.h"
#include "webhooks/error.h"

namespace webhooks::db {
namespace {

constexpr std::string_view kCreateBookkeeping =
    "CREATE TABLE IF NOT EXISTS webhooks_migrations (component TEXT NOT NULL, "
    "version BIGINT NOT NULL, name TEXT NOT NULL, applied_at BIGINT NOT NULL, "
    "PRIMARY KEY (component, version))";
constexpr std::string_view kRecord =
    "INSERT INTO webhooks_migrations (component, version, name, applied_at) "
    "VALUES ($1, $2, $3, $4)";
constexpr std::string_view kCurrent =
    "SELECT COALESCE(MAX(version), 0) FROM webhooks_migrations WHERE component = $1";

// The single sequence every database had before components (schema/*/000N_*.sql, applied to
// every database), and what each of its versions is now. The SQL is the same, byte for byte.
struct LegacyMigration {
  std::int64_t version;
  std::string_view name;
  std::string_view component;
  std::int64_t component_version;
  std::string_view component_name;
};
constexpr LegacyMigration kLegacy[] = {
    {1, "0001_idempotency", "idempotency", 1, "0001_records"},
    {2, "0002_outbox", "outbox", 1, "0001_outbox"},
    {3, "0003_publisher", "publisher", 1, "0001_queue"},
    {4, "0004_parked_tasks", "publisher", 2, "0002_parked_tasks"},
    {5, "0005_compact_idempotency_records", "idempotency", 2, "0002_compact_records"},
};

// Whether the database has a schema_migrations table of the shape this toolkit made (version,
// name, applied_at); another program's table of that name (e.g. a web framework's) has not.
bool has_legacy_table(Transaction& tx) {
  const std::string_view sql =
      tx.engine() == Engine::sqlite
          ? "SELECT COUNT(*) FROM pragma_table_info('schema_migrations') "
            "WHERE name IN ('version', 'name', 'applied_at')"
          : "SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = "
            "current_schema() AND table_name = 'schema_migrations' "
            "AND column_name IN ('version', 'name', 'applied_at')";
  return tx.exec(sql).integer(0, 0) == 3;
}

// Copies the rows of the old schema_migrations into webhooks_migrations, each as the component
// version it was, keeping applied_at. Only rows naming one of kLegacy are copied. Runs once: when
// webhooks_migrations is still empty.
void adopt_legacy(Transaction& tx) {
  if (tx.exec("SELECT COUNT(*) FROM webhooks_migrations").integer(0, 0) != 0) return;
  if (!has_legacy_table(tx)) return;
  const Rows rows = tx.exec("SELECT version, name, applied_at FROM schema_migrations");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (const LegacyMigration& m : kLegacy) {
      if (rows.integer(i, 0) != m.version || rows.text(i, 1) != m.name) continue;
      tx.exec(kRecord, {m.component, m.component_version, m.component_name, rows.integer(i, 2)});
    }
  }
}

int migrate_component(Transaction& tx, const Component& component, std::int64_t now) {
  const std::int64_t current = tx.exec(kCurrent, {component.name}).integer(0, 0);
  int applied = 0;
  for (const Migration& m : component.migrations(tx.engine())) {
    if (m.version <= current) continue;
    tx.exec(m.sql);
    tx.exec(kRecord, {component.name, std::int64_t{m.version}, m.name, now});
    ++applied;
  }
  return applied;
}

}  // namespace

int Database::migrate(std::span<const Component> components, std::int64_t now) {
  int applied = 0;
  transact([&](Transaction& tx) {
    // Serialises the migrations of one PostgreSQL database by several processes (the key the
    // toolkit has always used, so an older process waits too).
    // A migration may take longer than the statement bound (postgres_statement_timeout_ms), and
    // so may the wait for another process's: neither is bounded.
    if (tx.engine() == Engine::postgres) {
      tx.exec(detail::kUnboundedStatements);
      tx.exec("SELECT pg_advisory_xact_lock(7242024001)");
    }
    tx.exec(kCreateBookkeeping);
    adopt_legacy(tx);
    for (const Component& component : components) applied += migrate_component(tx, component, now);
  });
  return applied;
}

}  // namespace webhooks::db
