-- The personal data access log (0021) gets one row per access instead of one per record shown:
-- `resource_ids` names every record the access showed, in the order shown (a list page's 20, a
-- detail's one; null for an export of many). A `/v1` list page wrote 20 rows, each with four
-- index entries, in the statement that reads the page, and that write and its WAL were most of
-- what a logged page cost the database: at 500 pages/s its median answer took 10-17 ms against
-- 3.5-5 ms unlogged (docs/benchmarks.md, "eleventh session"). Now one row, one entry per btree.
--
-- The records stay findable: a GIN index on `resource_ids` answers "who saw record X"
-- (`resource_ids @> ARRAY[X]`), with its pending list (fastupdate, the default) so an insert does
-- not update the index once per record. The view `personal_data_access_records` reads the log
-- one line per record shown, as the table was before.
--
-- upgrade: rolling `resource_id` stays, for the previous release's inserts: a trigger moves its
-- value into `resource_ids`, so its rows are found like this release's. While both run, the
-- previous release's access-log query shows no record ids (docs/upgrades.md). A later migration
-- drops the column and the trigger.
ALTER TABLE personal_data_access ADD COLUMN resource_ids text[];
UPDATE personal_data_access SET resource_ids = ARRAY[resource_id], resource_id = NULL WHERE resource_id IS NOT NULL;
DROP INDEX personal_data_access_resource;
CREATE INDEX personal_data_access_resource ON personal_data_access USING gin (resource_ids);

CREATE FUNCTION personal_data_access_one_id() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW.resource_ids := ARRAY[NEW.resource_id];
  NEW.resource_id := NULL;
  RETURN NEW;
END
$$;
CREATE TRIGGER personal_data_access_one_id BEFORE INSERT ON personal_data_access
  FOR EACH ROW WHEN (NEW.resource_id IS NOT NULL) EXECUTE FUNCTION personal_data_access_one_id();

CREATE VIEW personal_data_access_records AS
  SELECT access.id, shown.position, access.at, access.org_id, access.mode, access.actor_kind, access.actor_id,
    access.channel, access.action, access.resource, shown.resource_id, access.ip
  FROM personal_data_access access
  CROSS JOIN LATERAL unnest(coalesce(access.resource_ids, ARRAY[NULL]::text[])) WITH ORDINALITY AS shown (resource_id, position);
