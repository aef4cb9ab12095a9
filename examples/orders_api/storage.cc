#include "storage.h"

#include "schema.h"
#include "webhooks/idempotency/schema.h"
#include "webhooks/outbox/schema.h"

namespace webhooks::orders {
namespace {

// Both engines accept this DDL. payouts.downstream_key is what the partner deduplicates on.
constexpr std::string_view kCreateTables = R"sql(
CREATE TABLE IF NOT EXISTS orders (
  id              TEXT    PRIMARY KEY,
  merchant_id     TEXT    NOT NULL,
  amount          BIGINT  NOT NULL,
  currency        TEXT    NOT NULL,
  reference       TEXT    NOT NULL,
  status          TEXT    NOT NULL,
  idempotency_key TEXT,
  created_at      BIGINT  NOT NULL,
  updated_at      BIGINT  NOT NULL
);
CREATE INDEX IF NOT EXISTS orders_by_merchant ON orders (merchant_id, created_at);
CREATE TABLE IF NOT EXISTS payouts (
  id              TEXT    PRIMARY KEY,
  merchant_id     TEXT    NOT NULL,
  idempotency_key TEXT    NOT NULL,
  downstream_key  TEXT    NOT NULL UNIQUE,
  amount          BIGINT  NOT NULL,
  currency        TEXT    NOT NULL,
  destination     TEXT    NOT NULL,
  status          TEXT    NOT NULL,
  transfer_id     TEXT,
  created_at      BIGINT  NOT NULL,
  updated_at      BIGINT  NOT NULL
);
CREATE INDEX IF NOT EXISTS payouts_by_key ON payouts (merchant_id, idempotency_key, created_at);
)sql";

}  // namespace

void prepare_database(db::Database& db, UnixMillis now) {
  db.migrate({idempotency::schema(), outbox::schema(), orders::schema()}, now);
  db.transact([](db::Transaction& tx) {
    // Serialises concurrent starts on PostgreSQL, where CREATE ... IF NOT EXISTS can race.
    if (tx.engine() == db::Engine::postgres) tx.exec("SELECT pg_advisory_xact_lock(7242024003)");
    tx.exec(kCreateTables);
  });
}

}  // namespace webhooks::orders
