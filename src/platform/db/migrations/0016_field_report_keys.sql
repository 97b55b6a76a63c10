-- The field app's visit reports are sent from phones that lose their connection (docs/operators.md,
-- "Field app"): each report carries an Idempotency-Key made on the phone, and the first accepted
-- report under a key is kept here, per agent, with its answer. A resend with the same key gets that
-- answer again and files nothing; the same key with another report is refused. The row is written
-- in the report's own transaction, so a key exists exactly when its report was filed.
CREATE TABLE field_report_keys (
  agent_id uuid NOT NULL REFERENCES field_agents (id) ON DELETE CASCADE,
  key text NOT NULL,
  fingerprint text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('address', 'business')),
  verification_id bigint NOT NULL,
  response jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (agent_id, key)
);
