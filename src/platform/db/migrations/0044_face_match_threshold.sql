-- An organization's face-match threshold (issue 50; docs/operators.md, "Face match threshold"):
-- the lowest score out of 100 its face matches call a match, set by an operator within the bounds
-- the console allows (MATCH_SCORE_BOUNDS in src/identities/biometrics/score.ts, checked there, so
-- that the bounds can move with a new measurement without a migration). No row, or null: the
-- default. Read at each match by the biometrics endpoint and by a session's face match.
CREATE TABLE face_match_settings (
  org_id              uuid PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
  matching_threshold  integer CHECK (matching_threshold BETWEEN 1 AND 99),
  updated_at          timestamptz NOT NULL DEFAULT now()
);
