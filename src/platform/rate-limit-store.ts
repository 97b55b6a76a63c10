import { sql, type Kysely } from 'kysely';
import type { DB } from './db/schema.js';

export interface RateLimitCountersTable {
  key: string;
  /** Start of the window, in ms since the epoch (windows are aligned to their length). */
  window_start: number;
  /** Quota claimed by every process (a claim that met the limit counts all it asked for), plus refused requests. */
  hits: number;
}

declare module './db/schema.js' {
  interface DB {
    rate_limit_counters: RateLimitCountersTable;
  }
}

type IncrCallback = (err: Error | null, result: { current: number; ttl: number }) => void;

interface Waiter {
  callback: IncrCallback;
  answered: boolean;
}

/** One key's count in one window, as this process sees it. */
interface Bucket {
  key: string;
  windowStart: number;
  windowEnd: number;
  /** The limit the latest request was counted against. */
  max: number;
  /** The shared counter after this process's last statement: quota every process claimed, plus refused requests. */
  known: number;
  /** Quota this process claimed and has not used yet. */
  lease: number;
  /** Requests refused here, not yet added to the shared counter (or in the statement in flight). */
  refused: number;
  refusedSending: number;
  /** Requests waiting for quota, in arrival order. */
  waiters: Waiter[];
  /** Requests since the last claim was sent, and when: this process's rate for the key. */
  hitsSinceClaim: number;
  lastClaimAt: number;
  /** What the last claim took beyond its waiters; the lease is topped up when half of it is left. */
  lastPrefetch: number;
  /** A claim for the key is in the statement in flight. */
  claiming: boolean;
}

interface Claim {
  bucket: Bucket;
  refused: number;
  /** Quota asked for: one per waiter, then the prefetch. */
  asked: number;
  waiters: Waiter[];
}

export interface PostgresStoreOptions {
  /** How often refused requests are added to the shared counters and stalled waits given up. */
  flushMs: number;
  /** A claim beyond its waiters covers this long of the process's recent traffic for the key. */
  leaseMs: number;
  /**
   * A claim the database has not answered this long after it was sent is given up: the requests
   * waiting for quota are let through, as when the database is down.
   */
  waitLimitMs: number;
  now: () => number;
}

const DEFAULTS: PostgresStoreOptions = { flushMs: 200, leaseMs: 500, waitLimitMs: 1_000, now: Date.now };
/** A claim takes at most this fraction of what is left, so processes' unused leases stay small near the limit. */
const SHARE_OF_REMAINING = 1 / 8;
/** After a failed or stalled statement, requests without quota are let through for this long without trying again. */
const RETRY_AFTER_ERROR_MS = 1_000;

/**
 * A @fastify/rate-limit store whose counts are shared by every API process through PostgreSQL,
 * exact in each fixed window (aligned to its length): a process admits a request only with quota
 * it claimed from `rate_limit_counters`, and a claim is granted only from what is left under the
 * limit (the row lock orders the claims), so all processes together never admit more than the
 * limit. To keep the database off most requests' path, a claim takes more than the requests
 * waiting for it: about `leaseMs` of the process's recent traffic for the key, at most an eighth
 * of what is left, so near the limit it is one request per claim (and one statement per request).
 * Quota a process claimed and did not use is lost with its window: at most `leaseMs` of the
 * process's traffic and an eighth of what was left when it claimed. Claims and refused requests of every key go in one statement, one
 * statement in flight at a time; requests that arrive meanwhile wait for the next.
 */
