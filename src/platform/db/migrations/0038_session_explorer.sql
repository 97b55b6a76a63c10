-- Verification sessions in the portal's explorer and the console's summary (issue 20 §5;
-- docs/portal-verifications.md, docs/operators.md).

-- The explorer's status filter: an organization's sessions of a mode in one state, newest first.
CREATE INDEX verification_sessions_explorer_status ON verification_sessions (org_id, mode, status, seq DESC);
-- The console's summary: sessions created in a window, and liveness attempts decided in it.
CREATE INDEX verification_sessions_created ON verification_sessions (created_at);
CREATE INDEX session_liveness_attempts_decided ON session_liveness_attempts (decided_at) WHERE decided_at IS NOT NULL;
