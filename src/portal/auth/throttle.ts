import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sql, type Kysely } from 'kysely';
import { addressKey } from '../../platform/client-address.js';
import type { DB } from '../../platform/db/schema.js';
import { ApiError } from '../../platform/errors.js';

export interface AuthCountersTable {
  key: string;
  hits: number;
  window_ends_at: Date;
}

declare module '../../platform/db/schema.js' {
  interface DB {
    auth_counters: AuthCountersTable;
  }
}

export interface CounterRule {
  /** Hits a window allows; the hit that reaches it blocks the key. */
  limit: number;
  windowMs: number;
  /** How long a key stays blocked from the hit that reached the limit. */
  blockMs: number;
}

/**
 * A counter's key as stored: its kind, then a SHA-256 of each part (they name an email and a
 * client address). Every key of an email starts with `counterKey(kind, email)`.
 */
export function counterKey(kind: string, ...parts: string[]): string {
  return [kind, ...parts.map((part) => createHash('sha256').update(part).digest('hex'))].join(':');
}

/**
 * Fixed-window counters in the database, so every API process counts the same attempts. `hit`
 * counts before the work it guards is done (a burst of parallel guesses cannot all pass a check
 * made before any of them is counted), in one statement.
 */
export class AuthCounters {
  constructor(private readonly db: Kysely<DB>) {}

  /**
   * Counts one hit. `blockedUntil` is set when the key was already blocked (the hit is not
   * counted) or when this hit reached the limit (`last`: it may still be tried).
   */
  async hit(key: string, rule: CounterRule): Promise<{ blockedUntil?: Date; last: boolean }> {
    const window = `${rule.windowMs} milliseconds`;
    const block = `${rule.blockMs} milliseconds`;
    const { rows } = await sql<{ hits: number; window_ends_at: Date }>`
      insert into auth_counters as c (key, hits, window_ends_at)
      values (${key}, 1, now() + (case when ${rule.limit}::int <= 1 then ${block} else ${window} end)::interval)
      on conflict (key) do update set
        hits = case when c.window_ends_at <= now() then 1 else c.hits + 1 end,
        window_ends_at = case
          when c.window_ends_at <= now() then now() + ${window}::interval
          when c.hits + 1 >= ${rule.limit}::int then greatest(c.window_ends_at, now() + ${block}::interval)
          else c.window_ends_at end
      where c.window_ends_at <= now() or c.hits < ${rule.limit}::int
      returning hits, window_ends_at`.execute(this.db);
    const row = rows[0];
    if (!row) {
      const blocked = await this.db.selectFrom('auth_counters').select('window_ends_at').where('key', '=', key).executeTakeFirst();
      return { blockedUntil: blocked?.window_ends_at ?? new Date(Date.now() + rule.blockMs), last: false };
    }
    const last = Number(row.hits) >= rule.limit;
    return last ? { blockedUntil: new Date(row.window_ends_at), last } : { last };
  }

  /** When the key is blocked, until when; else undefined. Counts nothing. */
  async blockedUntil(key: string, limit: number): Promise<Date | undefined> {
    const row = await this.db
      .selectFrom('auth_counters')
      .select(['hits', 'window_ends_at'])
      .where('key', '=', key)
      .where('window_ends_at', '>', sql<Date>`now()`)
      .executeTakeFirst();
    return row && Number(row.hits) >= limit ? new Date(row.window_ends_at) : undefined;
  }

  async clear(key: string): Promise<void> {
    await this.db.deleteFrom('auth_counters').where('key', '=', key).execute();
  }

  /** Drops counters whose window ended; called now and then by the routes that count. */
  async sweep(): Promise<void> {
    await this.db.deleteFrom('auth_counters').where('window_ends_at', '<', sql<Date>`now() - interval '1 hour'`).execute();
  }
}

/** Attempts per client address on the unauthenticated account routes, per window. */
export const ATTEMPTS_PER_IP: CounterRule = { limit: 30, windowMs: 15 * 60 * 1000, blockMs: 15 * 60 * 1000 };

/** Seconds until `until`, at least 1 (a Retry-After). */
export function secondsUntil(until: Date): number {
  return Math.max(1, Math.ceil((until.getTime() - Date.now()) / 1000));
}

/**
 * A preValidation answering 429 with Retry-After once a client address (`request.ip`, which
 * honours the trusted proxies) has used up its attempts on the account routes. Counted in the
 * database, so the budget holds however many API processes serve the address.
 */
export function perIpLimit(db: Kysely<DB>, rule: CounterRule = ATTEMPTS_PER_IP) {
  const counters = new AuthCounters(db);
  let lastSweep = 0;
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (Date.now() - lastSweep > 60_000) {
      lastSweep = Date.now();
      await counters.sweep();
    }
    const { blockedUntil, last } = await counters.hit(counterKey('ip', addressKey(request.ip)), rule);
    if (blockedUntil && !last) {
      const wait = secondsUntil(blockedUntil);
      reply.header('retry-after', String(wait));
      throw new ApiError('RATE_LIMITED', `Too many attempts from your network: try again in ${Math.ceil(wait / 60)} minute(s)`);
    }
  };
}
