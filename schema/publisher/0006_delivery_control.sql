-- Delivery control per endpoint (docs/publisher-delivery.md, "Delivery control").
-- rate_limit: deliveries per second at most (NULL: unlimited), counted over publisher_rate_log.
-- ordering: 'fifo' delivers the events of one ordering key one at a time, in acceptance order.
-- headers: a JSON object of static headers added to each delivery. auth: a JSON credential
-- ({"type":"bearer","token"} or {"type":"basic","username","password"}), never shown again.
-- client_certificate / client_key: PEM, for mutual TLS on https:// endpoints (the key never shown).
ALTER TABLE publisher_endpoints ADD COLUMN rate_limit INTEGER;
ALTER TABLE publisher_endpoints ADD COLUMN ordering TEXT NOT NULL DEFAULT 'none'
  CHECK (ordering IN ('none', 'fifo'));
ALTER TABLE publisher_endpoints ADD COLUMN headers TEXT NOT NULL DEFAULT '{}';
ALTER TABLE publisher_endpoints ADD COLUMN auth TEXT;
ALTER TABLE publisher_endpoints ADD COLUMN client_certificate TEXT;
ALTER TABLE publisher_endpoints ADD COLUMN client_key TEXT;

-- The event's ordering key (NULL: none) and W3C trace context (traceparent is always set for new
-- events: given at ingest, or started by the publisher).
ALTER TABLE publisher_events ADD COLUMN ordering_key TEXT;
ALTER TABLE publisher_events ADD COLUMN traceparent TEXT;
ALTER TABLE publisher_events ADD COLUMN tracestate TEXT;

-- A task of a FIFO endpoint carries its sequence: the event's ordering key ('' without one);
-- NULL on other endpoints. A task behind an unfinished one of its sequence waits with parked = 2
-- (outside the due index) until the one ahead succeeds or is dead.
ALTER TABLE publisher_tasks ADD COLUMN sequence_key TEXT;
CREATE INDEX publisher_tasks_sequence ON publisher_tasks (endpoint_id, sequence_key, id)
WHERE sequence_key IS NOT NULL AND state IN ('pending', 'delivering');

-- The claim walks endpoints with due work (a loose scan of this index), then takes each one's
-- oldest due tasks up to its share: a backlog of one endpoint is never scanned past.
CREATE INDEX publisher_tasks_endpoint_due ON publisher_tasks (endpoint_id, next_attempt_at)
WHERE state = 'pending' AND parked = 0;

-- The traceparent each attempt carried (its own span id under the event's trace id).
ALTER TABLE publisher_attempts ADD COLUMN traceparent TEXT;

-- When each delivery to a rate-limited endpoint was claimed (Unix ms); rows older than a second
-- are deleted by the next claim of that endpoint.
CREATE TABLE publisher_rate_log (
  endpoint_id TEXT   NOT NULL,
  sent_at     BIGINT NOT NULL
);
CREATE INDEX publisher_rate_log_endpoint ON publisher_rate_log (endpoint_id, sent_at);
