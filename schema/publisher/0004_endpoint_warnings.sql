-- When the endpoint's current failing streak was warned about (the log line endpoint_failing and
-- the ops event endpoint.failing, at half of --disable-after): NULL while not failing or not yet
-- warned. Written by the UPDATE that claims the warning (… AND failing_warned_at IS NULL), so
-- each streak is warned about once, however many workers and daemons share the database; cleared
-- with failing_since (a success or an enable ends the streak).
ALTER TABLE publisher_endpoints ADD COLUMN failing_warned_at BIGINT;
