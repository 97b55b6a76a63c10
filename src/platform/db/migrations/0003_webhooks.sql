-- Webhook endpoints (one per organization and mode) and the durable delivery queue.

CREATE TABLE webhook_endpoints (
  org_id                      uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  mode                        text NOT NULL CHECK (mode IN ('test', 'live')),
  url                         text NOT NULL,
  -- Standard Webhooks signing key (whsec_...). Kept readable: signing needs the key itself.
  secret                      text NOT NULL,
  -- After a rotation the old key also signs for 24 hours, so receivers can switch over.
  previous_secret             text,
  previous_secret_expires_at  timestamptz,
  created_at                  timestamptz NOT NULL DEFAULT now(),
  updated_at                  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, mode)
);

-- One row per event to deliver; written in the transaction that changes the state (outbox).
CREATE TABLE webhook_deliveries (
  id                bigserial PRIMARY KEY,
  -- The webhook-id header: stable across retries and redeliveries, so receivers can deduplicate.
  message_id        text NOT NULL UNIQUE,
  org_id            uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  mode              text NOT NULL CHECK (mode IN ('test', 'live')),
  event_type        text NOT NULL,
  -- The body as sent, byte for byte: {"type", "timestamp", "data"}. json, not jsonb, so the text
  -- (key order, spacing) is kept and the worker sends it without re-serialising.
  payload           json NOT NULL,
  status            text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts          integer NOT NULL DEFAULT 0,
  next_attempt_at   timestamptz NOT NULL DEFAULT now(),
  -- A worker that claims a delivery leases it until then; a crashed worker's lease runs out.
  locked_until      timestamptz,
  last_status_code  integer,
  last_error        text,
  created_at        timestamptz NOT NULL DEFAULT now(),
  delivered_at      timestamptz
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_org ON webhook_deliveries (org_id, mode, id DESC);

CREATE TABLE webhook_attempts (
  id            bigserial PRIMARY KEY,
  delivery_id   bigint NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  attempted_at  timestamptz NOT NULL DEFAULT now(),
  status_code   integer,
  latency_ms    integer NOT NULL,
  error         text
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, id);
