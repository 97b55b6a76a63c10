import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash, randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sql, type ColumnType, type Kysely } from 'kysely';
import type { DB, Mode } from './db/schema.js';
import { ApiError } from './errors.js';

/**
 * `running`: a request holds the key and nothing it did is committed; `committed`: its work (an
 * identity lookup's charge) is committed and its answer not yet stored; `done`: the answer is stored.
 */
type KeyState = 'running' | 'committed' | 'done';

export interface IdempotencyKeysTable {
  org_id: string;
  mode: Mode;
  key: string;
  fingerprint: string;
  state: ColumnType<KeyState, KeyState | undefined, KeyState>;
  /** The request holding the key (a random token): only it may store the answer (migration 0028). */
  holder: string | null;
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
  /**
   * The lease of a request holding a key, renewed every third of it while the request runs: a key
   * not renewed this long belongs to a process that died, and the same request may take it over.
   */
  lockMs: number;
  /** How long a retry waits for the first request with its key before answering 409. */
  waitMs: number;
  /** How often a waiting retry looks again. */
  pollMs: number;
  /**
   * Test only (VOUCH_TEST_PAUSE_AFTER_COMMIT_MS, test/platform/idempotency-crash.test.ts): holds
   * each answer to a request with a key this long after its work committed, logging a warning, so
   * a test can kill the process between the commit and the answer. 0 in every real deployment.
   */
  holdAnswerMs?: number;
}

export const DEFAULT_IDEMPOTENCY: IdempotencySettings = { ttlMs: 24 * 3_600_000, lockMs: 30_000, waitMs: 10_000, pollMs: 50 };

/** Answers that depend on more than the request (the wallet, the load, our own failures) are not kept: a retry runs again. */
function keeps(statusCode: number): boolean {
  return statusCode < 500 && statusCode !== 402 && statusCode !== 429;
}

interface Claim {
  orgId: string;
  mode: Mode;
  key: string;
  fingerprint: string;
  /** This request's token in `holder`. */
  holder: string;
  /** The work was committed by an earlier holder of the key that died before storing its answer. */
  committed: boolean;
  /** Renews the lease while the request runs. */
  heartbeat?: NodeJS.Timeout;
}

const claims = new WeakMap<FastifyRequest, Claim>();

/**
 * The key the request in progress holds, for work that commits without the route's answer (an
 * identity lookup's charge, see `heldKey`). AsyncLocalStorage: a lookup's service has no request.
 */
const held = new AsyncLocalStorage<HeldKey>();

/** The Idempotency-Key held by the request in progress, seen from the work it runs. */
export interface HeldKey {
  /** An earlier holder's work was committed (an identity lookup was charged): do not do it again. */
  readonly committed: boolean;
  /**
   * Marks the work committed in `trx`, the transaction that commits it, so that a retry after this
   * process dies resolves to it instead of doing it again. Throws CONFLICT (rolling `trx` back) when
   * another request took the key over meanwhile.
   */
  markCommitted(trx: Kysely<DB>): Promise<void>;
}

/** The Idempotency-Key the request in progress holds, if it sent one. */
export function heldKey(): HeldKey | undefined {
  return held.getStore();
}

/** Only the key's holder, and only while it is in flight, may change its row. */
function heldRow(db: Kysely<DB>, claim: Claim) {
  return db
    .updateTable('idempotency_keys')
    .where('org_id', '=', claim.orgId)
    .where('mode', '=', claim.mode)
    .where('key', '=', claim.key)
    .where('holder', '=', claim.holder)
    .where('state', '<>', 'done');
}

function lostKey(): ApiError {
  return new ApiError('CONFLICT', 'Another request with this Idempotency-Key has answered meanwhile; retry to get its answer', { retryAfterSeconds: 1 });
}

/**
 * Stores `payload`, the answer the route is about to send with the reply's status code, as the
 * answer of the request's Idempotency-Key, in `trx`: the transaction that commits the record the
 * answer describes. A process that dies after that commit leaves the answer behind with the
 * record, so a retry gets it, never a second record. Without a key, nothing happens. Throws
 * CONFLICT (rolling the record back) when the request no longer holds its key: its lease lapsed
 * and a retry took the key over.
 */
