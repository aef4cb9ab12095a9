-- Compact idempotency records (issue 13): each record holds only what a replay, a retry or the
-- sweep and purge need, in the fewest bytes.
--   fingerprint       the request's SHA-256, 32 bytes of bytea (was 64 hex digits)
--   state             0 in_progress, 1 completed, 2 failed, a smallint (was the name)
--   response_headers  NULL when the answer has none (was '[]')
--   updated_at        dropped: nothing read it
--   column order      fixed-width columns first, widest first: no alignment padding
-- Existing records are converted in place (the table is rebuilt under an exclusive lock). A
-- fingerprint that is not 64 hex digits (none written by this toolkit) becomes 32 zero bytes, so
-- its key answers 422 until it expires, never a replay.
CREATE TABLE idempotency_records_compact (
  created_at       BIGINT   NOT NULL,
  expires_at       BIGINT   NOT NULL,
  lease_expires_at BIGINT,
  attempts         INTEGER  NOT NULL DEFAULT 1,
  response_status  SMALLINT,
  state            SMALLINT NOT NULL CONSTRAINT idempotency_records_state_check
                            CHECK (state IN (0, 1, 2)),
  scope            TEXT     NOT NULL,
  idempotency_key  TEXT     NOT NULL,
  fingerprint      BYTEA    NOT NULL CONSTRAINT idempotency_records_fingerprint_check
                            CHECK (octet_length(fingerprint) = 32),
  lease_owner      TEXT,
  response_headers TEXT,
  response_body    TEXT,
  PRIMARY KEY (scope, idempotency_key)
);

INSERT INTO idempotency_records_compact (created_at, expires_at, lease_expires_at, attempts,
    response_status, state, scope, idempotency_key, fingerprint, lease_owner, response_headers,
    response_body)
SELECT created_at, expires_at, lease_expires_at, attempts, response_status,
       CASE state WHEN 'in_progress' THEN 0 WHEN 'completed' THEN 1 ELSE 2 END,
       scope, idempotency_key,
       CASE WHEN fingerprint ~ '^[0-9a-fA-F]{64}$' THEN decode(fingerprint, 'hex')
            ELSE decode(repeat('00', 32), 'hex') END,
       lease_owner, NULLIF(response_headers, '[]'), response_body
FROM idempotency_records;

DROP TABLE idempotency_records;
ALTER TABLE idempotency_records_compact RENAME TO idempotency_records;
ALTER INDEX idempotency_records_compact_pkey RENAME TO idempotency_records_pkey;
CREATE INDEX idempotency_records_expires_at ON idempotency_records (expires_at);
CREATE INDEX idempotency_records_lease ON idempotency_records (lease_expires_at) WHERE state = 0;
