-- How an endpoint's deliveries are signed (issue 19, item 5; docs/webhooks.md "Signing"):
-- standard (Standard Webhooks: webhook-signature), verifyme (x-verifyme-signature: hex
-- HMAC-SHA512 of the raw body, as VerifyMe/QoreID send it) or both. Existing endpoints keep
-- Standard Webhooks. Additive: a release before this one neither reads nor writes the column, and
-- the endpoints it sets get the default.
ALTER TABLE webhook_endpoints ADD COLUMN signing text NOT NULL DEFAULT 'standard'
  CHECK (signing IN ('standard', 'verifyme', 'both'));
