-- One key space per component (issue 27): the idempotency records of the publisher's ingest
-- (POST /v1/events) move from the scope "<merchant_id>" to "publisher:<merchant_id>"
-- (idempotency::component_scope), so that orders-api on the same database, also scoped by
-- merchant, no longer shares their keys. Only the records of that route move (the route is stored
-- with every record since the idempotency migration 0003_record_views). A retry across the
-- upgrade finds its record under the new scope and is replayed. Stop every webhooks-publisherd of
-- the previous version before starting this one: a daemon of the previous version would look for
-- the records under the old scope.
UPDATE idempotency_records
SET scope = 'publisher:' || scope
WHERE route = 'POST /v1/events';
