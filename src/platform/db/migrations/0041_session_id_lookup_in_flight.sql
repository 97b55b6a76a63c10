-- Verification sessions: the ID cannot change under a liveness decision (docs/sessions.md,
-- "The end-user API"; docs/security.md, the review of verification sessions).

-- The ID lookup in flight: set when a try is reserved, cleared when its answer is applied or the
-- try is given back. One at a time per session; a reservation older than the time a lookup may
-- take (ID_LOOKUP_TIMEOUT_MS) was lost with its process and no longer holds the session.
ALTER TABLE verification_sessions ADD COLUMN id_lookup_started_at timestamptz;

-- The ID whose registry photo a liveness attempt's face was compared with, written when its
-- frames are claimed: the decision completes the session only while the session's ID is this
-- one. The number is encrypted like the session's own (PROTECTED_COLUMNS) and blanked with it.
ALTER TABLE session_liveness_attempts ADD COLUMN id_type text;
ALTER TABLE session_liveness_attempts ADD COLUMN id_number text;
