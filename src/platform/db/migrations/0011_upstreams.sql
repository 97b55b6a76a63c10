-- Live lookups from upstream providers (issue 9): the sources an operator configures, the order
-- they are asked in per lookup type, an opt-in cache of their answers, and the health each server
-- reports. Configuration is tenant-neutral: every organization's live lookups use the same sources.

-- One provider account. The secret is AES-256-GCM ciphertext (VOUCH_ENCRYPTION_KEY), never plain.
CREATE TABLE upstream_sources (
  name text PRIMARY KEY CHECK (name ~ '^[a-z0-9][a-z0-9_-]{0,39}$' AND name NOT IN ('embedded', 'cache', 'sandbox')),
  kind text NOT NULL,
  url text NOT NULL,
  secret_encrypted text NOT NULL,
  types text[] NOT NULL CHECK (cardinality(types) > 0),
  timeout_ms integer NOT NULL DEFAULT 8000 CHECK (timeout_ms BETWEEN 100 AND 120000),
  created_at timestamptz NOT NULL DEFAULT now()
);

-- An explicit order for one lookup type: source names (upstreams and `embedded`), first asked
-- first. Without a row the type asks every upstream that serves it, oldest first, then `embedded`.
CREATE TABLE upstream_orders (
  type text PRIMARY KEY,
  sources text[] NOT NULL CHECK (cardinality(sources) > 0),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- How long an upstream's record is kept, per lookup type; no row (or 0) means not at all.
CREATE TABLE upstream_cache_ttls (
  type text PRIMARY KEY,
  seconds integer NOT NULL CHECK (seconds > 0)
);

-- Upstream records kept for their type's TTL. The identifier is never the key: key_hash is an
-- HMAC-SHA256 of it under a key derived from VOUCH_ENCRYPTION_KEY.
CREATE TABLE upstream_cache (
  type text NOT NULL,
  key_hash text NOT NULL,
  record jsonb NOT NULL,
  source text NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (type, key_hash)
);
CREATE INDEX upstream_cache_expires ON upstream_cache (expires_at);

-- What each server process last saw of each source: `vouch upstream status` reads it.
CREATE TABLE upstream_health (
  source text NOT NULL,
  instance text NOT NULL,
  circuit text NOT NULL CHECK (circuit IN ('closed', 'open', 'half_open')),
  consecutive_failures integer NOT NULL DEFAULT 0,
  last_failure_kind text,
  last_failure_at timestamptz,
  successes bigint NOT NULL DEFAULT 0,
  not_found bigint NOT NULL DEFAULT 0,
  failures bigint NOT NULL DEFAULT 0,
  latency_p50_ms integer,
  latency_p99_ms integer,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (source, instance)
);

-- Bumped by every configuration change, so servers reload by reading one row.
INSERT INTO settings (name, value) VALUES ('upstream_config_version', '0') ON CONFLICT (name) DO NOTHING;

-- Which source answered a lookup (`embedded`, `cache`, `sandbox`, or an upstream's name) and how
-- long the registry part took; null for work that is not a lookup.
ALTER TABLE usage_events ADD COLUMN source text;
ALTER TABLE usage_events ADD COLUMN latency_ms integer;
