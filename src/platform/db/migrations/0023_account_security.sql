-- People's accounts (issue 18, findings 2, 3, 9 and 10; docs/portal-accounts.md): the second
-- factor counts its own failures and refuses a code twice, recovery codes, sign-ups that wait for
-- their mailed link, and sign-in throttles per (email, client address) shared by every process.

-- The time step of the last TOTP code accepted: a code of that step or an earlier one is refused.
ALTER TABLE people ADD COLUMN totp_last_step bigint;
-- Wrong second-factor codes since the last right one (a password never resets them); every
-- fifth locks the second step for a while (doubling, up to a day).
ALTER TABLE people ADD COLUMN totp_failures integer NOT NULL DEFAULT 0;
ALTER TABLE people ADD COLUMN totp_locked_until timestamptz;
-- Wrong passwords are counted in auth_counters, per (email, client address) and per email.
ALTER TABLE people DROP COLUMN failed_logins;
ALTER TABLE people DROP COLUMN locked_until;

-- One-time recovery codes: SHA-256 of each (they are random, 50 bits), used at most once.
CREATE TABLE totp_recovery_codes (
  person_id   uuid NOT NULL REFERENCES people (id) ON DELETE CASCADE,
  code_hash   text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  used_at     timestamptz,
  PRIMARY KEY (person_id, code_hash)
);

-- A sign-up waits here until its mailed link is opened; only then is the account made (so
-- a sign-up answers alike whether or not the address already has an account).
CREATE TABLE pending_sign_ups (
  token_hash         text PRIMARY KEY,
  email              text NOT NULL,
  name               text NOT NULL,
  organization_name  text NOT NULL,
  created_at         timestamptz NOT NULL DEFAULT now(),
  expires_at         timestamptz NOT NULL
);
CREATE INDEX pending_sign_ups_expiry ON pending_sign_ups (expires_at);

-- Fixed-window counters of the sign-in throttles; the key is a SHA-256 (it names an email and
-- an address). A key at its limit stays blocked until window_ends_at.
CREATE TABLE auth_counters (
  key             text PRIMARY KEY,
  hits            integer NOT NULL,
  window_ends_at  timestamptz NOT NULL
);
CREATE INDEX auth_counters_window ON auth_counters (window_ends_at);
