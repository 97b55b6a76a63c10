-- Screening of business verifications (issue 51: "a business verification or CAC lookup can screen
-- the company"; docs/screening.md, "Screening inside sessions, lookups and business
-- verifications"): an organization may ask for the company of every business verification of
-- theirs to be screened when it is created; the verification keeps the screening it made.
ALTER TABLE organization_screening ADD COLUMN businesses boolean NOT NULL DEFAULT false;

-- A screening erased with its subject's data (vouch privacy erase) leaves the verification without one.
ALTER TABLE business_verifications ADD COLUMN screening_id bigint REFERENCES screenings (id) ON DELETE SET NULL;
