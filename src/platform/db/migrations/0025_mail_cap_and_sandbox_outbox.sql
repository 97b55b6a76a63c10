-- Test mode never mails third parties; live mail is capped per organization (issue 18, finding 6;
-- docs/respondents.md, docs/test-mode.md).

-- One row for each live-mode mail an organization causes to someone outside it (a request to a
-- guarantor or an employer, a team invitation), written in the transaction that queues the mail.
-- The cap (VOUCH_MAIL_CAP_PER_HOUR) counts the last hour's rows; older rows are deleted as new
-- ones are taken. No recipient, no content: only who caused a mail, what kind, and when.
CREATE TABLE mail_cap_entries (
  id          bigserial PRIMARY KEY,
  org_id      uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  kind        text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mail_cap_entries_org ON mail_cap_entries (org_id, created_at);

-- The portal's sandbox outbox: an organization's test-mode messages, newest first.
CREATE INDEX outbox_messages_sandbox ON outbox_messages (org_id, id) WHERE mode = 'test';
