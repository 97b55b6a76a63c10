import { once } from 'node:events';
import net from 'node:net';
import { Redis } from 'ioredis';
import { Kysely, PostgresAdapter, PostgresDialect, PostgresIntrospector, PostgresQueryCompiler, sql, type CompiledQuery, type DatabaseConnection, type Driver, type QueryResult } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { openDatabase } from '../../src/platform/db/database.js';
import type { DB } from '../../src/platform/db/schema.js';
import { PostgresRateLimitStore } from '../../src/platform/rate-limit-store.js';
import { ADDRESS_BODY } from '../agents/fixtures.js';
import { bearer, buildTestContext, testConfig, type TestContext } from '../helpers/app.js';
import { cliJson, expectFailure, onPostgres, runCli, throwawayEnv } from '../helpers/cli.js';

const LOOKUP = '/v1/verifications/identities/bvn/22345678901?type=basic';

function redisReachable(): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port: 6379 });
    socket.setTimeout(500);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}
const redis = await redisReachable();

/** Rate limits: per secret on the API (organization limits set by the operator), per address elsewhere. */
describe('rate limits', () => {
  let t: TestContext;

  beforeAll(async () => {
    t = await buildTestContext({ config: { rateLimits: { perSecret: 5, perAddress: 4 } } });
  });
  afterAll(async () => {
    await t?.close();
  });
  // Windows are whole minutes of the clock: a test that counts starts where it stays within one
  // (one that crossed into the next minute would see its count start again).
  beforeEach(async () => {
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 52_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 50));
  });

  const lookup = (secret: string) => t.app.inject({ method: 'POST', url: LOOKUP, headers: bearer(secret), payload: {} });

  it('limits each secret to its organization\'s limit, with RateLimit headers and a 429 in the family\'s style', async () => {
    const org = await t.org();
    const other = await t.org();
    expect(await t.accounts.setRateLimit(org.id, 3)).toEqual({ id: org.id, rateLimitPerMinute: 3 });
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await lookup(org.testSecret));
    expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200, 200]);
    expect(answers.map((answer) => answer.headers['ratelimit-remaining'])).toEqual(['2', '1', '0']);
    expect(answers[0]!.headers['ratelimit-limit']).toBe('3');
    expect(Number(answers[0]!.headers['ratelimit-reset'])).toBeGreaterThan(0);
    expect(Number(answers[0]!.headers['ratelimit-reset'])).toBeLessThanOrEqual(60);

    const limited = await lookup(org.testSecret);
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toEqual({ statusCode: 429, error: 'Too Many Requests', message: expect.stringMatching(/^Too many requests: at most 3 a minute; retry in \d+ s$/) , requestId: expect.stringMatching(/^req_/) });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.headers['ratelimit-remaining']).toBe('0');
    // The workflow families answer style A; the secret's one counter covers every route.
    const address = await t.app.inject({ method: 'POST', url: '/v1/verifications/addresses', headers: bearer(org.testSecret), payload: ADDRESS_BODY });
    expect(address.statusCode).toBe(429);
    expect(address.json()).toMatchObject({ status: 'error', code: 'RATE_LIMITED' });
    expect(await t.database.db.selectFrom('address_verifications').select('id').where('org_id', '=', org.id).execute()).toHaveLength(0);

    // The live secret, and other organizations (at the server's default, 5), count apart.
    expect((await lookup(org.liveSecret)).statusCode).not.toBe(429);
    const others = [];
    for (let i = 0; i < 6; i++) others.push((await lookup(other.testSecret)).statusCode);
    expect(others).toEqual([200, 200, 200, 200, 200, 429]);

    // Refused requests count too (5 so far): at the default of 5 it stays limited; raised, it goes on.
    await t.accounts.setRateLimit(org.id, null);
    const atDefault = await lookup(org.testSecret);
    expect([atDefault.statusCode, atDefault.headers['ratelimit-limit']]).toEqual([429, '5']);
    await t.accounts.setRateLimit(org.id, 10);
    const raised = await lookup(org.testSecret);
    expect([raised.statusCode, raised.headers['ratelimit-limit'], raised.headers['ratelimit-remaining']]).toEqual([200, '10', '3']);
    await expect(t.accounts.setRateLimit(org.id, 0)).rejects.toThrow(/whole number of requests per minute/);
  });

  it('limits the portal API per client address', async () => {
    const codes = [];
    for (let i = 0; i < 5; i++) {
      const res = await t.app.inject({ method: 'GET', url: '/api/me', remoteAddress: '203.0.113.7' });
      codes.push(res.statusCode);
      if (res.statusCode === 429) expect(res.json()).toMatchObject({ status: 'error', code: 'RATE_LIMITED' });
    }
    expect(codes).toEqual([401, 401, 401, 401, 429]);
    // Another address is not held back.
    expect((await t.app.inject({ method: 'GET', url: '/api/me', remoteAddress: '203.0.113.8' })).statusCode).toBe(401);
  });

  const incr = (store: PostgresRateLimitStore, key: string, max: number) =>
    new Promise<{ err: Error | null; current: number }>((resolve) => store.incr(key, (err, result) => resolve({ err, current: result.current }), 60_000, max));
  const admitted = (results: { err: Error | null; current: number }[], max: number) => results.filter((result) => !result.err && result.current <= max).length;

  it('shares counts between processes through the database: together they admit exactly the limit', async () => {
    const errors: Error[] = [];
    const a = new PostgresRateLimitStore(t.database.db, (err) => errors.push(err), { flushMs: 60_000 });
    const b = new PostgresRateLimitStore(t.database.db, (err) => errors.push(err), { flushMs: 60_000 });
    const key = `test:${Date.now()}:${Math.random()}`;
    // Warm both stores' rate for the key, so their claims take more than one request at a time.
    const first = [await incr(a, key, 60), await incr(b, key, 60)];
    const burst = await Promise.all(Array.from({ length: 100 }, (_, i) => incr(i % 2 ? b : a, key, 60)));
    // Never more than the limit; fewer by what one store claimed ahead and the burst left unused.
    expect(admitted([...first, ...burst], 60)).toBeLessThanOrEqual(60);
    expect(admitted([...first, ...burst], 60)).toBeGreaterThanOrEqual(52);
    // Traffic goes on at both: the quota claimed ahead is used, and the window admits exactly 60.
    const late = [];
    for (let i = 0; i < 10; i++) late.push(await incr(a, key, 60), await incr(b, key, 60));
    expect(admitted([...first, ...burst, ...late], 60)).toBe(60);
    // A store learns that the window is spent from its first claim past the limit; from then on
    // it refuses at once, without a statement, and adds the refused requests to the count later.
    const statements = a.statements + b.statements;
    const later = await Promise.all([incr(a, key, 60), incr(b, key, 60)]);
    expect(later.map((result) => result.current > 60)).toEqual([true, true]);
    expect(a.statements + b.statements).toBe(statements);
    await a.close();
    await b.close();
    const rows = await t.database.db.selectFrom('rate_limit_counters').select('hits').where('key', '=', key).execute();
    // Every request is counted (the last claims asked for a few more than were left).
    expect(Number(rows[0]!.hits)).toBeGreaterThanOrEqual(124);
    expect(errors).toEqual([]);
  });

  it('claims quota ahead under steady traffic: far fewer statements than requests at a high limit', async () => {
    const store = new PostgresRateLimitStore(t.database.db, (err) => { throw err; }, { flushMs: 60_000 });
    const key = `test:${Date.now()}:${Math.random()}`;
    const results = [];
    // 2,000 requests over about a second, in steps of 40 every 20 ms.
    for (let step = 0; step < 50; step++) {
      results.push(...(await Promise.all(Array.from({ length: 40 }, () => incr(store, key, 1_000_000)))));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await store.close();
    expect(admitted(results, 1_000_000)).toBe(2_000);
    expect(store.statements, `${store.statements} statements`).toBeLessThan(40);
    // The headers count down from the limit as requests are admitted.
    expect(results.at(-1)!.current).toBeGreaterThanOrEqual(2_000);
  });

  it('lets requests through when the database cannot be reached, logs it and waits a second before trying again', async () => {
    const refused = new Kysely<DB>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: 'postgres://vouch@127.0.0.1:1/none', connectionTimeoutMillis: 500 }) }) });
    const errors: Error[] = [];
    const store = new PostgresRateLimitStore(refused, (err) => errors.push(err), { flushMs: 60_000 });
    try {
      const down = await incr(store, 'test:down', 5);
      expect(down.err).toBeInstanceOf(Error);
      expect(errors).toHaveLength(1);
      expect((await incr(store, 'test:down', 5)).err).toBeInstanceOf(Error);
      expect(store.statements).toBe(1);
    } finally {
      await refused.destroy();
    }
  });

  it('lets a request through when the database does not answer within the wait limit', async () => {
    // A server that takes connections and never answers: PostgreSQL hanging.
    const sockets: net.Socket[] = [];
    const silent = net.createServer((socket) => sockets.push(socket));
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    const { port } = silent.address() as net.AddressInfo;
    const hanging = new Kysely<DB>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: `postgres://vouch@127.0.0.1:${port}/none` }) }) });
    const errors: Error[] = [];
    const store = new PostgresRateLimitStore(hanging, (err) => errors.push(err), { flushMs: 50, waitLimitMs: 300 });
    try {
      const started = Date.now();
      const stalled = await incr(store, 'test:hang', 5);
      expect(stalled.err?.message).toMatch(/did not answer in time/);
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(errors.map((err) => err.message)).toEqual(['rate-limit counters did not answer within 300 ms']);
      // Meanwhile the next requests are not held up.
      expect((await incr(store, 'test:hang', 5)).err).toBeInstanceOf(Error);
    } finally {
      for (const socket of sockets) socket.destroy();
      silent.close();
      await hanging.destroy().catch(() => undefined);
    }
  });

  it('gives a claim up only when the database has not answered, not when the process was too busy to read the answer', async () => {
    const held = heldDatabase();
    let clock = 0;
    let answerOnNextRead = false;
    // The process comes back 2 s after sending the claim, its answer waiting unread in the socket:
    // it arrives with the first clock read after that (the store's timer), as an I/O callback would.
    const now = () => {
      if (answerOnNextRead) {
        answerOnNextRead = false;
        setImmediate(() => held.answer());
      }
      return clock;
    };
    const errors: Error[] = [];
    const store = new PostgresRateLimitStore(held.db, (err) => errors.push(err), { flushMs: 10, waitLimitMs: 1_000, now });
    try {
      const admitted = incr(store, 'test:busy', 5);
      await expect.poll(() => held.pending()).toBe(1);
      clock = 2_000;
      answerOnNextRead = true;
      expect(await admitted).toEqual({ err: null, current: 1 });
      expect(errors).toEqual([]);
      // Not answered at all: given up once the loop has looked, the next requests let through at once.
      const stalled = incr(store, 'test:busy2', 5);
      await expect.poll(() => held.pending()).toBe(1);
      clock = 4_000;
      expect((await stalled).err?.message).toMatch(/did not answer in time/);
      expect(errors.map((err) => err.message)).toEqual(['rate-limit counters did not answer within 1000 ms']);
      expect((await incr(store, 'test:busy3', 5)).err).toBeInstanceOf(Error);
    } finally {
      while (held.pending() > 0) held.answer();
      await store.close();
    }
  });

  it.runIf(onPostgres)('claims on a connection of their own: a pool busy with the requests\' queries does not hold them up', async () => {
    const busy = await openDatabase({ url: t.database.url!, poolSize: 1 });
    const errors: Error[] = [];
    const store = new PostgresRateLimitStore(busy.ownConnection(), (err) => errors.push(err), { waitLimitMs: 3_000 });
    try {
      // The pooled connection is taken for 2 s, and another query of 2 s queues behind it: a claim
      // in that queue would wait 4 s, and be given up after 3.
      const sleepers = Array.from({ length: 2 }, () => sql`select pg_sleep(2)`.execute(busy.db));
      await expect.poll(() => busy.connections().waiting).toBe(1);
      const started = Date.now();
      expect(await incr(store, 'test:own', 5)).toEqual({ err: null, current: 1 });
      expect(Date.now() - started).toBeLessThan(2_000);
      await Promise.all(sleepers);
      expect(errors).toEqual([]);
    } finally {
      await store.close();
      await busy.close();
    }
  });

  it.skipIf(!redis)('shares counts between processes through Redis when REDIS_URL is set', async () => {
    const config = testConfig({ redisUrl: 'redis://127.0.0.1:6379', rateLimits: { perSecret: 4, perAddress: 100 } });
    const first = await buildApp({ config, database: t.database });
    const second = await buildApp({ config, database: t.database });
    const client = new Redis('redis://127.0.0.1:6379');
    try {
      const org = await t.org();
      const call = (app: typeof first) => app.inject({ method: 'POST', url: LOOKUP, headers: bearer(org.testSecret), payload: {} });
      const codes = [(await call(first)).statusCode, (await call(second)).statusCode, (await call(first)).statusCode, (await call(second)).statusCode, (await call(first)).statusCode];
      expect(codes).toEqual([200, 200, 200, 200, 429]);
      // One prefix and the limit's own key: the plugin's store would put its route, which a limit
      // made with app.rateLimit() has not, in between (`vouch-rate-limit:undefinedundefined-secret:…`).
      const refused = await first.inject({ method: 'POST', url: LOOKUP, headers: bearer('vk_test_refused'), payload: {} });
      expect(refused.statusCode).toBe(401);
      const keys = await client.keys('vouch-rate-limit:*');
      expect(keys.filter((key) => key.includes(org.id))).toEqual([`vouch-rate-limit:secret:${org.id}:test`]);
      expect(keys).toContain('vouch-rate-limit:refused:127.0.0.1');
    } finally {
      client.disconnect();
      await first.close();
      await second.close();
    }
  });
});

