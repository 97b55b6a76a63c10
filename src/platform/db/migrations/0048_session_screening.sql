-- Screening inside verification sessions (issue 51; docs/sessions.md, "Screening"): a session
-- created with checks.screening screens the person its ID lookup finds (the registry's name and
-- date of birth) against the watchlists; the screening is a screening like any other
-- (src/screening), and the session's checks.screening names it. An organization may ask for it
-- on every session and every identity lookup of theirs (organization_screening).
ALTER TABLE verification_sessions ADD COLUMN check_screening boolean NOT NULL DEFAULT false;

CREATE TABLE organization_screening (
  org_id          uuid PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
  sessions        boolean NOT NULL DEFAULT false,
  lookups         boolean NOT NULL DEFAULT false,
  updated_at      timestamptz NOT NULL DEFAULT now()
);