export class PostgresRateLimitStore {
  private readonly buckets = new Map<string, Bucket>();
  /** Buckets with waiters or a lease to top up. */
  private readonly due = new Set<Bucket>();
  /** Buckets with refused requests to add. */
  private readonly unsent = new Set<Bucket>();
  private readonly waiting = new Set<Waiter>();
  private readonly options: PostgresStoreOptions;
  private readonly timer: NodeJS.Timeout;
  private inFlight: Promise<void> | undefined;
  private scheduled = false;
  /** When the statement in flight was sent. */
  private sentAt: number | undefined;
  private failingUntil = 0;
  private lastPurge = 0;
  /** Statements sent to the database (claims and refused counts together): for tests and benchmarks. */
  statements = 0;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly onError: (err: Error) => void,
    options: Partial<PostgresStoreOptions> = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
    this.timer = setInterval(() => this.tick(), this.options.flushMs);
    this.timer.unref();
  }

  /** The interface @fastify/rate-limit calls; one store serves every limiter (keys are prefixed). */
  incr(key: string, callback: IncrCallback, timeWindow: number, max = Number.MAX_SAFE_INTEGER): void {
    const now = this.options.now();
    const bucket = this.bucket(key, now - (now % timeWindow), timeWindow);
    bucket.max = max;
    bucket.hitsSinceClaim += 1;
    if (bucket.lease > 0) {
      bucket.lease -= 1;
      if (!bucket.claiming && bucket.lease <= bucket.lastPrefetch / 2 && this.quotaMayBeLeft(bucket)) this.claimSoon(bucket);
      callback(null, { current: this.counted(bucket), ttl: Math.max(0, bucket.windowEnd - now) });
    } else if (!this.quotaMayBeLeft(bucket)) {
      // Every process's claims together reached the limit: no statement can grant more this window.
      bucket.refused += 1;
      this.unsent.add(bucket);
      callback(null, { current: this.counted(bucket), ttl: Math.max(0, bucket.windowEnd - now) });
    } else if (now < this.failingUntil) {
      callback(new Error('rate-limit counters unreachable'), { current: 0, ttl: Math.max(0, bucket.windowEnd - now) });
    } else {
      const waiter: Waiter = { callback, answered: false };
      bucket.waiters.push(waiter);
      this.waiting.add(waiter);
      this.claimSoon(bucket);
    }
  }

  child(): this {
    return this;
  }

  /** Sends what is pending (claims and refused requests) once the statement in flight is done. */
  async flush(): Promise<void> {
    while (this.inFlight) await this.inFlight;
    this.inFlight = this.send().finally(() => this.sent());
    await this.inFlight;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  private bucket(key: string, windowStart: number, timeWindow: number): Bucket {
    const id = `${key}\u0000${windowStart}`;
    let bucket = this.buckets.get(id);
    if (!bucket) {
      // The rate seen in the previous window sizes the first claims of this one.
      const previous = this.buckets.get(`${key}\u0000${windowStart - timeWindow}`);
      bucket = {
        key,
        windowStart,
        windowEnd: windowStart + timeWindow,
        max: Number.MAX_SAFE_INTEGER,
        known: 0,
        lease: 0,
        refused: 0,
        refusedSending: 0,
        waiters: [],
        hitsSinceClaim: previous?.hitsSinceClaim ?? 0,
        lastClaimAt: previous?.lastClaimAt ?? 0,
        lastPrefetch: previous?.lastPrefetch ?? 0,
        claiming: false,
      };
      this.buckets.set(id, bucket);
    }
    return bucket;
  }

  /** False once this process has seen the shared counter reach the limit: it never goes down within a window. */
  private quotaMayBeLeft(bucket: Bucket): boolean {
    return bucket.known + bucket.refused + bucket.refusedSending < bucket.max;
  }

  /**
   * The window's count as this process knows it, for the RateLimit-Remaining header and the 429
   * decision: at most the limit while this process holds quota (a claim that met the limit moved
   * the counter past it by what it could not get), past it for a refused request.
   */
  private counted(bucket: Bucket): number {
    return Math.min(bucket.known, bucket.max) - bucket.lease + bucket.refused + bucket.refusedSending;
  }

  /** Quota beyond the waiters: `leaseMs` of this process's recent rate, at most a share of what is left. */
  private prefetch(bucket: Bucket, waiters: number, now: number): number {
    const rate = bucket.hitsSinceClaim / Math.max(now - bucket.lastClaimAt, 1);
    const left = bucket.max - bucket.known - bucket.refused - bucket.refusedSending - waiters;
    return Math.max(0, Math.min(Math.ceil(rate * this.options.leaseMs), Math.floor(left * SHARE_OF_REMAINING)));
  }

  private claimSoon(bucket: Bucket): void {
    this.due.add(bucket);
    this.schedule();
  }

  /** Requests that arrive in the same turn of the event loop are claimed in one statement. */
  private schedule(): void {
    if (this.scheduled || this.inFlight) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (!this.inFlight) this.inFlight = this.send().finally(() => this.sent());
    });
  }

  private sent(): void {
    this.inFlight = undefined;
    this.sentAt = undefined;
    if (this.due.size > 0) this.schedule();
  }

  private async send(): Promise<void> {
    const now = this.options.now();
    const claims: Claim[] = [];
    for (const bucket of new Set([...this.due, ...this.unsent])) {
      const waiters = bucket.waiters.splice(0).filter((waiter) => !waiter.answered);
      const prefetch = this.quotaMayBeLeft(bucket) && now < bucket.windowEnd ? this.prefetch(bucket, waiters.length, now) : 0;
      const asked = waiters.length + prefetch;
      if (asked > 0) {
        bucket.claiming = true;
        bucket.hitsSinceClaim = 0;
        bucket.lastClaimAt = now;
        bucket.lastPrefetch = prefetch;
      }
      const refused = bucket.refused;
      bucket.refused = 0;
      bucket.refusedSending += refused;
      if (asked + refused > 0) claims.push({ bucket, refused, asked, waiters });
    }
    this.due.clear();
    this.unsent.clear();
    if (claims.length === 0) return;
    // Every process locks the rows in the same order, so two batches cannot deadlock.
    claims.sort((a, b) => (a.bucket.key < b.bucket.key ? -1 : a.bucket.key > b.bucket.key ? 1 : a.bucket.windowStart - b.bucket.windowStart));
    this.statements += 1;
    this.sentAt = now;
    try {
      const values = sql.join(claims.map(({ bucket, refused, asked }) => sql`(${bucket.key}, ${bucket.windowStart}::bigint, ${refused + asked}::bigint)`));
      const { rows } = await sql<{ key: string; window_start: string | number; hits: string | number }>`
        insert into rate_limit_counters (key, window_start, hits) values ${values}
        on conflict (key, window_start) do update set hits = rate_limit_counters.hits + excluded.hits
        returning key, window_start, hits`.execute(this.db);
      const totals = new Map(rows.map((row) => [`${row.key}\u0000${Number(row.window_start)}`, Number(row.hits)]));
      for (const claim of claims) this.granted(claim, totals.get(`${claim.bucket.key}\u0000${claim.bucket.windowStart}`)!);
    } catch (err) {
      this.failed(claims, err as Error);
    }
  }

  /**
   * `total` is the shared counter after this claim: everything before it is `total - asked`, and
   * what was left under the limit is granted, to the waiters first. Waiters beyond it are refused;
   * the claim already counted them.
   */
  private granted({ bucket, refused, asked, waiters }: Claim, total: number): void {
    const now = this.options.now();
    bucket.claiming = false;
    bucket.refusedSending -= refused;
    bucket.known = Math.max(bucket.known, total);
    const before = total - asked;
    const grant = Math.max(0, Math.min(asked, bucket.max - before));
    waiters.forEach((waiter, i) => {
      const current = i < grant ? before + i + 1 : total;
      this.answer(waiter, null, { current, ttl: Math.max(0, bucket.windowEnd - now) });
    });
    bucket.lease += Math.max(0, grant - waiters.length);
    // Requests that queued while the claim was in flight are served from what it brought.
    while (bucket.lease > 0 && bucket.waiters.length > 0) {
      const waiter = bucket.waiters.shift()!;
      bucket.lease -= 1;
      this.answer(waiter, null, { current: this.counted(bucket), ttl: Math.max(0, bucket.windowEnd - now) });
    }
    if (bucket.waiters.length > 0) this.due.add(bucket);
  }

  /** The requests let through (logged once), the refused counts kept for the next statement. */
  private failed(claims: Claim[], err: Error): void {
    this.failingUntil = this.options.now() + RETRY_AFTER_ERROR_MS;
    for (const { bucket, refused, waiters } of claims) {
      bucket.claiming = false;
      bucket.refusedSending -= refused;
      bucket.refused += refused;
      if (refused > 0) this.unsent.add(bucket);
      for (const waiter of waiters) this.answer(waiter, err, { current: 0, ttl: 0 });
    }
    for (const waiter of this.waiting) this.answer(waiter, err, { current: 0, ttl: 0 });
    for (const bucket of this.due) bucket.waiters.length = 0;
    this.due.clear();
    this.onError(err);
  }

  /** The statement in flight was sent longer than the wait limit ago (requests waiting meanwhile wait for it). */
  private stalled(now: number): boolean {
    return this.sentAt !== undefined && now - this.sentAt >= this.options.waitLimitMs;
  }

  /** Every request waiting for quota is let through, and none waits for a claim for a second. */
  private giveUpStalled(): void {
    const now = this.options.now();
    if (!this.stalled(now) || this.waiting.size === 0) return;
    this.failingUntil = now + RETRY_AFTER_ERROR_MS;
    for (const waiter of this.waiting) this.answer(waiter, new Error('rate-limit counters did not answer in time'), { current: 0, ttl: 0 });
    this.onError(new Error(`rate-limit counters did not answer within ${this.options.waitLimitMs} ms`));
  }

  private answer(waiter: Waiter, err: Error | null, result: { current: number; ttl: number }): void {
    this.waiting.delete(waiter);
    if (waiter.answered) return;
    waiter.answered = true;
    waiter.callback(err, result);
  }

  /** Refused requests out, stalled waits let through, past windows forgotten. */
  private tick(): void {
    const now = this.options.now();
    // Timers run before the loop reads its sockets: a process too busy to come back for longer than
    // the wait limit may have the answer unread. The statement is given up only after the loop has
    // looked (setImmediate runs after the poll phase, before the next timer).
    if (this.stalled(now)) setImmediate(() => this.giveUpStalled());
    if (this.unsent.size > 0 && !this.inFlight) this.inFlight = this.send().finally(() => this.sent());
    for (const [id, bucket] of this.buckets) {
      // Kept for one more window: its rate sizes the next window's first claim.
      if (bucket.windowEnd + (bucket.windowEnd - bucket.windowStart) < now && bucket.refused + bucket.refusedSending === 0 && bucket.waiters.length === 0) this.buckets.delete(id);
    }
    if (now - this.lastPurge > 60_000) {
      this.lastPurge = now;
      sql`delete from rate_limit_counters where window_start < ${now - 3_600_000}::bigint`.execute(this.db).catch((err: Error) => this.onError(err));
    }
  }
}
