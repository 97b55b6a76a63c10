-- Lawful basis (issue 12, point 4): the consent a customer says it obtained before a check.
-- An organization may require it on every identity lookup and workflow creation.
ALTER TABLE organizations ADD COLUMN consent_required boolean NOT NULL DEFAULT false;

-- Workflow verifications keep their consent on the row. The reference is encrypted by the
-- field protection (src/platform/crypto/fields.ts: a customer's reference may name a person);
-- when it was obtained and through which channel are not personal and stay filterable.
ALTER TABLE address_verifications
  ADD COLUMN consent_reference text,
  ADD COLUMN consent_obtained_at timestamptz,
  ADD COLUMN consent_channel text;
ALTER TABLE business_verifications
  ADD COLUMN consent_reference text,
  ADD COLUMN consent_obtained_at timestamptz,
  ADD COLUMN consent_channel text;
ALTER TABLE guarantor_verifications
  ADD COLUMN consent_reference text,
  ADD COLUMN consent_obtained_at timestamptz,
  ADD COLUMN consent_channel text;
ALTER TABLE employment_verifications
  ADD COLUMN consent_reference text,
  ADD COLUMN consent_obtained_at timestamptz,
  ADD COLUMN consent_channel text;

-- Identity lookups are recorded as usage_events by a batched charge (0014) on the hot path:
-- their consent goes to a side table, written only when a request carried one.
CREATE TABLE lookup_consents (
  usage_id             bigint PRIMARY KEY REFERENCES usage_events (id) ON DELETE CASCADE,
  org_id               uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  consent_reference    text NOT NULL,
  consent_obtained_at  timestamptz NOT NULL,
  consent_channel      text NOT NULL,
  created_at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX lookup_consents_org ON lookup_consents (org_id, usage_id);

-- Access to personal data (issue 12, point 5): who viewed or exported which verification, how
-- and from where. No personal data here: resources are named by kind and internal id.
CREATE TABLE personal_data_access (
  id           bigserial PRIMARY KEY,
  at           timestamptz NOT NULL DEFAULT now(),
  org_id       uuid REFERENCES organizations (id) ON DELETE SET NULL,
  mode         text CHECK (mode IN ('test', 'live')),
  -- api: an API secret (actor_id = api_secrets.id); member: a person in the portal;
  -- operator: a person in the console (actor_id = people.id); agent: a field agent, by the agent API
  -- or the field app (actor_id = field_agents.id); cli: the command line (actor_id null).
  actor_kind   text NOT NULL CHECK (actor_kind IN ('api', 'member', 'operator', 'agent', 'cli')),
  actor_id     text,
  channel      text NOT NULL CHECK (channel IN ('api', 'portal', 'console', 'field', 'cli')),
  action       text NOT NULL CHECK (action IN ('view', 'list', 'export')),
  resource     text NOT NULL,
  resource_id  text,
  ip           text
);
CREATE INDEX personal_data_access_at ON personal_data_access (at DESC, id DESC);
CREATE INDEX personal_data_access_org ON personal_data_access (org_id, at DESC);
CREATE INDEX personal_data_access_resource ON personal_data_access (resource, resource_id);