export async function keepAnswer(trx: Kysely<DB>, request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<void> {
  const claim = claims.get(request);
  if (!claim) return;
  const stored = await heldRow(trx, claim)
    .set({ state: 'done', status_code: reply.statusCode, content_type: JSON_TYPE, body: String(reply.serialize(payload)) })
    .executeTakeFirst();
  if (Number(stored.numUpdatedRows) !== 1) throw lostKey();
}

const JSON_TYPE = 'application/json; charset=utf-8';
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
    const claim: Claim = { orgId: auth.orgId, mode: auth.mode, key, fingerprint: fingerprintOf(request), holder: randomUUID(), committed: false };
    const deadline = Date.now() + settings.waitMs;
    for (;;) {
      const taken = await take(db, claim, settings);
      if (taken) {
        claim.committed = taken === 'committed';
        claim.heartbeat = setInterval(() => {
          heldRow(db, claim)
            .set({ locked_until: sql<Date>`now() + ${`${settings.lockMs} milliseconds`}::interval` })
            .execute()
            .catch((err: Error) => request.log.warn({ err: err.message }, 'idempotency key lease not renewed'));
        }, Math.max(1, Math.floor(settings.lockMs / 3)));
        claim.heartbeat.unref();
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
      if (answered) return;
      const claim = claims.get(request)!;
      const heldKey: HeldKey = {
        committed: claim.committed,
        markCommitted: async (trx) => {
          const marked = await heldRow(trx, claim).set({ state: 'committed' }).executeTakeFirst();
          if (Number(marked.numUpdatedRows) !== 1) throw lostKey();
        },
      };
      // The handler runs inside: the work it calls finds the key with heldKey().
      held.run(heldKey, done);
    }, done);
  });

  const stopHeartbeat = (request: FastifyRequest) => clearInterval(claims.get(request)?.heartbeat);
  app.addHook('onResponse', (request, _reply, done) => {
    stopHeartbeat(request);
    claims.delete(request);
    done();
  });
  app.addHook('onRequestAbort', (request, done) => {
    stopHeartbeat(request);
    done();
  });

  app.addHook('onSend', (request, reply, payload, done) => {
    const claim = claims.get(request);
    if (!claim) return done(null, payload);
    stopHeartbeat(request);
    claims.delete(request);
    if (settings.holdAnswerMs) {
      request.log.warn('idempotent answer held after its work committed (VOUCH_TEST_PAUSE_AFTER_COMMIT_MS)');
      setTimeout(() => storeAnswer(request, reply, claim, payload, done), settings.holdAnswerMs);
      return;
    }
    storeAnswer(request, reply, claim, payload, done);
  });

  const storeAnswer = (request: FastifyRequest, reply: FastifyReply, claim: Claim, payload: unknown, done: (err: null, payload: unknown) => void) => {
    const keep = keeps(reply.statusCode) && (typeof payload === 'string' || Buffer.isBuffer(payload) || payload == null);
    const contentType = reply.getHeader('content-type');
    // A route that kept its answer with its record (keepAnswer) left the key done: these change nothing.
    const write = keep
      ? heldRow(db, claim)
          .set({ state: 'done', status_code: reply.statusCode, content_type: typeof contentType === 'string' ? contentType : null, body: payload == null ? '' : String(payload) })
          .execute()
      : claim.committed
        ? // Work committed under this key stays committed: the key is free for a retry, which is not charged again.
          heldRow(db, claim).set({ locked_until: sql<Date>`now()` }).execute()
        : // Released: a retry runs afresh.
          db
            .deleteFrom('idempotency_keys')
            .where('org_id', '=', claim.orgId)
            .where('mode', '=', claim.mode)
            .where('key', '=', claim.key)
            .where('holder', '=', claim.holder)
            .where('state', '=', 'running')
            .execute();
    // The answer goes out either way; a key left running frees itself when its lease passes.
    write.then(
      () => done(null, payload),
      (err: Error) => {
        request.log.error({ err: err.message }, 'idempotency key not saved');
        done(null, payload);
      },
    );
  };

  const timer = setInterval(() => void purgeIdempotencyKeys(db).catch((err: Error) => app.log.warn({ err: err.message }, 'idempotency keys not purged')), 3_600_000);
  timer.unref();
  app.addHook('onClose', async () => clearInterval(timer));
}

/**
 * Takes the key for this request: a new key, or one whose time is up (expired: taken afresh; or
 * held by a request of the same fingerprint whose process died: its lease was not renewed). Answers
 * the key's state once taken (`committed` when the dead holder's work was committed), or undefined
 * when someone else's answer or request holds it.
 */
async function take(db: Kysely<DB>, claim: Claim, settings: IdempotencySettings): Promise<'running' | 'committed' | undefined> {
  const { rows } = await sql<{ state: 'running' | 'committed' }>`
    insert into idempotency_keys (org_id, mode, key, fingerprint, state, holder, locked_until, expires_at)
    values (${claim.orgId}, ${claim.mode}, ${claim.key}, ${claim.fingerprint}, 'running', ${claim.holder},
      now() + ${`${settings.lockMs} milliseconds`}::interval, now() + ${`${settings.ttlMs} milliseconds`}::interval)
    on conflict (org_id, mode, key) do update
      set fingerprint = excluded.fingerprint, holder = excluded.holder, locked_until = excluded.locked_until,
        status_code = null, content_type = null, body = null,
        state = case when idempotency_keys.expires_at < now() then 'running' else idempotency_keys.state end,
        created_at = case when idempotency_keys.expires_at < now() then now() else idempotency_keys.created_at end,
        expires_at = case when idempotency_keys.expires_at < now() then excluded.expires_at else idempotency_keys.expires_at end
      where idempotency_keys.expires_at < now()
        or (idempotency_keys.state <> 'done' and idempotency_keys.locked_until < now() and idempotency_keys.fingerprint = excluded.fingerprint)
    returning state`.execute(db);
  return rows[0]?.state;
}

/** Deletes keys past their TTL; returns how many. */
export async function purgeIdempotencyKeys(db: Kysely<DB>): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('expires_at', '<', sql<Date>`now()`).executeTakeFirst();
  return Number(result.numDeletedRows);
}
