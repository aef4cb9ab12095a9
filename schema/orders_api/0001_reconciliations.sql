-- `orders-api reconcile --resolve`: one row per decision, committed as `planned` before the partner
-- is called, then `done` (result: the reversal's or the new transfer's id) or `failed` (result: the
-- partner's error). A run first finishes the planned rows an interrupted run left.
-- action reverse: transfer_id is the duplicate reversed under idempotency_key kxr-<transfer_id>,
-- kept_transfer_id the payout's first transfer. action resubmit: the payout's transfer was missing;
-- idempotency_key is its downstream key, transfer_id the new transfer once done.
CREATE TABLE reconciliations (
  id               TEXT    PRIMARY KEY,
  payout_id        TEXT    NOT NULL,
  action           TEXT    NOT NULL,
  transfer_id      TEXT,
  kept_transfer_id TEXT,
  idempotency_key  TEXT    NOT NULL,
  amount           BIGINT  NOT NULL,
  currency         TEXT    NOT NULL,
  state            TEXT    NOT NULL,
  result           TEXT,
  created_at       BIGINT  NOT NULL,
  updated_at       BIGINT  NOT NULL
);
CREATE INDEX reconciliations_by_state ON reconciliations (state, id);
-- One reversal per transfer, whatever the number of runs.
CREATE UNIQUE INDEX reconciliations_one_reversal ON reconciliations (transfer_id)
  WHERE action = 'reverse';
