-- Live links and people's mail at rest, and webhook bodies with nowhere to go (issue 18,
-- findings 12 and 5; docs/data-protection.md, docs/webhooks.md).

-- When the links in a mail stop working: the retention job deletes the mail then. Mails written
-- by this release set it from their token's lifetime (or 30 days for mails without a token);
-- rows from before get the longest link lifetime a mail had (an invitation's 7 days).
ALTER TABLE mail_messages ADD COLUMN expires_at timestamptz;
UPDATE mail_messages SET expires_at = created_at + interval '7 days';
ALTER TABLE mail_messages ALTER COLUMN expires_at SET NOT NULL;
ALTER TABLE mail_messages ALTER COLUMN expires_at SET DEFAULT now() + interval '30 days';
CREATE INDEX mail_messages_expiry ON mail_messages (expires_at);

-- An event that happens while its organization has no endpoint for the mode is recorded without
-- its body (the body is the verification record: personal data with nowhere to go).
ALTER TABLE webhook_deliveries ALTER COLUMN payload DROP NOT NULL;

-- Events queued before this release for a scope that still has no endpoint: their bodies go, and
-- those still pending end now (retention counts from then).
UPDATE webhook_deliveries d
   SET payload = NULL,
       status = 'failed',
       locked_until = NULL,
       next_attempt_at = CASE WHEN d.status = 'pending' THEN now() ELSE d.next_attempt_at END,
       last_error = 'not sent: no webhook endpoint was set for this mode when the event happened (its body was not kept)'
 WHERE NOT EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.org_id = d.org_id AND e.mode = d.mode);
