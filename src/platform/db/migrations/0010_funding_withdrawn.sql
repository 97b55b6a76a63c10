-- Funding requests: a customer may withdraw a pending one (a transfer they will not make after
-- all). One reference per organization among the requests that stand (pending or confirmed): the
-- same transfer announced twice would otherwise tempt the operator to credit it twice.
ALTER TABLE funding_requests DROP CONSTRAINT funding_requests_status_check;
ALTER TABLE funding_requests ADD CONSTRAINT funding_requests_status_check
  CHECK (status IN ('pending', 'confirmed', 'rejected', 'withdrawn'));
CREATE UNIQUE INDEX funding_requests_standing_reference ON funding_requests (org_id, reference)
  WHERE status IN ('pending', 'confirmed');
