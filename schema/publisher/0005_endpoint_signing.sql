-- How an endpoint's deliveries are signed (docs/publisher.md, "Signing"): 'v1' (HMAC-SHA256 with
-- a whsec_ secret), 'v1a' (Ed25519 with a whsk_ signing key) or 'both'. It decides what a rotation
-- generates; the keys themselves stay in publisher_endpoint_secrets, each one signing by its own
-- prefix until its expiry, so keys of the scheme before a rotation sign through the grace period.
ALTER TABLE publisher_endpoints ADD COLUMN signing TEXT NOT NULL DEFAULT 'v1'
  CHECK (signing IN ('v1', 'v1a', 'both'));
