import type { FastifyRequest } from 'fastify';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../platform/db/schema.js';
import type { AccessEntry } from './service.js';

/** One list answered: what its access-log rows share, and the records it showed (a row each). */
interface ListView {
  shared: Omit<AccessEntry, 'resourceId'>;
  ids: readonly (string | number)[];
}

interface Waiting {
  view: ListView;
  resolve(): void;
  reject(err: unknown): void;
}

/**
 * Access-log rows of the requests in flight, written together: one INSERT (and one commit, one
 * WAL flush) in flight per database at a time; rows arriving meanwhile go in the next one. Each
 * caller's promise settles when the statement holding its rows has committed (or failed), so a
 * list answered is still a list logged, as with one INSERT per request. The `/v1` lists, which
 * clients poll at high rates, write through it.
 */
class AccessLogBatcher {
  private waiting: Waiting[] = [];
  private writing = false;

  constructor(private readonly db: Kysely<DB>) {}

  write(view: ListView): Promise<void> {
    if (view.ids.length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ view, resolve, reject });
      if (!this.writing) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.writing = true;
    try {
      while (this.waiting.length > 0) {
        const batch = this.waiting;
        this.waiting = [];
        try {
          await insertViews(this.db, batch.map((waiting) => waiting.view));
          for (const waiting of batch) waiting.resolve();
        } catch (err) {
          for (const waiting of batch) waiting.reject(err);
        }
      }
    } finally {
      this.writing = false;
    }
  }
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

const batchers = new WeakMap<Kysely<DB>, AccessLogBatcher>();

/** An API list's page (`GET /v1/...`), one row per record, written with the other requests' in flight. */
export function logApiList(db: Kysely<DB>, request: FastifyRequest, resource: string, ids: readonly (string | number)[]): Promise<void> {
  let batcher = batchers.get(db);
  if (!batcher) {
    batcher = new AccessLogBatcher(db);
    batchers.set(db, batcher);
  }
  const { auth } = request;
  return batcher.write({ shared: { orgId: auth.orgId, mode: auth.mode, actorKind: 'api', actorId: auth.secretId, channel: 'api', action: 'list', resource, ip: request.ip }, ids });
}
