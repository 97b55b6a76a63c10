-- A public live link is not an anonymous existence oracle its owner pays for (docs/sessions.md,
-- "Verification links"; docs/security.md, the second review of verification sessions).

-- The owner's cap, in kobo, on what the link's sessions may cost in all (null: no cap). What they
-- cost is the sum of their `price`, read under the link's row lock in the transaction that charges
-- the next one, so two sessions cannot both pass the cap.
ALTER TABLE verification_links ADD COLUMN spend_limit bigint CHECK (spend_limit IS NULL OR spend_limit > 0);

-- That sum without reading every session of a large link: the sessions a link started that paid.
CREATE INDEX verification_sessions_link_paid ON verification_sessions (link_id) INCLUDE (price) WHERE link_id IS NOT NULL AND price > 0;

-- The ID steps of the link's sessions, one row each, counted against the limits per client
-- address and per link (src/sessions/links/id-step-limits.ts) under the link's row lock.
-- `address_key` is a blind index (HMAC under the index key) of the link and the client's address
-- key (an IPv4 address, or an IPv6 /64), never the address; rows are deleted by the session
-- expiry task once past the longest window.
CREATE TABLE link_id_steps (
  link_id      bigint NOT NULL REFERENCES verification_links (id) ON DELETE CASCADE,
  address_key  text NOT NULL,
  tried_at     timestamptz NOT NULL
);
CREATE INDEX link_id_steps_address ON link_id_steps (link_id, address_key, tried_at);
CREATE INDEX link_id_steps_link ON link_id_steps (link_id, tried_at);
CREATE INDEX link_id_steps_tried ON link_id_steps (tried_at);
