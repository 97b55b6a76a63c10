-- Rate limits (docs/rate-limits.md): an organization's own limit per minute for each of its
-- secrets (null: the server's default), and the shared counters of fixed one-window buckets that
-- API processes on PostgreSQL add their hits to (with REDIS_URL, Redis keeps them instead).
ALTER TABLE organizations ADD COLUMN rate_limit_per_minute integer CHECK (rate_limit_per_minute > 0);

CREATE TABLE rate_limit_counters (
  key text NOT NULL,
  window_start bigint NOT NULL,
  hits bigint NOT NULL,
  PRIMARY KEY (key, window_start)
);
