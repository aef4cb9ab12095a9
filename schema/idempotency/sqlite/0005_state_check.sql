-- The state's CHECK as three comparisons (issue 30). SQLite evaluates a CHECK's IN over a list of
-- three or more constants by building a temporary index of the list for every row it checks: an
-- insert or a state change paid about 3 us for it (merchant-receiver's new events: the INSERT
-- of a completed record). Same rule: state is 0, 1 or 2. SQLite cannot change a CHECK in place,
-- so the table is rebuilt as 0004 built it, its rows copied in rowid order (their age).
CREATE TABLE idempotency_records_state_check (
  scope            TEXT    NOT NULL,
  idempotency_key  TEXT    NOT NULL,
  fingerprint      BLOB    NOT NULL CHECK (length(fingerprint) = 32),
  state            INTEGER NOT NULL CHECK (state = 0 OR state = 1 OR state = 2),
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

INSERT INTO idempotency_records_state_check (scope, idempotency_key, fingerprint, state,
    lease_owner, lease_expires_at, attempts, response_status, response_headers, response_body,
    created_at, expires_at, route, updated_at, replays, conflicts, mismatches, response_ref)
SELECT scope, idempotency_key, fingerprint, state, lease_owner, lease_expires_at, attempts,
       response_status, response_headers, response_body, created_at, expires_at, route,
       updated_at, replays, conflicts, mismatches, response_ref
FROM idempotency_records ORDER BY rowid;

DROP TABLE idempotency_records;
ALTER TABLE idempotency_records_state_check RENAME TO idempotency_records;
CREATE INDEX idempotency_records_expires_at ON idempotency_records (expires_at);
CREATE INDEX idempotency_records_lease ON idempotency_records (lease_expires_at) WHERE state = 0;
CREATE INDEX idempotency_records_scope_created ON idempotency_records (scope, created_at);
