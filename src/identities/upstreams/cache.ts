import { createHmac } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../../platform/db/schema.js';
import type { UpstreamType } from './adapter.js';

/**
 * Upstream records kept for their type's TTL (`vouch upstream cache-ttl`, off by default). Rows
 * are found by an HMAC of the identifier, so the table never holds a number as its key.
 */
export class UpstreamCache {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly hashKey: Buffer,
  ) {}

  private hash(type: UpstreamType, key: string): string {
    return createHmac('sha256', this.hashKey).update(`${type}\0${key}`).digest('hex');
  }

  async get(type: UpstreamType, key: string, now: Date): Promise<Record<string, unknown> | undefined> {
    const row = await this.db
      .selectFrom('upstream_cache')
      .select('record')
      .where('type', '=', type)
      .where('key_hash', '=', this.hash(type, key))
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return row?.record;
  }

  async put(type: UpstreamType, key: string, record: object, source: string, expiresAt: Date): Promise<void> {
    const values = { record: JSON.stringify(record), source, expires_at: expiresAt };
    await this.db
      .insertInto('upstream_cache')
      .values({ type, key_hash: this.hash(type, key), ...values })
      .onConflict((oc) => oc.columns(['type', 'key_hash']).doUpdateSet(values))
      .execute();
  }

  /** Deletes expired rows: they are never read, and the NDPA asks not to keep them. */
  async purge(now: Date): Promise<void> {
    await this.db.deleteFrom('upstream_cache').where('expires_at', '<=', now).execute();
  }
}
