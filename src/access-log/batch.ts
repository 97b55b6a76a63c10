import type { FastifyRequest } from 'fastify';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../platform/db/schema.js';
import type { AccessEntry } from './service.js';

interface Waiting {
  entries: readonly AccessEntry[];
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

  write(entries: readonly AccessEntry[]): Promise<void> {
    if (entries.length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ entries, resolve, reject });
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
          await insertEntries(this.db, batch.flatMap((waiting) => waiting.entries));
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

/** Any number of rows in one statement of ten parameters (arrays unnested), whatever the batch's size. */
async function insertEntries(db: Kysely<DB>, entries: readonly AccessEntry[]): Promise<void> {
  const column = <T>(pick: (entry: AccessEntry) => T) => entries.map(pick);
  await sql`
    insert into personal_data_access (org_id, mode, actor_kind, actor_id, channel, action, resource, resource_id, ip)
    select * from unnest(
      ${column((entry) => entry.orgId)}::uuid[], ${column((entry) => entry.mode)}::text[], ${column((entry) => entry.actorKind)}::text[],
      ${column((entry) => entry.actorId)}::text[], ${column((entry) => entry.channel)}::text[], ${column((entry) => entry.action)}::text[],
      ${column((entry) => entry.resource)}::text[], ${column((entry) => (entry.resourceId === null ? null : String(entry.resourceId)))}::text[],
      ${column((entry) => entry.ip)}::text[])`.execute(db);
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
  return batcher.write(ids.map((id) => ({ orgId: auth.orgId, mode: auth.mode, actorKind: 'api', actorId: auth.secretId, channel: 'api', action: 'list', resource, resourceId: id, ip: request.ip })));
}
