-- One key space per component (issue 27): orders-api's idempotency records move from the scope
-- "<merchant>" to "orders-api:<merchant>" (idempotency::component_scope), so that the publisher's
-- ingest on the same database, also scoped by merchant, no longer shares their keys. Only the
-- records of orders-api's own routes move (the route is stored with every record since the
-- idempotency migration 0003_record_views): another application's records on this table keep
-- their scope. A retry across the upgrade finds its record under the new scope and is replayed.
-- Stop every orders-api of the previous version before starting this one: a process of the
-- previous version would look for the records under the old scope.
UPDATE idempotency_records
SET scope = 'orders-api:' || scope
WHERE route IN ('POST /orders', 'POST /payouts') OR route LIKE 'PUT /orders/%';
