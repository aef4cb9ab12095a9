-- The audit log (docs/security.md, "The audit log"): every state-changing action taken through the
-- admin API or the console, and every console sign-in and sign-out, with who, when, from where,
-- on what, and how it ended. Kept and purged with delivered history (--retention).
-- at: Unix ms. actor: the token's name ('' for a sign-in with a wrong token); role: 'admin',
-- 'viewer' or ''. action: endpoint.create, endpoint.update, endpoint.enable, endpoint.disable,
-- endpoint.delete, endpoint.rotate_secret, endpoint.recover, endpoint.replay_missing,
-- event.replay, console.sign_in, console.sign_out. target: the endpoint or event id ('' for
-- none). outcome: 'succeeded' (2xx, 3xx), 'refused' (4xx) or 'failed' (5xx, or no answer);
-- status: the HTTP status answered; detail: the answer's error code, '' on success. client: the
-- client's address (the TCP peer).
CREATE TABLE publisher_audit_log (
  id        INTEGER PRIMARY KEY,
  at        BIGINT  NOT NULL,
  actor     TEXT    NOT NULL,
  role      TEXT    NOT NULL,
  action    TEXT    NOT NULL,
  target    TEXT    NOT NULL,
  outcome   TEXT    NOT NULL,
  status    INTEGER NOT NULL,
  detail    TEXT    NOT NULL,
  client    TEXT    NOT NULL
);
-- Retention and time filters read by `at`; the filters by actor, action and target each read their
-- own index newest first, so a filtered page costs its rows, not the table.
CREATE INDEX publisher_audit_log_at ON publisher_audit_log (at);
CREATE INDEX publisher_audit_log_actor ON publisher_audit_log (actor, id);
CREATE INDEX publisher_audit_log_action ON publisher_audit_log (action, id);
CREATE INDEX publisher_audit_log_target ON publisher_audit_log (target, id);
