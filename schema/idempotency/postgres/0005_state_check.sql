-- The state's CHECK as three comparisons, as on SQLite (issue 30), where a CHECK's IN over three
-- constants cost every inserted or changed row a temporary index of the list. PostgreSQL
-- evaluates either form cheaply; the constraint is rewritten only so that both engines state the
-- same rule the same way: state is 0, 1 or 2.
ALTER TABLE idempotency_records
  DROP CONSTRAINT idempotency_records_state_check,
  ADD CONSTRAINT idempotency_records_state_check CHECK (state = 0 OR state = 1 OR state = 2);
