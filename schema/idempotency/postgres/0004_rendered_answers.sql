-- Answers stored by reference (issue 30): an application whose answer is a rendering of rows it
-- keeps anyway (orders-api's 201 to POST /orders, the order as created) stores the bytes that
-- name those rows (the order's id, 16 bytes) in response_ref instead of response_headers and
-- response_body (NULL), and rebuilds the answer on replay (idempotency::ReplayRenderer).
-- Records made before keep their stored answer and replay it as before. A nullable column at the
-- end: existing rows are not rewritten.
ALTER TABLE idempotency_records ADD COLUMN response_ref bytea;
