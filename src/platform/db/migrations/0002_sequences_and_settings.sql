-- Dense per-organization, per-mode, per-kind sequence numbers. A verification list is newest
-- first and never loses rows (cancelling is a state), so row number `offset` from the newest is
-- the row whose seq is `total - offset`: any page is an index range scan, however deep.
CREATE TABLE sequences (
  org_id  uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  mode    text NOT NULL CHECK (mode IN ('test', 'live')),
  kind    text NOT NULL,
  value   bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (org_id, mode, kind)
);

-- Installation-wide values every process shares (e.g. the key that signs file URLs).
CREATE TABLE settings (
  name        text PRIMARY KEY,
  value       text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