describe('vouch org rate-limit', () => {
  // Six CLI runs, each a process opening the database: 12 s alone, past 30 s once in a full run on a loaded machine.
  it('sets and resets an organization\'s limit, with one-line errors', async () => {
    const { env, cleanup } = await throwawayEnv();
    try {
      const org = await cliJson<{ id: string }>(['org', 'create', '--name', 'Limited', '--json'], env);
      expect(await cliJson(['org', 'rate-limit', org.id, '120', '--json'], env)).toEqual({ id: org.id, rateLimitPerMinute: 120 });
      expect(await cliJson(['org', 'rate-limit', org.id, 'default', '--json'], env)).toEqual({ id: org.id, rateLimitPerMinute: null });
      expectFailure(await runCli(['org', 'rate-limit', org.id, 'fast'], env), /perMinute must be a whole number of requests per minute or "default"/);
      expectFailure(await runCli(['org', 'rate-limit', org.id, '0'], env), /from 1 to 100000000/);
      expectFailure(await runCli(['org', 'rate-limit', '00000000-0000-4000-8000-000000000000', '10'], env), /no organization/);
    } finally {
      await cleanup();
    }
  }, 90_000);
});

/**
 * A database whose statements wait until the test answers them: a claim's answer is the row the
 * upsert would return for a new key (hits as asked).
 */
