-- Verification links (issue 20 §5; docs/sessions.md, "Verification links"): a public, no-code link
-- a customer shares; each visitor who presses "Start verification" gets a new session of the
-- link's organization and mode, up to `session_limit` sessions and until `expires_at`.

-- `code` is the link's path (/l/<code>): 128 random bits, kept in clear because the portal shows
-- the link and its QR code again; the link is public by design and one code tells nothing of others.
-- `sessions_started` is counted in the transaction that creates each session, guarded by the limit.
CREATE TABLE verification_links (
  id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  public_id         text NOT NULL UNIQUE,
  code              text NOT NULL UNIQUE,
  org_id            uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  mode              text NOT NULL CHECK (mode IN ('test', 'live')),
  name              text NOT NULL,
  id_types          jsonb NOT NULL,
  check_liveness    boolean NOT NULL,
  check_face_match  boolean NOT NULL,
  redirect_url      text,
  reference_prefix  text,
  metadata          jsonb NOT NULL DEFAULT '{}',
  session_limit     integer NOT NULL CHECK (session_limit > 0),
  sessions_started  integer NOT NULL DEFAULT 0 CHECK (sessions_started >= 0 AND sessions_started <= session_limit),
  expires_at        timestamptz NOT NULL,
  disabled_at       timestamptz,
  created_by        uuid REFERENCES people (id) ON DELETE SET NULL,
  created_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX verification_links_org ON verification_links (org_id, mode, id DESC);

-- The link a session was started from (null for sessions the API created).
ALTER TABLE verification_sessions ADD COLUMN link_id bigint REFERENCES verification_links (id) ON DELETE SET NULL;
CREATE INDEX verification_sessions_link ON verification_sessions (link_id, id DESC) WHERE link_id IS NOT NULL;
