-- The portal's status filters (0009) count their matches up to 10,000 from the index alone: the
-- state column the indexed expression is computed from is carried in the index (INCLUDE), so
-- PostgreSQL can answer the count with an index-only scan instead of fetching every matching
-- row from the table. With a million address verifications, two thirds in progress, the count
-- of `status=in_progress` read ~1,700-1,800 table pages (22 ms as a sequential scan, 340 ms
-- through the old index from a cold cache); from this index, 97 pages and 2-4 ms
-- (docs/benchmarks.md, "ninth session"). Employment verifications and sessions filter on a plain
-- column, which their indexes already hold.
DROP INDEX address_verifications_explorer_status;
CREATE INDEX address_verifications_explorer_status ON address_verifications
  (org_id, mode, (CASE status WHEN 'pending' THEN 'in_progress' WHEN 'visiting' THEN 'in_progress' ELSE status END), seq DESC) INCLUDE (status);
DROP INDEX business_verifications_explorer_status;
CREATE INDEX business_verifications_explorer_status ON business_verifications
  (org_id, mode, (CASE status WHEN 'pending' THEN 'in_progress' WHEN 'visiting' THEN 'in_progress' ELSE status END), seq DESC) INCLUDE (status);
DROP INDEX guarantor_verifications_explorer_status;
CREATE INDEX guarantor_verifications_explorer_status ON guarantor_verifications
  (org_id, mode, (CASE state WHEN 'awaiting_address' THEN 'in_progress' ELSE state END), seq DESC) INCLUDE (state);
