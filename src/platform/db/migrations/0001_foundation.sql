-- Organizations (tenants), their API secrets, billing and the identity registry.

CREATE TABLE organizations (
  id            uuid PRIMARY KEY,
  name          text NOT NULL,
  email         text,
  risk_level    text NOT NULL DEFAULT 'NONE' CHECK (risk_level IN ('NONE', 'LOW', 'MEDIUM', 'HIGH')),
  payload_type  text NOT NULL DEFAULT 'FULL' CHECK (payload_type IN ('FULL', 'HALF')),
  enabled       boolean NOT NULL DEFAULT false,
  -- Wallet balance in kobo; always equal to the sum of the organization's ledger entries.
  balance       bigint NOT NULL DEFAULT 0 CHECK (balance >= 0),
  created_at    timestamptz NOT NULL DEFAULT now()
);

-- Only the SHA-256 of a secret is stored; secrets are 32 random bytes, so a fast hash is enough.
CREATE TABLE api_secrets (
  id           uuid PRIMARY KEY,
  org_id       uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  mode         text NOT NULL CHECK (mode IN ('test', 'live')),
  secret_hash  text NOT NULL UNIQUE,
  hint         text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  revoked_at   timestamptz
);
CREATE UNIQUE INDEX api_secrets_one_active ON api_secrets (org_id, mode) WHERE revoked_at IS NULL;

-- Price overrides per billable type, in kobo; types without a row use the built-in default.
CREATE TABLE prices (
  type        text PRIMARY KEY,
  amount      bigint NOT NULL CHECK (amount >= 0),
  updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE ledger_entries (
  id             bigserial PRIMARY KEY,
  org_id         uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  kind           text NOT NULL CHECK (kind IN ('credit', 'charge', 'refund')),
  -- Signed: credits and refunds are positive, charges negative.
  amount         bigint NOT NULL,
  balance_after  bigint NOT NULL,
  description    text NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ledger_entries_org ON ledger_entries (org_id, id);

-- Every billable piece of work (identity lookups, later workflow creations), live or test:
-- who, what, outcome, price. The identity number is stored masked, never whole.
CREATE TABLE usage_events (
  id                bigserial PRIMARY KEY,
  org_id            uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  mode              text NOT NULL CHECK (mode IN ('test', 'live')),
  type              text NOT NULL,
  subject           text NOT NULL,
  outcome           text NOT NULL,
  price             bigint NOT NULL DEFAULT 0,
  ledger_entry_id   bigint REFERENCES ledger_entries (id),
  created_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX usage_events_org ON usage_events (org_id, mode, id DESC);

-- Identity records for live mode, loaded by `vouch registry import`.
CREATE TABLE registry_records (
  type        text NOT NULL,
  key         text NOT NULL,
  -- E.164 phone of a NIN record: the key of the NIN-by-phone lookup.
  phone       text,
  record      jsonb NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (type, key)
);
CREATE INDEX registry_records_nin_phone ON registry_records (phone) WHERE type = 'nin' AND phone IS NOT NULL;
