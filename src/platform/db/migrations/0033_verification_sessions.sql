-- Verification sessions (issue 20; docs/sessions.md): a customer's backend creates one for an end
-- user, who then completes it on Vouch's hosted page or in the web SDK (consent, ID, liveness).

-- `id` is internal (foreign keys, webhook deliveries); the API names a session by `public_id`
-- (ses_...). `seq` numbers an organization's sessions per mode densely, for the list.
CREATE TABLE verification_sessions (
  id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  public_id           text NOT NULL UNIQUE,
  org_id              uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  mode                text NOT NULL CHECK (mode IN ('test', 'live')),
  seq                 bigint NOT NULL,
  reference           text NOT NULL,
  status              text NOT NULL DEFAULT 'created'
                      CHECK (status IN ('created', 'in_progress', 'verified', 'failed', 'expired', 'cancelled')),
  -- Closed reason codes of a failure (docs/sessions.md), the first one shown as subStatus.
  reasons             jsonb NOT NULL DEFAULT '[]',
  cancelled_by        text CHECK (cancelled_by IN ('customer', 'user', 'erasure')),
  -- BVN, NIN, VNIN, DRIVERS_LICENSE: what the end user may give.
  id_types            jsonb NOT NULL,
  -- Encrypted (PROTECTED_COLUMNS): the applicant the customer prefilled, the metadata it sent.
  applicant           jsonb NOT NULL,
  metadata            jsonb NOT NULL,
  check_liveness      boolean NOT NULL,
  check_face_match    boolean NOT NULL,
  redirect_url        text,
  -- The consent the customer says it obtained (as on every workflow); the reference is encrypted.
  consent_reference   text,
  consent_obtained_at timestamptz,
  consent_channel     text,
  -- The end user's own consent on the page: {acceptedAt, ip, textVersion}; encrypted.
  user_consent        jsonb,
  -- The ID the lookup found: its type, the number (encrypted) and the record (encrypted).
  id_type             text,
  id_number           text,
  identity            jsonb,
  id_attempts         integer NOT NULL DEFAULT 0,
  liveness_attempts   integer NOT NULL DEFAULT 0,
  -- Results of the checks that ran: {idLookup, liveness, faceMatch}; scores and closed codes only.
  checks              jsonb NOT NULL DEFAULT '{}',
  -- What the completion cost (kobo) and its usage row; 0 in test mode.
  price               bigint NOT NULL DEFAULT 0,
  usage_id            bigint,
  created_at          timestamptz NOT NULL DEFAULT now(),
  expires_at          timestamptz NOT NULL,
  started_at          timestamptz,
  completed_at        timestamptz,
  cancelled_at        timestamptz,
  expired_at          timestamptz,
  anonymised_at       timestamptz,
  UNIQUE (org_id, mode, seq),
  UNIQUE (org_id, mode, reference)
);
-- The expiry sweep: open sessions by their expiry.
CREATE INDEX verification_sessions_open ON verification_sessions (expires_at) WHERE status IN ('created', 'in_progress');
-- Retention: ended sessions by when they ended.
CREATE INDEX verification_sessions_ended ON verification_sessions (org_id, coalesce(completed_at, cancelled_at, expired_at))
  WHERE anonymised_at IS NULL AND status IN ('verified', 'failed', 'expired', 'cancelled');

-- The end user's bearer capabilities: only the SHA-256 of each 32-byte random token is kept.
-- `url`: in the hosted link; `client_secret`: for the web SDK; `handoff`: minted by a short link.
CREATE TABLE session_tokens (
  token_hash  text PRIMARY KEY,
  session_id  bigint NOT NULL REFERENCES verification_sessions (id) ON DELETE CASCADE,
  kind        text NOT NULL CHECK (kind IN ('url', 'client_secret', 'handoff')),
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX session_tokens_session ON session_tokens (session_id);

-- Cross-device handoff: a short code (hashed) that redirects to the hosted page for 15 minutes.
CREATE TABLE session_handoffs (
  code_hash   text PRIMARY KEY,
  session_id  bigint NOT NULL REFERENCES verification_sessions (id) ON DELETE CASCADE,
  expires_at  timestamptz NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX session_handoffs_expiry ON session_handoffs (expires_at);

-- One liveness attempt: the challenges the server chose, and the engine's decision (scores,
-- closed reasons, challenge outcomes; no images).
CREATE TABLE session_liveness_attempts (
  id            text PRIMARY KEY,
  session_id    bigint NOT NULL REFERENCES verification_sessions (id) ON DELETE CASCADE,
  number        integer NOT NULL,
  challenges    jsonb NOT NULL,
  status        text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'processing', 'passed', 'failed')),
  decision      jsonb,
  created_at    timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz NOT NULL,
  submitted_at  timestamptz,
  decided_at    timestamptz,
  UNIQUE (session_id, number)
);

-- The frames of an attempt: the bytes are in the encrypted file store (uploaded_files); the
-- SHA-256 of each frame stays after the file is purged, to refuse frames replayed later.
CREATE TABLE session_frames (
  attempt_id  text NOT NULL REFERENCES session_liveness_attempts (id) ON DELETE CASCADE,
  position    integer NOT NULL,
  file_id     uuid REFERENCES uploaded_files (id) ON DELETE SET NULL,
  sha256      text NOT NULL,
  at_ms       integer NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (attempt_id, position)
);
CREATE INDEX session_frames_sha256 ON session_frames (sha256);
CREATE INDEX session_frames_files ON session_frames (created_at) WHERE file_id IS NOT NULL;
