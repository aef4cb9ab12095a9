#include "support/legacy_schema.h"

#include <catch2/catch.hpp>
#include <string_view>

#include "webhooks/idempotency/schema.h"
#include "webhooks/outbox/schema.h"
#include "webhooks/publisher/schema.h"

namespace webhooks::test {
namespace {

// The old sequence: its version and file name, and where that file is now.
struct Legacy {
  std::int64_t version;
  std::string_view name;
  const db::Component& component;
  int component_version;
};

}  // namespace

void migrate_as_before_components(db::Database& db, int through, std::int64_t applied_at) {
  const Legacy legacy[] = {
      {1, "0001_idempotency", idempotency::schema(), 1},
      {2, "0002_outbox", outbox::schema(), 1},
      {3, "0003_publisher", publisher::schema(), 1},
      {4, "0004_parked_tasks", publisher::schema(), 2},
      {5, "0005_compact_idempotency_records", idempotency::schema(), 2},
  };
  db.transact([&](db::Transaction& tx) {
    if (db.engine() == db::Engine::postgres) tx.exec("SELECT pg_advisory_xact_lock(7242024001)");
    tx.exec(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, "
        "name TEXT NOT NULL, applied_at BIGINT NOT NULL)");
    for (const Legacy& l : legacy) {
      if (l.version > through) break;
      const db::Migration& m = l.component.migrations(db.engine())[l.component_version - 1];
      REQUIRE(m.version == l.component_version);
      tx.exec(m.sql);
      tx.exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
              {l.version, l.name, applied_at});
    }
  });
}

}  // namespace webhooks::test
