-- Storage limitation and data-subject requests (issue 12; docs/data-protection.md).

-- An organization's retention periods, in days; a null column (or no row) means the documented
-- default (src/privacy/retention.ts). The retention job purges or anonymises what is older.
CREATE TABLE retention_settings (
  org_id             uuid PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
  -- Identity lookups: the masked number on usage rows and ledger descriptions.
  lookup_days        integer CHECK (lookup_days BETWEEN 1 AND 3650),
  -- Completed (or cancelled) verifications: their personal fields are blanked, the row stays.
  verification_days  integer CHECK (verification_days BETWEEN 1 AND 3650),
  -- Visit photos in the file store.
  photo_days         integer CHECK (photo_days BETWEEN 1 AND 3650),
  -- Ended webhook deliveries (their bodies); null: VOUCH_WEBHOOK_RETENTION_DAYS.
  webhook_days       integer CHECK (webhook_days BETWEEN 1 AND 3650),
  updated_at         timestamptz NOT NULL DEFAULT now()
);

-- When a verification's personal fields were blanked (by the retention job or an erasure): the
-- row keeps its ids, status, dates and charges; the job skips it from then on.
ALTER TABLE address_verifications ADD COLUMN anonymised_at timestamptz;
ALTER TABLE business_verifications ADD COLUMN anonymised_at timestamptz;
ALTER TABLE guarantor_verifications ADD COLUMN anonymised_at timestamptz;
ALTER TABLE employment_verifications ADD COLUMN anonymised_at timestamptz;

-- The retention job finds ended verifications not yet anonymised, oldest first.
CREATE INDEX address_verifications_retention ON address_verifications ((coalesce(completed_at, cancelled_at))) WHERE anonymised_at IS NULL AND status IN ('verified', 'not_verified', 'cancelled');
CREATE INDEX business_verifications_retention ON business_verifications ((coalesce(completed_at, cancelled_at))) WHERE anonymised_at IS NULL AND status IN ('verified', 'not_verified', 'cancelled');
CREATE INDEX guarantor_verifications_retention ON guarantor_verifications ((coalesce(completed_at, cancelled_at))) WHERE anonymised_at IS NULL AND state IN ('verified', 'not_verified', 'cancelled');
CREATE INDEX employment_verifications_retention ON employment_verifications ((coalesce(completed_at, cancelled_at))) WHERE anonymised_at IS NULL AND state IN ('verified', 'not_verified', 'cancelled');
-- Usage rows still holding a masked identity number, oldest first.
CREATE INDEX usage_events_masked_subject ON usage_events (created_at) WHERE subject LIKE '%*%';
CREATE INDEX uploaded_files_created ON uploaded_files (created_at);

-- Every data-subject request answered (`vouch subject export|erase`): who ran it, when, in which
-- scope, what was found and what was erased, per table. The person is named only by the blind
-- indexes of the identifiers asked for, never in clear.
CREATE TABLE subject_requests (
  id             uuid PRIMARY KEY,
  kind           text NOT NULL CHECK (kind IN ('export', 'erase')),
  -- [{"kind": "bvn", "index": "<HMAC>"}, ...]
  identifiers    jsonb NOT NULL,
  -- The organization the request was limited to; null: every organization (the operator).
  org_id         uuid,
  -- Who ran it: "cli" (with the operating system user), or a person's id later from the portal.
  actor          text NOT NULL,
  found          jsonb NOT NULL,
  erased         jsonb,
  created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX subject_requests_created ON subject_requests (created_at DESC);
