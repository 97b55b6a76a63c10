import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sql, type ColumnType, type Kysely } from 'kysely';
import type { DB, Mode } from './db/schema.js';
import { ApiError } from './errors.js';

export interface IdempotencyKeysTable {
  org_id: string;
  mode: Mode;
  key: string;
  fingerprint: string;
  state: ColumnType<'running' | 'done', 'running' | 'done' | undefined, 'running' | 'done'>;
  status_code: number | null;
  content_type: string | null;
  body: string | null;
  locked_until: ColumnType<Date, Date | string, Date | string>;
  created_at: ColumnType<Date, Date | string | undefined, Date | string>;
  expires_at: ColumnType<Date, Date | string, Date | string>;
}

declare module './db/schema.js' {
  interface DB {
    idempotency_keys: IdempotencyKeysTable;
  }
}

export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'idempotent-replayed';

export interface IdempotencySettings {
  /** How long a key and its first answer are kept. */
  ttlMs: number;
  /** A request holding a key this long is taken to have died with its process: the key is free again. */
  lockMs: number;
  /** How long a retry waits for the first request with its key before answering 409. */
  waitMs: number;
  /** How often a waiting retry looks again. */
  pollMs: number;
}

export const DEFAULT_IDEMPOTENCY: IdempotencySettings = { ttlMs: 24 * 3_600_000, lockMs: 5 * 60_000, waitMs: 10_000, pollMs: 50 };

/** Answers that depend on more than the request (the wallet, the load, our own failures) are not kept: a retry runs again. */
function keeps(statusCode: number): boolean {
  return statusCode < 500 && statusCode !== 402 && statusCode !== 429;
}

interface Claim {
  orgId: string;
  mode: Mode;
  key: string;
  fingerprint: string;
}

const claims = new WeakMap<FastifyRequest, Claim>();
const extraParts = new WeakMap<FastifyRequest, Buffer[]>();

/**
 * Adds bytes the body does not show to a request's fingerprint: a multipart upload's file, which
 * the route reads before the fingerprint is taken (its boundary differs between retries, so the
 * raw bytes cannot be compared).
 */
export function addToFingerprint(request: FastifyRequest, part: Buffer): void {
  const parts = extraParts.get(request) ?? [];
  parts.push(part);
  extraParts.set(request, parts);
}

