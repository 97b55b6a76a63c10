-- The verification a webhook delivery reports on, so a verification's page can list the
-- deliveries it caused without reading every payload. Set by enqueueEvent from the event type
-- ("address.completed" -> address) and the record's id; NULL for events about no verification
-- (webhook.test).
ALTER TABLE webhook_deliveries ADD COLUMN resource_kind text;
ALTER TABLE webhook_deliveries ADD COLUMN resource_id bigint;
UPDATE webhook_deliveries
   SET resource_kind = split_part(event_type, '.', 1), resource_id = (payload -> 'data' ->> 'id')::bigint
 WHERE event_type <> 'webhook.test' AND json_typeof(payload -> 'data' -> 'id') = 'number';
CREATE INDEX webhook_deliveries_resource ON webhook_deliveries (org_id, mode, resource_kind, resource_id, id DESC)
  WHERE resource_kind IS NOT NULL;

-- The portal's verification lists filtered by status: newest first within one explorer status
-- (the status word the portal shows; "in_progress" covers the states before an outcome). The
-- expressions are the ones src/portal/verifications/kinds.ts filters on, so the planner uses them.
CREATE INDEX address_verifications_explorer_status ON address_verifications
  (org_id, mode, (CASE status WHEN 'pending' THEN 'in_progress' WHEN 'visiting' THEN 'in_progress' ELSE status END), seq DESC);
CREATE INDEX business_verifications_explorer_status ON business_verifications
  (org_id, mode, (CASE status WHEN 'pending' THEN 'in_progress' WHEN 'visiting' THEN 'in_progress' ELSE status END), seq DESC);
CREATE INDEX guarantor_verifications_explorer_status ON guarantor_verifications
  (org_id, mode, (CASE state WHEN 'awaiting_address' THEN 'in_progress' ELSE state END), seq DESC);
CREATE INDEX employment_verifications_explorer_status ON employment_verifications (org_id, mode, state, seq DESC);

-- The lists' search by the start of a reference (LIKE 'abc%'): a pattern index, as the
-- databases' collation is not plain C.
CREATE INDEX address_verifications_reference_prefix ON address_verifications (org_id, mode, reference text_pattern_ops);
CREATE INDEX business_verifications_reference_prefix ON business_verifications (org_id, mode, reference text_pattern_ops);
CREATE INDEX guarantor_verifications_reference_prefix ON guarantor_verifications (org_id, mode, reference text_pattern_ops);
CREATE INDEX employment_verifications_reference_prefix ON employment_verifications (org_id, mode, reference text_pattern_ops);

-- The portal's identity lookups list: usage events of the lookup types (LOOKUP_TYPES in
-- src/portal/verifications/lookups.ts; a test keeps the two lists equal), newest first, and
-- the same filtered by type, by outcome, or searched by the start of the masked number. The
-- workflow types (address, business, ...) are left out, so an organization with many workflow
-- verifications still finds its lookups at once.
CREATE INDEX usage_events_lookups ON usage_events (org_id, mode, created_at DESC, id DESC)
  WHERE type IN ('bvn_basic', 'bvn_premium', 'bvn_match', 'nin', 'nin_phone', 'vnin', 'drivers_license', 'vin', 'cac', 'tin', 'biometrics', 'address_marketplace');
CREATE INDEX usage_events_lookups_type ON usage_events (org_id, mode, type, created_at DESC, id DESC)
  WHERE type IN ('bvn_basic', 'bvn_premium', 'bvn_match', 'nin', 'nin_phone', 'vnin', 'drivers_license', 'vin', 'cac', 'tin', 'biometrics', 'address_marketplace');
CREATE INDEX usage_events_lookups_outcome ON usage_events (org_id, mode, outcome, created_at DESC, id DESC)
  WHERE type IN ('bvn_basic', 'bvn_premium', 'bvn_match', 'nin', 'nin_phone', 'vnin', 'drivers_license', 'vin', 'cac', 'tin', 'biometrics', 'address_marketplace');
CREATE INDEX usage_events_lookups_subject ON usage_events (org_id, mode, subject text_pattern_ops)
  WHERE type IN ('bvn_basic', 'bvn_premium', 'bvn_match', 'nin', 'nin_phone', 'vnin', 'drivers_license', 'vin', 'cac', 'tin', 'biometrics', 'address_marketplace');
