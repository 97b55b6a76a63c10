-- The operator console's deliveries and queues, and its audit log (issue 11).

-- Webhook URLs whose circuit breaker is open: the worker that opens a breaker writes its row
-- (and again at each failed probe), the one whose attempt succeeds deletes it. The breaker itself
-- lives in each worker's memory; this row lets the console (another process, perhaps) show it, and
-- lets a restarted worker keep holding a URL that was failing instead of hammering it again.
CREATE TABLE webhook_circuits (
  url               text PRIMARY KEY,
  -- When this outage began: kept while failed probes re-open the breaker.
  opened_at         timestamptz NOT NULL DEFAULT now(),
  -- When the cool-down ends and one probe may go (with the URL's next due delivery).
  probe_at          timestamptz NOT NULL,
  -- Consecutive failed attempts when it last opened.
  failures          integer NOT NULL,
  last_status_code  integer,
  last_error        text,
  updated_at        timestamptz NOT NULL DEFAULT now()
);

-- The console's list of failed deliveries of every organization, newest first.
CREATE INDEX webhook_deliveries_failed ON webhook_deliveries (id DESC) WHERE status = 'failed';

-- A respondent invitation's message, found from its verification (the console's invitation list).
CREATE INDEX outbox_messages_verification ON outbox_messages (verification_id, kind);

-- The audit log filtered by who acted, by what they did, and by time; newest first.
CREATE INDEX audit_events_actor ON audit_events (actor_id, id DESC);
CREATE INDEX audit_events_action ON audit_events (action, id DESC);
CREATE INDEX audit_events_created ON audit_events (created_at);
