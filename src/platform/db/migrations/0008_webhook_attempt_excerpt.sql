-- The start of the receiver's answer to each attempt (its first 500 characters), for the portal's
-- delivery log: "HTTP 500" alone rarely tells a customer what their endpoint disliked. NULL for
-- attempts without an answer (refused, timed out) and for those made before this column.
ALTER TABLE webhook_attempts ADD COLUMN response_excerpt text;

-- The portal's delivery log filtered by status, newest first, for one organization and mode
-- (the unfiltered log reads webhook_deliveries_org).
CREATE INDEX webhook_deliveries_org_status ON webhook_deliveries (org_id, mode, status, id DESC);
