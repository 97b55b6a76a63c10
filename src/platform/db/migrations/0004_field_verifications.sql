-- Field verifications (address, business), the field agents who visit, and their uploaded photos.

-- Field agents work for the operator, not for a customer: no org_id. Only the SHA-256 of an
-- agent's credential is stored (32 random bytes, so a fast hash is enough).
CREATE TABLE field_agents (
  id               uuid PRIMARY KEY,
  name             text NOT NULL,
  email            text NOT NULL,
  phone            text NOT NULL,
  -- Canonical state names (src/locations/nigeria.ts) the agent covers.
  states           text[] NOT NULL,
  active           boolean NOT NULL DEFAULT true,
  credential_hash  text NOT NULL UNIQUE,
  credential_hint  text NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX field_agents_email ON field_agents (lower(email));

-- One row per live field verification to visit: who it is assigned to (none: waiting for the
-- operator) and whether it is still open. Test-mode verifications never send anyone out.
CREATE TABLE field_tasks (
  kind             text NOT NULL CHECK (kind IN ('address', 'business')),
  verification_id  bigint NOT NULL,
  org_id           uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  mode             text NOT NULL CHECK (mode IN ('test', 'live')),
  -- The canonical state of the place to visit: what agents cover.
  state            text NOT NULL,
  agent_id         uuid REFERENCES field_agents (id),
  created_at       timestamptz NOT NULL DEFAULT now(),
  assigned_at      timestamptz,
  closed_at        timestamptz,
  PRIMARY KEY (kind, verification_id)
);
CREATE INDEX field_tasks_agent_open ON field_tasks (agent_id, assigned_at) WHERE closed_at IS NULL;
CREATE INDEX field_tasks_unassigned ON field_tasks (created_at) WHERE agent_id IS NULL AND closed_at IS NULL;

-- Photos uploaded with visit reports; the bytes live in the file store (disk or S3), keyed by id.
CREATE TABLE uploaded_files (
  id            uuid PRIMARY KEY,
  org_id        uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  mode          text NOT NULL CHECK (mode IN ('test', 'live')),
  content_type  text NOT NULL,
  size          integer NOT NULL,
  sha256        text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX uploaded_files_org ON uploaded_files (org_id, mode, created_at);

-- Columns both kinds of field verification share. Every row belongs to one organization and
-- mode; `seq` is dense per (org, mode, kind) so a page at any depth is an index range scan.
CREATE TABLE address_verifications (
  id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  org_id              uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  mode                text NOT NULL CHECK (mode IN ('test', 'live')),
  seq                 bigint NOT NULL,
  reference           text NOT NULL,
  -- firstname, lastname, middlename, phone, idType, idNumber, gender, birthdate, photo.
  applicant           jsonb NOT NULL,
  -- SHA-256 of "<idType>:<idNumber>" for the address-by-identity lookup; never the number itself.
  applicant_id_key    text,
  street              text NOT NULL,
  city                text NOT NULL DEFAULT '',
  landmark            text NOT NULL DEFAULT '',
  lga                 text NOT NULL,
  state               text NOT NULL,
  country             text NOT NULL DEFAULT 'Nigeria',
  status              text NOT NULL DEFAULT 'pending'
                        CHECK (status IN ('pending', 'visiting', 'verified', 'not_verified', 'cancelled')),
  -- Why a verification was not verified: the record's subStatus.
  reason              text,
  -- What the creation cost (kobo); a cancellation before any visit refunds it.
  charged             bigint NOT NULL DEFAULT 0,
  -- Set when a verification is created on behalf of another resource (a guarantor).
  parent_kind         text,
  parent_id           text,
  visit_started_at    timestamptz,
  latitude            double precision,
  longitude           double precision,
  photo_ids           uuid[] NOT NULL DEFAULT '{}',
  neighbor            jsonb,
  flagged_for_review  boolean NOT NULL DEFAULT false,
  review_reason       text,
  created_at          timestamptz NOT NULL DEFAULT now(),
  completed_at        timestamptz,
  cancelled_at        timestamptz,
  UNIQUE (org_id, mode, reference)
);
CREATE UNIQUE INDEX address_verifications_seq ON address_verifications (org_id, mode, seq);
CREATE INDEX address_verifications_identity ON address_verifications (mode, applicant_id_key, completed_at DESC)
  WHERE status = 'verified';

CREATE TABLE business_verifications (
  id                        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  org_id                    uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  mode                      text NOT NULL CHECK (mode IN ('test', 'live')),
  seq                       bigint NOT NULL,
  reference                 text NOT NULL,
  -- The contact person: firstname, lastname, middlename, phone, email, idType, idNumber, birthdate.
  applicant                 jsonb NOT NULL,
  name                      text NOT NULL,
  type                      text CHECK (type IN ('Formal', 'Informal')),
  rc_number                 text NOT NULL DEFAULT '',
  can_contact_poc           boolean NOT NULL DEFAULT false,
  street                    text NOT NULL,
  city                      text NOT NULL DEFAULT '',
  landmark                  text NOT NULL DEFAULT '',
  lga                       text NOT NULL,
  state                     text NOT NULL,
  country                   text NOT NULL DEFAULT 'Nigeria',
  status                    text NOT NULL DEFAULT 'pending'
                              CHECK (status IN ('pending', 'visiting', 'verified', 'not_verified', 'cancelled')),
  reason                    text,
  charged                   bigint NOT NULL DEFAULT 0,
  visit_started_at          timestamptz,
  latitude                  double precision,
  longitude                 double precision,
  photo_ids                 uuid[] NOT NULL DEFAULT '{}',
  neighbor                  jsonb,
  -- What the agent found: isBusinessKnown, isBusinessOwnerKnown, ownerVisitsFrequently,
  -- isCorrectBusinessName, businessNameFound, businessArea.
  findings                  jsonb,
  flagged_for_review        boolean NOT NULL DEFAULT false,
  review_reason             text,
  created_at                timestamptz NOT NULL DEFAULT now(),
  completed_at              timestamptz,
  cancelled_at              timestamptz,
  UNIQUE (org_id, mode, reference)
);
CREATE UNIQUE INDEX business_verifications_seq ON business_verifications (org_id, mode, seq);
