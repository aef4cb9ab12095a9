-- Answers stored by reference (issue 30): an application whose answer is a rendering of rows it
-- keeps anyway (orders-api's 201 to POST /orders, the order as created) stores the bytes that
-- name those rows (the order's id, 16 bytes) in response_ref instead of response_headers and
-- response_body (NULL), and rebuilds the answer on replay (idempotency::ReplayRenderer).
-- Records made before keep their stored answer and replay it as before.
--
-- The table is rebuilt as an ordinary rowid table (it was WITHOUT ROWID since 0002): without the
-- stored answer a record is about 150 bytes, and each entry of the indexes on expires_at and
-- (scope, created_at) then carried the whole primary key (scope and key, 49 bytes for a UUID key
-- of orders-api) where it now carries the rowid (1-4 bytes). Rows are appended in rowid order, so
-- the table's pages are filled; only the primary key's own index takes keys in random order.
-- 20,000 orders-api orders with UUID keys: 622 bytes per record before, 272 after
-- (docs/benchmarks.md, "bench_orders size").
CREATE TABLE idempotency_records_by_rowid (
  scope            TEXT    NOT NULL,
  idempotency_key  TEXT    NOT NULL,
  fingerprint      BLOB    NOT NULL CHECK (length(fingerprint) = 32),
  state            INTEGER NOT NULL CHECK (state IN (0, 1, 2)),
  lease_owner      TEXT,
  lease_expires_at BIGINT,
  attempts         INTEGER NOT NULL DEFAULT 1,
  response_status  INTEGER,
  response_headers TEXT,
  response_body    TEXT,
  created_at       BIGINT  NOT NULL,
  expires_at       BIGINT  NOT NULL,
  route            TEXT,
  updated_at       BIGINT,
  replays          INTEGER,
  conflicts        INTEGER,
  mismatches       INTEGER,
  response_ref     BLOB,
  PRIMARY KEY (scope, idempotency_key)
);

-- Oldest first, so that rowids follow the records' age.
INSERT INTO idempotency_records_by_rowid (scope, idempotency_key, fingerprint, state, lease_owner,
    lease_expires_at, attempts, response_status, response_headers, response_body, created_at,
    expires_at, route, updated_at, replays, conflicts, mismatches)
SELECT scope, idempotency_key, fingerprint, state, lease_owner, lease_expires_at, attempts,
       response_status, response_headers, response_body, created_at, expires_at, route,
       updated_at, replays, conflicts, mismatches
FROM idempotency_records ORDER BY created_at;

DROP TABLE idempotency_records;
ALTER TABLE idempotency_records_by_rowid RENAME TO idempotency_records;
CREATE INDEX idempotency_records_expires_at ON idempotency_records (expires_at);
CREATE INDEX idempotency_records_lease ON idempotency_records (lease_expires_at) WHERE state = 0;
CREATE INDEX idempotency_records_scope_created ON idempotency_records (scope, created_at);