function heldDatabase(): { db: Kysely<DB>; pending(): number; answer(): void } {
  const waiting: { parameters: readonly unknown[]; resolve(result: QueryResult<unknown>): void }[] = [];
  const connection: DatabaseConnection = {
    executeQuery: <R>(query: CompiledQuery) =>
      new Promise<QueryResult<R>>((resolve) => waiting.push({ parameters: query.parameters, resolve: resolve as (result: QueryResult<unknown>) => void })),
    streamQuery: () => {
      throw new Error('not streamed');
    },
  };
  const driver: Driver = {
    init: async () => {},
    acquireConnection: async () => connection,
    beginTransaction: async () => {},
    commitTransaction: async () => {},
    rollbackTransaction: async () => {},
    releaseConnection: async () => {},
    destroy: async () => {},
  };
  const db = new Kysely<DB>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => driver,
      createIntrospector: (kysely) => new PostgresIntrospector(kysely),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
  return {
    db,
    pending: () => waiting.length,
    answer: () => {
      const { parameters, resolve } = waiting.shift()!;
      const rows = [];
      for (let i = 0; i < parameters.length; i += 3) rows.push({ key: parameters[i], window_start: parameters[i + 1], hits: parameters[i + 2] });
      resolve({ rows });
    },
  };
}
