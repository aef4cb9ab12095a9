-- Sent rows by sent_at, for the relay's purge of rows sent longer ago than its sent_retention
-- (--outbox-retention): each batch reads the oldest sent rows from this index.
CREATE INDEX outbox_sent ON outbox (sent_at) WHERE sent_at IS NOT NULL;