/** JSON with object keys sorted: two bodies that say the same thing hash the same. */
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    if (Buffer.isBuffer(value)) return JSON.stringify(value.toString('base64'));
    const entries = Object.entries(value as Record<string, unknown>).filter(([, item]) => item !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${stableJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function fingerprintOf(request: FastifyRequest): string {
  const hash = createHash('sha256').update(`${request.method} ${request.url}\n`).update(stableJson(request.body ?? null));
  for (const part of extraParts.get(request) ?? []) hash.update('\n').update(createHash('sha256').update(part).digest());
  return hash.digest('base64url');
}

/** A key is what a client generates: a UUID or similar, printable ASCII without spaces, 1 to 255 characters. */
function readKey(request: FastifyRequest): string | undefined {
  const raw = request.headers[IDEMPOTENCY_HEADER];
  if (raw === undefined) return undefined;
  const value = Array.isArray(raw) ? raw : [raw];
  if (value.length !== 1 || !/^[\x21-\x7e]{1,255}$/.test(value[0]!)) {
    throw new ApiError('BAD_REQUEST', 'Idempotency-Key must be one value of 1 to 255 printable characters without spaces, such as a UUID');
  }
  return value[0];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Idempotency-Key on every API POST and DELETE (the work that creates, charges or cancels): the
 * first request with a key runs; a retry with the same key and the same request within the TTL
 * gets the first answer again (status and body, with `Idempotent-Replayed: true`) and is not run
 * or charged again; the same key with another request is 422; a retry while the first is still
 * running waits for it, then answers 409 if it is still running. Keys belong to the
 * organization and mode of the secret. Answers that depend on the moment (5xx, 402, 429) are not
 * kept: the key is released and a retry runs afresh.
 */
export function registerIdempotency(app: FastifyInstance, db: Kysely<DB>, overrides: Partial<IdempotencySettings> = {}): void {
  const settings = { ...DEFAULT_IDEMPOTENCY, ...overrides };

  /** Claims the key, or answers from it (a replay, 409 or 422); resolves true when it answered. */
  const claimOrAnswer = async (request: FastifyRequest, reply: FastifyReply, key: string, auth: { orgId: string; mode: Mode }): Promise<boolean> => {
    const claim: Claim = { orgId: auth.orgId, mode: auth.mode, key, fingerprint: fingerprintOf(request) };
    const deadline = Date.now() + settings.waitMs;
    for (;;) {
      if (await take(db, claim, settings)) {
        claims.set(request, claim);
        return false;
      }
      const row = await db
        .selectFrom('idempotency_keys')
        .select(['fingerprint', 'state', 'status_code', 'content_type', 'body'])
        .where('org_id', '=', claim.orgId)
        .where('mode', '=', claim.mode)
        .where('key', '=', key)
        .executeTakeFirst();
      if (!row) continue; // released between the two statements: claim again
      if (row.fingerprint !== claim.fingerprint) {
        throw new ApiError('UNPROCESSABLE', 'This Idempotency-Key was already used with a different request; use a new key for a new request');
      }
      if (row.state === 'done') {
        void reply.code(row.status_code!).header(REPLAYED_HEADER, 'true');
        if (row.content_type) void reply.type(row.content_type);
        void reply.send(row.body ?? '');
        return true;
      }
      if (Date.now() >= deadline) {
        throw new ApiError('CONFLICT', 'A request with this Idempotency-Key is still running; retry once it has answered', { retryAfterSeconds: 1 });
      }
      await sleep(settings.pollMs);
    }
  };

  // Callback style: most requests carry no key and leave without a promise.
  app.addHook('preHandler', (request, reply, done) => {
    if (request.method !== 'POST' && request.method !== 'DELETE') return done();
    let key: string | undefined;
    try {
      key = readKey(request);
    } catch (err) {
      return done(err as Error);
    }
    // API routes authenticate in onRequest; other POSTs (portal, respondent pages) have no key scope.
    const auth = request.auth;
    if (key === undefined || !auth) return done();
    claimOrAnswer(request, reply, key, auth).then((answered) => {
      if (!answered) done();
    }, done);
  });

  app.addHook('onSend', (request, reply, payload, done) => {
    const claim = claims.get(request);
    if (!claim) return done(null, payload);
    claims.delete(request);
    const keep = keeps(reply.statusCode) && (typeof payload === 'string' || Buffer.isBuffer(payload) || payload == null);
    const contentType = reply.getHeader('content-type');
    const write = keep
      ? db
          .updateTable('idempotency_keys')
          .set({ state: 'done', status_code: reply.statusCode, content_type: typeof contentType === 'string' ? contentType : null, body: payload == null ? '' : String(payload) })
          .where('org_id', '=', claim.orgId)
          .where('mode', '=', claim.mode)
          .where('key', '=', claim.key)
          .execute()
      : // Released: a retry runs afresh.
        db.deleteFrom('idempotency_keys').where('org_id', '=', claim.orgId).where('mode', '=', claim.mode).where('key', '=', claim.key).execute();
    // The answer goes out either way; a key left running frees itself when its lock passes.
    write.then(
      () => done(null, payload),
      (err: Error) => {
        request.log.error({ err: err.message }, 'idempotency key not saved');
        done(null, payload);
      },
    );
  });

  const timer = setInterval(() => void purgeIdempotencyKeys(db).catch((err: Error) => app.log.warn({ err: err.message }, 'idempotency keys not purged')), 3_600_000);
  timer.unref();
  app.addHook('onClose', async () => clearInterval(timer));
}

/**
 * Takes the key for this request: a new key, or one whose time is up (expired, or held by a
 * request of the same fingerprint whose process died). False when someone else's answer or
 * request holds it.
 */
async function take(db: Kysely<DB>, claim: Claim, settings: IdempotencySettings): Promise<boolean> {
  const { rows } = await sql<{ key: string }>`
    insert into idempotency_keys (org_id, mode, key, fingerprint, state, locked_until, expires_at)
    values (${claim.orgId}, ${claim.mode}, ${claim.key}, ${claim.fingerprint}, 'running',
      now() + ${`${settings.lockMs} milliseconds`}::interval, now() + ${`${settings.ttlMs} milliseconds`}::interval)
    on conflict (org_id, mode, key) do update
      set fingerprint = excluded.fingerprint, state = 'running', status_code = null, content_type = null, body = null,
        locked_until = excluded.locked_until, created_at = now(), expires_at = excluded.expires_at
      where idempotency_keys.expires_at < now()
        or (idempotency_keys.state = 'running' and idempotency_keys.locked_until < now() and idempotency_keys.fingerprint = excluded.fingerprint)
    returning key`.execute(db);
  return rows.length === 1;
}

/** Deletes keys past their TTL; returns how many. */
export async function purgeIdempotencyKeys(db: Kysely<DB>): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('expires_at', '<', sql<Date>`now()`).executeTakeFirst();
  return Number(result.numDeletedRows);
}
