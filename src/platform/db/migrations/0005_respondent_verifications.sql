-- Verifications that a respondent completes (guarantor, employment), the single-use links
-- respondents follow, and the outbox of messages sent to them.

-- `id` is the public id; `seq` numbers an organization's rows per mode densely (see sequences),
-- so a page of the newest-first list is a range scan on (org_id, mode, seq) at any depth.
CREATE TABLE guarantor_verifications (
  id                       bigserial PRIMARY KEY,
  org_id                   uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  mode                     text NOT NULL CHECK (mode IN ('test', 'live')),
  seq                      bigint NOT NULL,
  reference                text NOT NULL,
  -- {idType, idNumber, firstname, middlename, lastname, phone, gender, birthdate, photo}
  applicant                jsonb NOT NULL,
  firstname                text NOT NULL,
  lastname                 text NOT NULL,
  phone                    text NOT NULL,
  email                    text NOT NULL,
  -- Record codes: NIN, BVN, FRSC, VIN.
  acceptable_id_types      jsonb NOT NULL,
  -- {street, city, lga, state, landmark, country}
  address                  jsonb NOT NULL,
  verify_address           boolean NOT NULL DEFAULT false,
  -- The address verification created for `verify_address`, through the addresses service.
  address_verification_id  bigint,
  address_outcome          text CHECK (address_outcome IN ('verified', 'failed', 'cancelled')),
  state                    text NOT NULL DEFAULT 'in_progress'
                           CHECK (state IN ('in_progress', 'awaiting_address', 'verified', 'not_verified', 'cancelled')),
  -- Why a verification ended not verified (the record's subStatus), e.g. GUARANTOR_DECLINED.
  reason                   text,
  -- What the guarantor answered: decision, ID type, masked ID number, match results. Never the full number.
  response                 jsonb,
  responded_at             timestamptz,
  price                    bigint NOT NULL DEFAULT 0,
  completed_at             timestamptz,
  cancelled_at             timestamptz,
  created_at               timestamptz NOT NULL DEFAULT now(),
  UNIQUE (org_id, mode, seq),
  UNIQUE (org_id, mode, reference)
);
CREATE INDEX guarantor_verifications_address ON guarantor_verifications (address_verification_id)
  WHERE address_verification_id IS NOT NULL;
-- The expiry sweep: verifications still waiting for an answer, oldest first.
CREATE INDEX guarantor_verifications_waiting ON guarantor_verifications (created_at) WHERE state = 'in_progress';

CREATE TABLE employment_verifications (
  id                   bigserial PRIMARY KEY,
  org_id               uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  mode                 text NOT NULL CHECK (mode IN ('test', 'live')),
  seq                  bigint NOT NULL,
  reference            text NOT NULL,
  -- {firstname, lastname, middlename, phone, gender, photo, idType, idNumber, birthdate}
  applicant            jsonb NOT NULL,
  employer_name        text NOT NULL,
  employer_email       text NOT NULL,
  employer_phone       text NOT NULL,
  -- What the applicant claims; dates as YYYY-MM-DD, no end date while still employed.
  claimed_title        text NOT NULL,
  claimed_start_date   text NOT NULL,
  claimed_end_date     text,
  state                text NOT NULL DEFAULT 'in_progress'
                       CHECK (state IN ('in_progress', 'verified', 'not_verified', 'cancelled')),
  reason               text,
  -- What the employer attested (title, dates, rehire, attestator and supervisor fields, ...).
  attestation          jsonb,
  responded_at         timestamptz,
  price                bigint NOT NULL DEFAULT 0,
  completed_at         timestamptz,
  cancelled_at         timestamptz,
  created_at           timestamptz NOT NULL DEFAULT now(),
  UNIQUE (org_id, mode, seq),
  UNIQUE (org_id, mode, reference)
);
CREATE INDEX employment_verifications_waiting ON employment_verifications (created_at) WHERE state = 'in_progress';

-- A respondent's link: only the SHA-256 of its 32-byte random token is kept.
CREATE TABLE respondent_links (
  token_hash       text PRIMARY KEY,
  kind             text NOT NULL CHECK (kind IN ('guarantor', 'employer')),
  org_id           uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  mode             text NOT NULL CHECK (mode IN ('test', 'live')),
  verification_id  bigint NOT NULL,
  expires_at       timestamptz NOT NULL,
  used_at          timestamptz,
  -- ID numbers the registry did not know; the link closes after a few, so it cannot probe the registry.
  failed_attempts  integer NOT NULL DEFAULT 0,
  created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX respondent_links_verification ON respondent_links (kind, verification_id);
CREATE INDEX respondent_links_open ON respondent_links (expires_at) WHERE used_at IS NULL;

-- Every message to a respondent. With SMTP_URL it is also sent and `sent_at` (or `error`) set;
-- without, operators read it with `vouch outbox list` and pass the link on themselves.
CREATE TABLE outbox_messages (
  id               bigserial PRIMARY KEY,
  org_id           uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  mode             text NOT NULL CHECK (mode IN ('test', 'live')),
  kind             text NOT NULL,
  verification_id  bigint NOT NULL,
  recipient        text NOT NULL,
  subject          text NOT NULL,
  text             text NOT NULL,
  html             text,
  link             text NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now(),
  sent_at          timestamptz,
  error            text
);
CREATE INDEX outbox_messages_unsent ON outbox_messages (id) WHERE sent_at IS NULL;
