-- Watchlists for screening (issue 51, docs/screening-lists.md): the sources an operator loads or
-- syncs, each import a numbered version, and the entities shared between versions: a row holds
-- one entity as it was from the version that added (or changed) it until the version that
-- removed (or changed) it, so "source S at version V" is the rows with from_version <= V and
-- (to_version is null or to_version > V). An import writes its rows and the source's
-- current_version in one transaction: readers see the old version or the new one, never a mix.
CREATE TABLE screening_sources (
  name              text PRIMARY KEY CHECK (name ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
  format            text NOT NULL,
  -- null: an import-only source (the operator runs `vouch lists import`).
  url               text,
  -- ofac-csv: the alt.csv and add.csv beside sdn.csv, by file name.
  companion_urls    jsonb NOT NULL DEFAULT '{}'::jsonb,
  enabled           boolean NOT NULL DEFAULT true,
  sync_interval_seconds integer NOT NULL DEFAULT 900 CHECK (sync_interval_seconds >= 60),
  etag              text,
  last_modified     text,
  last_attempt_at   timestamptz,
  last_success_at   timestamptz,
  last_failure_at   timestamptz,
  last_error        text,
  last_outcome      text,
  current_version   integer NOT NULL DEFAULT 0,
  entity_count      integer NOT NULL DEFAULT 0,
  max_shrink        double precision NOT NULL DEFAULT 0.5 CHECK (max_shrink >= 0 AND max_shrink <= 1),
  created_at        timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE screening_list_versions (
  source        text NOT NULL REFERENCES screening_sources (name) ON DELETE CASCADE,
  version       integer NOT NULL CHECK (version > 0),
  loaded_at     timestamptz NOT NULL DEFAULT now(),
  entities      integer NOT NULL,
  added         integer NOT NULL,
  removed       integer NOT NULL,
  changed       integer NOT NULL,
  sha256        text NOT NULL,
  origin        text NOT NULL CHECK (origin IN ('import', 'sync')),
  -- Set by monitoring once the monitored subjects were screened again against this version.
  rescreened_at timestamptz,
  PRIMARY KEY (source, version)
);
-- Monitoring's "versions not re-screened yet".
CREATE INDEX screening_list_versions_pending ON screening_list_versions (loaded_at) WHERE rescreened_at IS NULL;

CREATE TABLE screening_entities (
  source        text NOT NULL REFERENCES screening_sources (name) ON DELETE CASCADE,
  entity_id     text NOT NULL,
  from_version  integer NOT NULL,
  to_version    integer,
  data          jsonb NOT NULL,
  -- The canonical JSON's sha256: an import compares it, not the whole entity, with the new file's.
  digest        text NOT NULL,
  PRIMARY KEY (source, entity_id, from_version)
);
-- The current rows of a source (the index is built from them, in entity_id order, by keyset).
CREATE UNIQUE INDEX screening_entities_current ON screening_entities (source, entity_id) WHERE to_version IS NULL;
-- "Entities added or changed in version V" (monitoring re-screens these).
CREATE INDEX screening_entities_from ON screening_entities (source, from_version);
-- "Entities of source S current at version V" for an older V: the rows closed after V.
CREATE INDEX screening_entities_to ON screening_entities (source, to_version) WHERE to_version IS NOT NULL;
