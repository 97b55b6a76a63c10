-- Screenings (issue 51, docs/screening.md): a person or an organization checked against the
-- watchlists, stored with its hits so that it can be reviewed and monitored.
--
-- `subject` and `metadata` are personal data, encrypted by the field protection
-- (src/platform/crypto/fields.ts); a hit's entity snapshot is public list data, kept in clear
-- so that a later version of the list does not rewrite what was found. A reference is not
-- unique: a monitored subject screened again under its reference (a profile change) replaces
-- the monitored one.
CREATE TABLE screenings (
  id                    bigserial PRIMARY KEY,
  org_id                uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  mode                  text NOT NULL CHECK (mode IN ('test', 'live')),
  seq                   bigint NOT NULL,
  reference             text NOT NULL,
  -- {type, name, firstname, middlename, lastname, dob, gender, nationality, aliases}
  subject               jsonb NOT NULL,
  metadata              jsonb NOT NULL,
  -- [{source, version}]: what it was screened against, in source order.
  lists                 jsonb NOT NULL,
  -- The sources asked for (every source when null): monitoring screens it against these.
  sources               text[],
  threshold             double precision NOT NULL,
  state                 text NOT NULL CHECK (state IN ('clear', 'pending_review', 'confirmed_match', 'cleared')),
  monitored             boolean NOT NULL DEFAULT false,
  monitoring_ended_at   timestamptz,
  monitoring_end_reason text,
  -- Monitoring is paid up to here (a month from creation is in the screening's price).
  monitoring_paid_until timestamptz,
  price                 bigint NOT NULL DEFAULT 0,
  consent_reference     text,
  consent_obtained_at   timestamptz,
  consent_channel       text,
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now(),
  UNIQUE (org_id, mode, seq)
);
CREATE INDEX screenings_reference ON screenings (org_id, mode, reference);
-- Monitoring walks the live monitored screenings in id order.
CREATE INDEX screenings_monitored ON screenings (id) WHERE monitored AND mode = 'live';

CREATE TABLE screening_hits (
  id            bigserial PRIMARY KEY,
  screening_id  bigint NOT NULL REFERENCES screenings (id) ON DELETE CASCADE,
  source        text NOT NULL,
  entity_id     text NOT NULL,
  list_version  integer NOT NULL,
  schema        text NOT NULL,
  name          text NOT NULL,
  matched_name  text NOT NULL,
  score         double precision NOT NULL,
  -- {aliases, topics, birthDates, nationalities, programs}: the entity as it was at list_version.
  entity        jsonb NOT NULL,
  -- Names the subject's own names: encrypted like the subject.
  explanation   text NOT NULL,
  decision      text CHECK (decision IN ('true_match', 'false_positive')),
  -- {decision, note, by, at}: encrypted (the note is free text).
  review        jsonb,
  reviewed_at   timestamptz,
  -- Monitoring found it after the screening was made.
  from_monitoring boolean NOT NULL DEFAULT false,
  created_at    timestamptz NOT NULL DEFAULT now(),
  UNIQUE (screening_id, source, entity_id)
);
CREATE INDEX screening_hits_confirmed ON screening_hits (reviewed_at) WHERE decision = 'true_match';
