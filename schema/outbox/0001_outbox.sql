-- The transactional outbox: an application inserts its event here in the same transaction as the
-- change it describes; the relay posts each row to the publisher's POST /v1/events with
-- Idempotency-Key = id and sets sent_at only after a 202.
CREATE TABLE outbox (
  id              TEXT    PRIMARY KEY,
  merchant_id     TEXT    NOT NULL,
  event_type      TEXT    NOT NULL,
  payload         TEXT    NOT NULL,
  created_at      BIGINT  NOT NULL,
  next_attempt_at BIGINT  NOT NULL,
  attempts        INTEGER NOT NULL DEFAULT 0,
  last_error      TEXT,
  sent_at         BIGINT
);
CREATE INDEX outbox_unsent ON outbox (next_attempt_at) WHERE sent_at IS NULL;
