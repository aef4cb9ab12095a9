-- Tasks of a disabled endpoint are parked: still `pending` (or `delivering` until their attempt is
-- recorded), but outside the due index, so a claim never walks past them. Disabling an endpoint
-- parks its pending and delivering tasks in the same transaction; enabling it unparks them (they
-- keep their next_attempt_at). Replay and recovery park what they re-queue for a disabled endpoint.
ALTER TABLE publisher_tasks ADD COLUMN parked INTEGER NOT NULL DEFAULT 0;
UPDATE publisher_tasks SET parked = 1
WHERE state IN ('pending', 'delivering')
  AND endpoint_id NOT IN (SELECT id FROM publisher_endpoints WHERE enabled = 1);
DROP INDEX publisher_tasks_due;
CREATE INDEX publisher_tasks_due ON publisher_tasks (next_attempt_at)
WHERE state = 'pending' AND parked = 0;
