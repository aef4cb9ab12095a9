-- The console's reads (docs/operations.md, "The console"), each an index range however many
-- events are stored, and replay-missing's guarantee of one task per event and endpoint.
-- Events keep the Idempotency-Key they were ingested with (NULL: published in-process), so an
-- operator can find "the event of key K". Listings run newest first by (created_at, event_id),
-- the cursor's order, so the time indexes end in event_id.
ALTER TABLE publisher_events ADD COLUMN idempotency_key TEXT;
CREATE INDEX publisher_events_idempotency_key ON publisher_events (idempotency_key)
WHERE idempotency_key IS NOT NULL;
DROP INDEX publisher_events_merchant;
CREATE INDEX publisher_events_merchant ON publisher_events (merchant_id, created_at, event_id);
DROP INDEX publisher_events_created;
CREATE INDEX publisher_events_created ON publisher_events (created_at, event_id);
CREATE INDEX publisher_events_type ON publisher_events (event_type, created_at, event_id);

-- A task carries its event's created_at, so "events having a task in state S, newest first" walks
-- one index in the listing's order instead of probing every event. One partial index per state
-- (a task is in exactly one, so together they are the size of one): an index led by `state`
-- would be taken by the claim's `state = 'pending'` instead of publisher_tasks_due.
ALTER TABLE publisher_tasks ADD COLUMN event_created_at BIGINT NOT NULL DEFAULT 0;
UPDATE publisher_tasks SET event_created_at =
  (SELECT e.created_at FROM publisher_events e WHERE e.event_id = publisher_tasks.event_id);
CREATE INDEX publisher_tasks_pending_events ON publisher_tasks (event_created_at, event_id)
WHERE state = 'pending';
CREATE INDEX publisher_tasks_delivering_events ON publisher_tasks (event_created_at, event_id)
WHERE state = 'delivering';
CREATE INDEX publisher_tasks_succeeded_events ON publisher_tasks (event_created_at, event_id)
WHERE state = 'succeeded';
CREATE INDEX publisher_tasks_dead_events ON publisher_tasks (event_created_at, event_id)
WHERE state = 'dead';
-- At most one task per event and endpoint (fan-out made one; replay-missing adds the missing ones
-- with ON CONFLICT DO NOTHING, so two at once cannot double one).
DROP INDEX publisher_tasks_event;
CREATE UNIQUE INDEX publisher_tasks_event ON publisher_tasks (event_id, endpoint_id);

-- An endpoint's last attempts (its stats) and the last hour's attempts (the overview's charts;
-- status included so the count of failures reads the index alone).
CREATE INDEX publisher_attempts_endpoint ON publisher_attempts (endpoint_id, started_at);
CREATE INDEX publisher_attempts_started ON publisher_attempts (started_at, status);

-- The due index carries age_from, so the overview's oldest waiting task (MIN(age_from) over the
-- pending, unparked tasks) reads the index alone instead of every waiting task's row (a backlog of
-- 140,000 tasks: 290 ms -> 10 ms on SQLite). The claim reads it as before, by next_attempt_at.
DROP INDEX publisher_tasks_due;
CREATE INDEX publisher_tasks_due ON publisher_tasks (next_attempt_at, age_from)
WHERE state = 'pending' AND parked = 0;
