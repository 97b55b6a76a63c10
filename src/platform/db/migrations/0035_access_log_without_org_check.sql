-- The personal data access log (0021) is append-only evidence, written on every list of personal
-- data: one row per record shown, 20 on a default page. Its foreign key to organizations made
-- PostgreSQL check each row against organizations (and take a key-share lock on the
-- organization's row, the same row every wallet charge updates): about half of the insert's cost
-- (issue 22). Organizations are never deleted, so the key's ON DELETE SET NULL never fired; the
-- column keeps the organization's id as written.
ALTER TABLE personal_data_access DROP CONSTRAINT IF EXISTS personal_data_access_org_id_fkey;
