-- Where a business verification's address came from (issue 19): the request ('applicant'), or the
-- company's head-office address in the corporate registry, found by rcNumber when the request
-- sent no street, lga or state ('corporate_registry'). Rows before this migration came from requests.
ALTER TABLE business_verifications
  ADD COLUMN address_source text NOT NULL DEFAULT 'applicant'
  CHECK (address_source IN ('applicant', 'corporate_registry'));
