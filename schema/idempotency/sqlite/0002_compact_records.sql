-- Compact idempotency records (issue 13): each record holds only what a replay, a retry or the
-- sweep and purge need, in the fewest bytes.
--   fingerprint       the request's SHA-256, 32 bytes (was 64 hex digits)
--   state             0 in_progress, 1 completed, 2 failed (was the name; 0 and 1 take no bytes)
--   response_headers  NULL when the answer has none (was '[]')
--   updated_at        dropped: nothing read it
--   WITHOUT ROWID     the primary key (scope, idempotency_key) is the table's own key: the key is
--                     stored once, not again in a separate index
-- Existing records are converted in place. A fingerprint that is not 64 hex digits (none written by
-- this toolkit) becomes 32 zero bytes, so its key answers 422 until it expires, never a replay.
CREATE TABLE idempotency_records_compact (
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
  PRIMARY KEY (scope, idempotency_key)
) WITHOUT ROWID;

-- '00' -> X'00' ... 'ff' -> X'FF' (SQLite 3.40 has no unhex()).
CREATE TEMP TABLE migration_hex_byte (pair TEXT PRIMARY KEY, byte BLOB NOT NULL);
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 255)
INSERT INTO migration_hex_byte (pair, byte)
SELECT substr('0123456789abcdef', i / 16 + 1, 1) || substr('0123456789abcdef', i % 16 + 1, 1),
       substr(X'000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F202122232425262728292A2B2C2D2E2F303132333435363738393A3B3C3D3E3F404142434445464748494A4B4C4D4E4F505152535455565758595A5B5C5D5E5F606162636465666768696A6B6C6D6E6F707172737475767778797A7B7C7D7E7F808182838485868788898A8B8C8D8E8F909192939495969798999A9B9C9D9E9FA0A1A2A3A4A5A6A7A8A9AAABACADAEAFB0B1B2B3B4B5B6B7B8B9BABBBCBDBEBFC0C1C2C3C4C5C6C7C8C9CACBCCCDCECFD0D1D2D3D4D5D6D7D8D9DADBDCDDDEDFE0E1E2E3E4E5E6E7E8E9EAEBECEDEEEFF0F1F2F3F4F5F6F7F8F9FAFBFCFDFEFF', i + 1, 1)
FROM n;

INSERT INTO idempotency_records_compact (scope, idempotency_key, fingerprint, state, lease_owner,
    lease_expires_at, attempts, response_status, response_headers, response_body, created_at,
    expires_at)
SELECT r.scope, r.idempotency_key,
       COALESCE(
         (WITH RECURSIVE d(i, out) AS (
            SELECT 1, CAST(X'' AS TEXT)
            UNION ALL
            SELECT i + 2, out || (SELECT byte FROM migration_hex_byte
                                  WHERE pair = lower(substr(r.fingerprint, i, 2)))
            FROM d WHERE i < 64)
          SELECT CAST(out AS BLOB) FROM d WHERE i = 65 AND length(r.fingerprint) = 64),
         zeroblob(32)),
       CASE r.state WHEN 'in_progress' THEN 0 WHEN 'completed' THEN 1 ELSE 2 END,
       r.lease_owner, r.lease_expires_at, r.attempts, r.response_status,
       NULLIF(r.response_headers, '[]'), r.response_body, r.created_at, r.expires_at
FROM idempotency_records AS r;

DROP TABLE temp.migration_hex_byte;
DROP TABLE idempotency_records;
ALTER TABLE idempotency_records_compact RENAME TO idempotency_records;
CREATE INDEX idempotency_records_expires_at ON idempotency_records (expires_at);
CREATE INDEX idempotency_records_lease ON idempotency_records (lease_expires_at) WHERE state = 0;
