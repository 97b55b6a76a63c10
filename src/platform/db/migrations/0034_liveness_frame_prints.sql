-- Perceptual prints of liveness frames (issue 20; docs/liveness.md): a frame that resembles a
-- frame of another attempt of the same organization and mode closer than a new capture can is
-- refused as replayed. A print is the signs of brightness steps in a grey thumbnail (64 and 3072
-- bits); it cannot be turned back into a picture. Kept as long as the attempt's frames
-- (`expires_at`) and erased with its session.
CREATE TABLE liveness_frame_prints (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  org_id      uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  mode        text NOT NULL CHECK (mode IN ('test', 'live')),
  session_id  text NOT NULL,
  attempt_id  text NOT NULL,
  -- The 64-bit coarse print in four 16-bit bands: a copy shares at least one band with its original.
  band0       integer NOT NULL,
  band1       integer NOT NULL,
  band2       integer NOT NULL,
  band3       integer NOT NULL,
  fine        bytea NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL
);
CREATE INDEX liveness_frame_prints_band0 ON liveness_frame_prints (org_id, mode, band0);
CREATE INDEX liveness_frame_prints_band1 ON liveness_frame_prints (org_id, mode, band1);
CREATE INDEX liveness_frame_prints_band2 ON liveness_frame_prints (org_id, mode, band2);
CREATE INDEX liveness_frame_prints_band3 ON liveness_frame_prints (org_id, mode, band3);
CREATE INDEX liveness_frame_prints_session ON liveness_frame_prints (org_id, mode, session_id);
CREATE INDEX liveness_frame_prints_expiry ON liveness_frame_prints (expires_at);
