-- Verification sessions that ended against a wallet that could not pay their price (docs/sessions.md,
-- "Charging"): the outcome stands, but the registry's record is not shown for them, so an emptied
-- wallet cannot turn sessions into free identity lookups (docs/security.md).
ALTER TABLE verification_sessions ADD COLUMN unpaid boolean NOT NULL DEFAULT false;
