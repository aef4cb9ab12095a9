-- What a merchant's "did my request go through?" page reads (issue 15): the route a record was
-- begun on, when its state last changed, and how often its key was answered from it. All
-- nullable, so existing records take no bytes for them and the table is not rebuilt:
--   route       "METHOD /path" of the request that began the record; NULL before this migration
--   updated_at  Unix ms of the last change of state (begin, complete, fail, reacquire, sweep);
--               NULL before this migration (read as created_at)
--   replays, conflicts, mismatches
--               how many duplicates were answered with the stored response, with 409 (in
--               progress) and with 422 (another body); NULL is 0. Counted in memory and added
--               by the maintenance thread about once a second (docs/idempotency.md).
-- The index serves a scope's records newest first (Store::list).
ALTER TABLE idempotency_records ADD COLUMN route TEXT;
ALTER TABLE idempotency_records ADD COLUMN updated_at BIGINT;
ALTER TABLE idempotency_records ADD COLUMN replays INTEGER;
ALTER TABLE idempotency_records ADD COLUMN conflicts INTEGER;
ALTER TABLE idempotency_records ADD COLUMN mismatches INTEGER;
CREATE INDEX idempotency_records_scope_created ON idempotency_records (scope, created_at);
