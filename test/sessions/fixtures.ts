import type { Kysely } from 'kysely';
import type { LivenessAttempt, LivenessDecision, LivenessEngine } from '../../src/identities/liveness/engine.js';
import type { IdentityType, RecordOf } from '../../src/identities/records.js';
import type { Registry } from '../../src/identities/registry/registry.js';
import type { DB } from '../../src/platform/db/schema.js';
import '../../src/sessions/tables.js';

/** Helpers the session tests share: a client over a real socket, database reads, and a live registry a test holds back. */

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  // Tests read deep into answers (`json().data.checks.idLookup`).
  json(): any;
}

export interface CallOptions {
  secret?: string | undefined;
  body?: unknown;
  headers?: Record<string, string>;
  form?: FormData;
}

/** Requests to a listening app (a real TCP socket, as a customer's backend or a phone would make them). */
export function httpClient(base: string) {
  const call = async (method: string, path: string, options: CallOptions = {}): Promise<Answer> => {
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    if (options.secret) headers.authorization = `Bearer ${options.secret}`;
    let body: string | FormData | undefined;
    if (options.form) body = options.form;
    else if (options.body !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    }
    const res = await fetch(`${base}${path}`, { method, headers, body, redirect: 'manual' });
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) };
  };
  return {
    call,
    post: (path: string, secret: string | undefined, body?: unknown, headers?: Record<string, string>) => call('POST', path, { secret, body: body ?? {}, headers }),
    get: (path: string, secret?: string) => call('GET', path, { secret }),
    del: (path: string, secret: string | undefined, headers?: Record<string, string>) => call('DELETE', path, { secret, headers }),
  };
}

export type HttpClient = ReturnType<typeof httpClient>;

export function expectStyleA(res: Answer, status: number, code: string): { status: 'error'; code: string; message: string } {
  let body: Record<string, unknown> = {};
  try {
    body = res.json();
  } catch {
    // Not JSON: reported below.
  }
  if (res.status !== status || body.status !== 'error' || body.code !== code || typeof body.message !== 'string') {
    throw new Error(`expected ${status} ${code} style A, got ${res.status} ${res.text.slice(0, 300)}`);
  }
  return body as { status: 'error'; code: string; message: string };
}

/** The token of a session's url (`.../verify/<token>`). */
export function tokenOf(url: string): string {
  const token = /\/verify\/([A-Za-z0-9_-]{43})$/.exec(url)?.[1];
  if (!token) throw new Error(`unexpected session url ${url}`);
  return token;
}

export async function balanceOf(db: Kysely<DB>, orgId: string): Promise<number> {
  const row = await db.selectFrom('organizations').select('balance').where('id', '=', orgId).executeTakeFirstOrThrow();
  return Number(row.balance);
}

export async function sessionEvents(db: Kysely<DB>, orgId: string) {
  const rows = await db.selectFrom('webhook_deliveries').select(['event_type', 'mode', 'payload', 'resource_kind', 'resource_id']).where('org_id', '=', orgId).orderBy('id').execute();
  return rows.map((row) => ({ type: row.event_type, mode: row.mode, resource: `${row.resource_kind}/${row.resource_id}`, payload: row.payload as { type: string; timestamp: string; data: Record<string, any> } | null }));
}

export async function sessionUsage(db: Kysely<DB>, orgId: string) {
  const rows = await db.selectFrom('usage_events').select(['mode', 'type', 'outcome', 'price', 'subject']).where('org_id', '=', orgId).where('type', '=', 'session').orderBy('id').execute();
  return rows.map((row) => ({ mode: row.mode, outcome: row.outcome, price: Number(row.price), subject: row.subject }));
}

/** The sandbox's test identities (docs/test-mode.md). */
export const SANDBOX = {
  bvn: { idType: 'BVN', idNumber: '22345678901', firstname: 'Adaeze', lastname: 'Okonkwo', dob: '14-03-1990' },
  nin: { idType: 'NIN', idNumber: '70412358961', firstname: 'Babatunde', lastname: 'Adeyemi', dob: '02-11-1985' },
  license: { idType: 'DRIVERS_LICENSE', idNumber: 'KJA83927AA02', firstname: 'Ibrahim', lastname: 'Bello', dob: '09-05-1988' },
} as const;

/** A session without liveness: the ID step decides it (the end-user tests' default until frames are needed). */
export const ID_ONLY = { checks: { liveness: false, faceMatch: false } };

/**
 * A live registry held in memory, whose answers a test can hold back (an upstream provider that
 * is slow) or make fail (one that is down), per identity number.
 */
export class HeldRegistry implements Registry {
  private readonly records = new Map<string, Record<string, unknown>>();
  private readonly held = new Map<string, Promise<void>>();
  private readonly failing = new Map<string, Error>();
  /** The numbers asked for, in order. */
  readonly asked: string[] = [];

  add(type: IdentityType, key: string, record: Record<string, unknown>): this {
    this.records.set(`${type}:${key}`, record);
    return this;
  }

  /** The next lookups of `key` wait until the function returned is called. */
  hold(key: string): () => void {
    let release!: () => void;
    this.held.set(key, new Promise((resolve) => (release = resolve)));
    return () => {
      this.held.delete(key);
      release();
    };
  }

  /** Lookups of `key` throw `error` (until `heal`). */
  fail(key: string, error: Error): void {
    this.failing.set(key, error);
  }

  heal(key: string): void {
    this.failing.delete(key);
  }

  async find<T extends IdentityType>(type: T, key: string): Promise<RecordOf[T] | undefined> {
    this.asked.push(key);
    await this.held.get(key);
    const error = this.failing.get(key);
    if (error) throw error;
    return this.records.get(`${type}:${key}`) as RecordOf[T] | undefined;
  }

  async findNinByPhone(): Promise<undefined> {
    return undefined;
  }
}

/** Waits until `check` holds (a lookup has reached the registry, a row has changed), polling. */
export async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * A stand-in liveness engine that passes every attempt, its first frame the frontal one, for tests
 * of what comes after the decision (the real engine is test/sessions/liveness.test.ts's). `before`
 * runs first on each decision (a test may hold the decision there).
 */
export function passingLivenessEngine(before?: () => Promise<void> | undefined): LivenessEngine {
  return {
    ready: async () => undefined,
    async decide(attempt: LivenessAttempt): Promise<LivenessDecision> {
      await before?.();
      return {
        passed: true,
        reasons: [],
        scores: { antispoof: 0.9, live: 0.9, consistency: 0.97 },
        challenges: attempt.challenges.map((challenge, i) => ({ challenge, passed: true, atMs: 1000 * (i + 1) })),
        frontalFrame: 0,
        cpuMs: 1,
      };
    },
  };
}
