-- What an event carries besides its data (docs/publisher-delivery.md, "Delivery control per
-- endpoint"): its FIFO ordering key and W3C trace context, posted with the row (the key in the
-- body, traceparent and tracestate as headers). NULL: none.
ALTER TABLE outbox ADD COLUMN ordering_key TEXT;
ALTER TABLE outbox ADD COLUMN traceparent TEXT;
ALTER TABLE outbox ADD COLUMN tracestate TEXT;
-- The relay posts a key's rows in order: a row waits while an earlier unsent row has its key.
CREATE INDEX outbox_ordering ON outbox (ordering_key, created_at, id)
WHERE sent_at IS NULL AND ordering_key IS NOT NULL;
