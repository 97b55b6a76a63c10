-- Idempotency keys (docs/idempotency.md): the first answer to a POST or DELETE sent with an
-- Idempotency-Key, per organization and mode, kept 24 hours so a retry gets the same answer and
-- the work is done (and charged) once. `running` while the first request is in flight: a retry
-- waits for it, and a holder that died releases the key when `locked_until` passes.
CREATE TABLE idempotency_keys (
  org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  key text NOT NULL,
  fingerprint text NOT NULL,
  state text NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'done')),
  status_code integer,
  content_type text,
  body text,
  locked_until timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (org_id, mode, key)
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
