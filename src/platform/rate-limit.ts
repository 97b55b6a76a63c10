import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Redis } from 'ioredis';
import { sql, type Kysely } from 'kysely';
import type { Config } from '../config.js';
import type { Database } from './db/database.js';
import type { DB } from './db/schema.js';
import { ApiError } from './errors.js';

export interface RateLimitCountersTable {
  key: string;
  /** Start of the window, in ms since the epoch (windows are aligned to their length). */
  window_start: number;
  hits: number;
}

declare module './db/schema.js' {
  interface DB {
    rate_limit_counters: RateLimitCountersTable;
  }
}

type IncrCallback = (err: Error | null, result: { current: number; ttl: number }) => void;

interface Bucket {
  windowStart: number;
  /** The shared count the database returned at the last flush (this process's hits included). */
  known: number;
  /** Hits being added by the flush in flight. */
  sending: number;
  /** Hits since, not yet sent. */
  pending: number;
}

export interface PostgresStoreOptions {
  /** How often hits are added to the shared counters (and others' hits read back). */
  flushMs: number;
}

/**
 * A @fastify/rate-limit store whose counts are shared by every API process through PostgreSQL
 * without a database write per request: each process counts locally and, every `flushMs`, adds
 * its hits to `rate_limit_counters` in one statement and reads the shared totals back. Windows are
 * fixed (aligned to the time window), so all processes count the same minute. A burst can
 * overshoot a limit by what other processes admitted since their last flush (at most `flushMs`
 * of their traffic): the price of not putting a row lock on every request's path.
 */
export class PostgresRateLimitStore {
  private readonly buckets = new Map<string, Bucket>();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> | undefined;
  private lastPurge = 0;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly onError: (err: Error) => void,
    options: PostgresStoreOptions = { flushMs: 200 },
  ) {
    this.timer = setInterval(() => void this.flush(), options.flushMs);
    this.timer.unref();
  }

  /** The interface @fastify/rate-limit calls; one store serves every limiter (keys are prefixed). */
  incr(key: string, callback: IncrCallback, timeWindow: number, _max?: number): void {
    const now = Date.now();
    const windowStart = now - (now % timeWindow);
    let bucket = this.buckets.get(key);
    if (!bucket || bucket.windowStart !== windowStart) {
      bucket = { windowStart, known: 0, sending: 0, pending: 0 };
      this.buckets.set(key, bucket);
    }
    bucket.pending += 1;
    callback(null, { current: bucket.known + bucket.sending + bucket.pending, ttl: windowStart + timeWindow - now });
  }

  child(): this {
    return this;
  }

  /** Adds every bucket's pending hits to the shared counters and reads the totals back; one flush at a time. */
  flush(): Promise<void> {
    this.flushing ??= this.flushOnce().finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  close(): Promise<void> {
    clearInterval(this.timer);
    return this.flush();
  }

  private async flushOnce(): Promise<void> {
    const batch: [string, Bucket, number][] = [];
    for (const [key, bucket] of this.buckets) {
      if (bucket.pending === 0) continue;
      batch.push([key, bucket, bucket.pending]);
      bucket.sending += bucket.pending;
      bucket.pending = 0;
    }
    const now = Date.now();
    // Buckets of past windows are of no further use here.
    for (const [key, bucket] of this.buckets) if (bucket.sending === 0 && bucket.pending === 0 && bucket.windowStart + 3_600_000 < now) this.buckets.delete(key);
    if (batch.length === 0) return;
    try {
      const values = sql.join(batch.map(([key, bucket, hits]) => sql`(${key}, ${bucket.windowStart}::bigint, ${hits}::bigint)`));
      const { rows } = await sql<{ key: string; window_start: string | number; hits: string | number }>`
        insert into rate_limit_counters (key, window_start, hits) values ${values}
        on conflict (key, window_start) do update set hits = rate_limit_counters.hits + excluded.hits
        returning key, window_start, hits`.execute(this.db);
      const totals = new Map(rows.map((row) => [`${row.key}\u0000${Number(row.window_start)}`, Number(row.hits)]));
      for (const [key, bucket, hits] of batch) {
        bucket.sending -= hits;
        const total = totals.get(`${key}\u0000${bucket.windowStart}`);
        if (total !== undefined && this.buckets.get(key) === bucket) bucket.known = total;
      }
      if (now - this.lastPurge > 60_000) {
        this.lastPurge = now;
        await sql`delete from rate_limit_counters where window_start < ${now - 3_600_000}::bigint`.execute(this.db);
      }
    } catch (err) {
      // Not lost: counted locally all the same, and sent with the next flush.
      for (const [, bucket, hits] of batch) {
        bucket.sending -= hits;
        bucket.pending += hits;
      }
      this.onError(err as Error);
    }
  }
}

