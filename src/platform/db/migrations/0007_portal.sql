-- The customer portal: people who sign in, their sessions, organization members and invitations,
-- access and funding requests, mail to people, and the audit log of account changes.

CREATE TABLE people (
  id                 uuid PRIMARY KEY,
  -- Stored lower-cased: one person per address whatever the capitals typed.
  email              text NOT NULL UNIQUE,
  name               text NOT NULL,
  -- argon2id, PHC string.
  password_hash      text NOT NULL,
  email_verified_at  timestamptz,
  -- Base32 TOTP secret; totp_enabled_at is set once the person proved a code from it.
  totp_secret        text,
  totp_enabled_at    timestamptz,
  -- Failed sign-ins since the last success; past the limit the account locks for a while.
  failed_logins      integer NOT NULL DEFAULT 0,
  locked_until       timestamptz,
  -- Operator staff (the console); customers are never operators.
  operator_role      text CHECK (operator_role IN ('operator')),
  created_at         timestamptz NOT NULL DEFAULT now()
);

-- Only the SHA-256 of the cookie token is stored.
CREATE TABLE portal_sessions (
  id            uuid PRIMARY KEY,
  person_id     uuid NOT NULL REFERENCES people (id) ON DELETE CASCADE,
  token_hash    text NOT NULL UNIQUE,
  -- A session that passed the password but still owes its TOTP code can do nothing else.
  pending_totp  boolean NOT NULL DEFAULT false,
  user_agent    text,
  ip            text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_seen_at  timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz NOT NULL,
  revoked_at    timestamptz
);
CREATE INDEX portal_sessions_person ON portal_sessions (person_id, created_at DESC);

-- Single-use links mailed to a person: email verification and password reset.
CREATE TABLE person_tokens (
  token_hash  text PRIMARY KEY,
  person_id   uuid NOT NULL REFERENCES people (id) ON DELETE CASCADE,
  purpose     text NOT NULL CHECK (purpose IN ('verify_email', 'reset_password')),
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL,
  used_at     timestamptz
);
CREATE INDEX person_tokens_person ON person_tokens (person_id, purpose);

CREATE TABLE memberships (
  org_id      uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  person_id   uuid NOT NULL REFERENCES people (id) ON DELETE CASCADE,
  role        text NOT NULL CHECK (role IN ('owner', 'admin', 'developer', 'viewer')),
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, person_id)
);
CREATE INDEX memberships_person ON memberships (person_id);

CREATE TABLE invitations (
  id           uuid PRIMARY KEY,
  org_id       uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  email        text NOT NULL,
  role         text NOT NULL CHECK (role IN ('owner', 'admin', 'developer', 'viewer')),
  token_hash   text NOT NULL UNIQUE,
  invited_by   uuid REFERENCES people (id) ON DELETE SET NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL,
  accepted_at  timestamptz,
  revoked_at   timestamptz
);
CREATE UNIQUE INDEX invitations_open ON invitations (org_id, email) WHERE accepted_at IS NULL AND revoked_at IS NULL;

-- The spec's enablement as a flow: the customer asks, an account manager decides.
CREATE TABLE access_requests (
  id                    uuid PRIMARY KEY,
  org_id                uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  risk_level            text NOT NULL CHECK (risk_level IN ('NONE', 'LOW', 'MEDIUM', 'HIGH')),
  payload_type          text NOT NULL CHECK (payload_type IN ('FULL', 'HALF')),
  use_case              text,
  status                text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'declined')),
  decided_risk_level    text CHECK (decided_risk_level IN ('NONE', 'LOW', 'MEDIUM', 'HIGH')),
  decided_payload_type  text CHECK (decided_payload_type IN ('FULL', 'HALF')),
  decline_reason        text,
  requested_by          uuid REFERENCES people (id) ON DELETE SET NULL,
  -- NULL with a decision: decided on the server's command line.
  decided_by            uuid REFERENCES people (id) ON DELETE SET NULL,
  created_at            timestamptz NOT NULL DEFAULT now(),
  decided_at            timestamptz
);
CREATE UNIQUE INDEX access_requests_one_pending ON access_requests (org_id) WHERE status = 'pending';
CREATE INDEX access_requests_org ON access_requests (org_id, created_at DESC);

-- A customer says it sent a bank transfer; the operator confirms it, which credits the wallet.
CREATE TABLE funding_requests (
  id               uuid PRIMARY KEY,
  org_id           uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  amount           bigint NOT NULL CHECK (amount > 0),
  -- The narration the customer put on the transfer, so the operator can find it.
  reference        text NOT NULL,
  status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'confirmed', 'rejected')),
  requested_by     uuid REFERENCES people (id) ON DELETE SET NULL,
  decided_by       uuid REFERENCES people (id) ON DELETE SET NULL,
  reason           text,
  ledger_entry_id  bigint REFERENCES ledger_entries (id),
  created_at       timestamptz NOT NULL DEFAULT now(),
  decided_at       timestamptz
);
CREATE INDEX funding_requests_org ON funding_requests (org_id, created_at DESC);
CREATE INDEX funding_requests_pending ON funding_requests (created_at) WHERE status = 'pending';

-- Mail to people (verification, reset, invitations, decisions). Sent by SMTP when configured;
-- always readable with `vouch mail list` on the server.
CREATE TABLE mail_messages (
  id          bigserial PRIMARY KEY,
  kind        text NOT NULL,
  recipient   text NOT NULL,
  subject     text NOT NULL,
  text        text NOT NULL,
  html        text,
  created_at  timestamptz NOT NULL DEFAULT now(),
  sent_at     timestamptz,
  error       text
);
CREATE INDEX mail_messages_unsent ON mail_messages (id) WHERE sent_at IS NULL;

-- Who changed what in an organization (owners, admins, operators): written in the change's transaction.
CREATE TABLE audit_events (
  id          bigserial PRIMARY KEY,
  org_id      uuid REFERENCES organizations (id) ON DELETE CASCADE,
  -- NULL: done on the server's command line.
  actor_id    uuid REFERENCES people (id) ON DELETE SET NULL,
  actor_kind  text NOT NULL CHECK (actor_kind IN ('member', 'operator', 'cli', 'system')),
  action      text NOT NULL,
  target      text,
  before      jsonb,
  after       jsonb,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_events_org ON audit_events (org_id, id DESC);

-- API secrets: when each was last used, who made it, and, for test secrets only, the value the
-- portal shows (test secrets reach only the sandbox: no money, no real people). revoked_at may
-- now lie in the future: a rolled secret keeps working until then (at most 24 hours).
ALTER TABLE api_secrets ADD COLUMN last_used_at timestamptz;
ALTER TABLE api_secrets ADD COLUMN created_by uuid REFERENCES people (id) ON DELETE SET NULL;
ALTER TABLE api_secrets ADD COLUMN test_value text CHECK (test_value IS NULL OR mode = 'test');

-- Explorer filters: identity lookups by type and by time within one organization and mode.
CREATE INDEX usage_events_org_type ON usage_events (org_id, mode, type, id DESC);
CREATE INDEX ledger_entries_org_time ON ledger_entries (org_id, created_at);
-- Usage charts: one organization's events of one mode over the last days.
CREATE INDEX usage_events_org_time ON usage_events (org_id, mode, created_at);
