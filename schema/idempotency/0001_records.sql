-- Idempotency records: one per (scope, idempotency_key). Times are Unix milliseconds.
CREATE TABLE idempotency_records (
  scope            TEXT    NOT NULL,
  idempotency_key  TEXT    NOT NULL,
  fingerprint      TEXT    NOT NULL,
  state            TEXT    NOT NULL CHECK (state IN ('in_progress', 'completed', 'failed')),
  lease_owner      TEXT,
  lease_expires_at BIGINT,
  attempts         INTEGER NOT NULL DEFAULT 1,
  response_status  INTEGER,
  response_headers TEXT,
  response_body    TEXT,
  created_at       BIGINT  NOT NULL,
  updated_at       BIGINT  NOT NULL,
  expires_at       BIGINT  NOT NULL,
  PRIMARY KEY (scope, idempotency_key)
);
CREATE INDEX idempotency_records_expires_at ON idempotency_records (expires_at);
CREATE INDEX idempotency_records_lease ON idempotency_records (lease_expires_at)
  WHERE state = 'in_progress';