export interface RateLimitSettings {
  /** Requests per minute per secret (organization and mode) unless the organization has its own. */
  perSecret: number;
  /** Requests per minute per client address on the routes without an API secret. */
  perAddress: number;
}

/** Paths limited per client address: the portal's API and the respondents' pages (no API secret). */
function limitedByAddress(url: string): boolean {
  return url.startsWith('/api/') || url.startsWith('/respond/');
}

/**
 * Rate limits (docs/rate-limits.md) with @fastify/rate-limit: per secret on the API (after it has
 * authenticated; an organization may have its own limit, set by the operator), per client address
 * on the portal API and respondent pages. Answers 429 in the family's style with Retry-After and
 * the RateLimit-Limit/-Remaining/-Reset headers. Counts live in this process on the embedded
 * database (one process), in Redis when REDIS_URL is set, otherwise in PostgreSQL.
 */
export async function registerRateLimits(app: FastifyInstance, database: Database, config: Pick<Config, 'redisUrl' | 'rateLimits'>): Promise<void> {
  let store: (new () => PostgresRateLimitStore) | undefined;
  let redis: Redis | undefined;
  if (config.redisUrl) {
    redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false });
    redis.on('error', (err: Error) => app.log.warn({ err: err.message }, 'rate-limit store (Redis) unreachable'));
    app.addHook('onClose', async () => {
      redis!.disconnect();
    });
  } else if (database.kind === 'postgres') {
    const shared = new PostgresRateLimitStore(database.db, (err) => app.log.warn({ err: err.message }, 'rate-limit counters not shared'));
    app.addHook('onClose', () => shared.close());
    store = class {
      constructor() {
        return shared;
      }
    } as unknown as new () => PostgresRateLimitStore;
  }
  await app.register(rateLimit, {
    global: false,
    enableDraftSpec: true,
    timeWindow: 60_000,
    ...(redis ? { redis, nameSpace: 'vouch-rate-limit:' } : {}),
    ...(store ? { store } : {}),
    // A store that cannot be reached lets requests through rather than failing them all.
    skipOnError: true,
    errorResponseBuilder: (_request, context) =>
      new ApiError('RATE_LIMITED', `Too many requests: at most ${context.max} a minute; retry in ${Math.max(1, Math.ceil(context.ttl / 1000))} s`, {
        retryAfterSeconds: Math.max(1, Math.ceil(context.ttl / 1000)),
      }),
  });

  const { perSecret, perAddress } = config.rateLimits;
  const bySecret = app.rateLimit({
    max: (request: FastifyRequest) => request.auth.rateLimitPerMinute ?? perSecret,
    keyGenerator: (request: FastifyRequest) => `secret:${request.auth.orgId}:${request.auth.mode}`,
  });
  const byAddress = app.rateLimit({ max: perAddress, keyGenerator: (request: FastifyRequest) => `ip:${request.ip}` });
  // API routes authenticate in their onRequest hooks: the limit per secret runs just after, before
  // any validation or multipart reading.
  app.addHook('preValidation', (request, reply, done) => {
    if (!request.auth) return done();
    bySecret.call(app, request, reply).then(() => done(), done);
  });
  app.addHook('onRequest', (request, reply, done) => {
    if (!limitedByAddress(request.url)) return done();
    byAddress.call(app, request, reply).then(() => done(), done);
  });
}
