import type { FastifyRequest } from 'fastify';
import { sql, type Kysely } from 'kysely';
import { Batches } from '../platform/batches.js';
import type { DB } from '../platform/db/schema.js';
import type { AccessEntry } from './service.js';

/** One list answered: what its access-log rows share, and the records it showed (a row each). */
interface ListView {
  shared: Omit<AccessEntry, 'resourceId'>;
  ids: readonly (string | number)[];
}

/**
 * Access-log rows of the requests in flight, written together (src/platform/batches.ts): one
 * INSERT (and one commit, one WAL flush) in flight per database at a time; rows arriving meanwhile
 * go in the next one. Each caller's promise settles when the statement holding its rows has
 * committed (or failed), so a list answered is still a list logged, as with one INSERT per
 * request. The `/v1` lists, which clients poll at high rates, write through it.
 */
function accessLogBatches(db: Kysely<DB>): Batches<ListView, void> {
  return new Batches(async (_, views) => {
    await insertViews(db, views);
    return views.map(() => undefined);
  }, Infinity);
}

/**
 * Any number of lists' rows in one statement of nine parameters, each an array of one element per
 * list (not per row: a page's rows differ only in the record id), the ids of each list a JSON
 * array that PostgreSQL expands into its rows.
 */
async function insertViews(db: Kysely<DB>, views: readonly ListView[]): Promise<void> {
  const column = <T>(pick: (shared: ListView['shared']) => T) => views.map((view) => pick(view.shared));
  const ids = views.map((view) => JSON.stringify(view.ids.map(String)));
  await sql`
    insert into personal_data_access (org_id, mode, actor_kind, actor_id, channel, action, resource, resource_id, ip)
    select v.org_id, v.mode, v.actor_kind, v.actor_id, v.channel, v.action, v.resource, shown.id, v.ip
    from unnest(
      ${column((shared) => shared.orgId)}::uuid[], ${column((shared) => shared.mode)}::text[], ${column((shared) => shared.actorKind)}::text[],
      ${column((shared) => shared.actorId)}::text[], ${column((shared) => shared.channel)}::text[], ${column((shared) => shared.action)}::text[],
      ${column((shared) => shared.resource)}::text[], ${ids}::text[], ${column((shared) => shared.ip)}::text[]
    ) as v(org_id, mode, actor_kind, actor_id, channel, action, resource, ids, ip)
    cross join lateral jsonb_array_elements_text(v.ids::jsonb) as shown(id)`.execute(db);
}

const batchers = new WeakMap<Kysely<DB>, Batches<ListView, void>>();

/** An API list's page (`GET /v1/...`), one row per record, written with the other requests' in flight. */
export function logApiList(db: Kysely<DB>, request: FastifyRequest, resource: string, ids: readonly (string | number)[]): Promise<void> {
  if (ids.length === 0) return Promise.resolve();
  let batches = batchers.get(db);
  if (!batches) {
    batches = accessLogBatches(db);
    batchers.set(db, batches);
  }
  const { auth } = request;
  return batches.add('', { shared: { orgId: auth.orgId, mode: auth.mode, actorKind: 'api', actorId: auth.secretId, channel: 'api', action: 'list', resource, ip: request.ip }, ids });
}
