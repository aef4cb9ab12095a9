-- The publisher's durable queue (DESIGN.md, "The publisher"). Times are Unix milliseconds.
-- Endpoints: where a merchant receives its events. event_types is a JSON array of exact types and
-- prefix patterns ("order.*"); [] means every type.
CREATE TABLE publisher_endpoints (
  id              TEXT    PRIMARY KEY,
  merchant_id     TEXT    NOT NULL,
  url             TEXT    NOT NULL,
  event_types     TEXT    NOT NULL DEFAULT '[]',
  description     TEXT    NOT NULL DEFAULT '',
  enabled         INTEGER NOT NULL DEFAULT 1,
  disabled_reason TEXT,
  failing_since   BIGINT,
  created_at      BIGINT  NOT NULL,
  updated_at      BIGINT  NOT NULL
);
CREATE INDEX publisher_endpoints_merchant ON publisher_endpoints (merchant_id);

-- Signing secrets; every secret not past expires_at signs (rotation keeps the old one a while).
CREATE TABLE publisher_endpoint_secrets (
  endpoint_id TEXT   NOT NULL REFERENCES publisher_endpoints (id) ON DELETE CASCADE,
  secret      TEXT   NOT NULL,
  created_at  BIGINT NOT NULL,
  expires_at  BIGINT,
  PRIMARY KEY (endpoint_id, secret)
);

CREATE TABLE publisher_events (
  event_id    TEXT   PRIMARY KEY,
  merchant_id TEXT   NOT NULL,
  event_type  TEXT   NOT NULL,
  payload     TEXT   NOT NULL,
  created_at  BIGINT NOT NULL
);
CREATE INDEX publisher_events_merchant ON publisher_events (merchant_id, created_at);
CREATE INDEX publisher_events_created ON publisher_events (created_at);

-- One task per event and matching endpoint. state: pending (due at next_attempt_at), delivering
-- (leased by lease_owner until lease_expires_at), succeeded, dead. attempts counts the attempts of
-- the current round (a replay or recovery starts a new round at age_from); next_trigger is the
-- trigger of the next attempt (scheduled or manual).
CREATE TABLE publisher_tasks (
  id               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event_id         TEXT    NOT NULL REFERENCES publisher_events (event_id),
  endpoint_id      TEXT    NOT NULL,
  state            TEXT    NOT NULL CHECK (state IN ('pending', 'delivering', 'succeeded', 'dead')),
  attempts         INTEGER NOT NULL DEFAULT 0,
  next_attempt_at  BIGINT  NOT NULL,
  next_trigger     TEXT    NOT NULL DEFAULT 'scheduled',
  lease_owner      TEXT,
  lease_expires_at BIGINT,
  age_from         BIGINT  NOT NULL,
  last_status      INTEGER NOT NULL DEFAULT 0,
  last_error       TEXT,
  created_at       BIGINT  NOT NULL,
  updated_at       BIGINT  NOT NULL
);
CREATE INDEX publisher_tasks_due ON publisher_tasks (next_attempt_at) WHERE state = 'pending';
CREATE INDEX publisher_tasks_leased ON publisher_tasks (lease_expires_at) WHERE state = 'delivering';
CREATE INDEX publisher_tasks_event ON publisher_tasks (event_id);
CREATE INDEX publisher_tasks_endpoint ON publisher_tasks (endpoint_id, state);
CREATE INDEX publisher_tasks_owner ON publisher_tasks (lease_owner) WHERE state = 'delivering';

-- One row per HTTP try. status is the HTTP status, 0 when no response arrived.
CREATE TABLE publisher_attempts (
  delivery_id      TEXT    PRIMARY KEY,
  task_id          BIGINT  NOT NULL,
  event_id         TEXT    NOT NULL,
  endpoint_id      TEXT    NOT NULL,
  attempt_number   INTEGER NOT NULL,
  trigger_kind     TEXT    NOT NULL CHECK (trigger_kind IN ('scheduled', 'manual')),
  started_at       BIGINT  NOT NULL,
  status           INTEGER NOT NULL,
  latency_ms       BIGINT  NOT NULL,
  error            TEXT,
  response_snippet TEXT
);
CREATE INDEX publisher_attempts_event ON publisher_attempts (event_id, started_at);
CREATE INDEX publisher_attempts_task ON publisher_attempts (task_id);
