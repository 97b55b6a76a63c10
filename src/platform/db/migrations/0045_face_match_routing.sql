-- Which engine decides an organization's live face matches (issue 50, part 6; docs/upstreams.md,
-- "Face matches"): the local model (no row), or an upstream source, alone or with the local
-- engine as fallback or first. Read at each live face match. The source is an upstream's name;
-- `vouch upstream remove` refuses while an organization's face matches go to it.
CREATE TABLE face_match_routing (
  org_id      uuid PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
  engine      text NOT NULL CHECK (engine IN ('upstream', 'upstream-then-local', 'local-then-upstream')),
  source      text NOT NULL REFERENCES upstream_sources (name),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX face_match_routing_source ON face_match_routing (source);
