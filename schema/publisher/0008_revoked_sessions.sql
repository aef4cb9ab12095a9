-- Console sessions signed out before they expired (docs/console.md, "Sessions and CSRF"): a copy
-- of a signed-out cookie is refused by every daemon on this database until the session expires.
-- session_id is the cookie's nonce (32 hex digits); expires_at its expiry, Unix seconds. Each
-- sign-out deletes the expired rows (webhooks::console::SqlRevocations).
CREATE TABLE publisher_revoked_sessions (
  session_id TEXT PRIMARY KEY,
  expires_at BIGINT NOT NULL
);
