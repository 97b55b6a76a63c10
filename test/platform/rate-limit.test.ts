import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { PostgresRateLimitStore } from '../../src/platform/rate-limit.js';
import { ADDRESS_BODY } from '../agents/fixtures.js';
import { bearer, buildTestContext, testConfig, type TestContext } from '../helpers/app.js';
import { cliJson, expectFailure, runCli, throwawayEnv } from '../helpers/cli.js';

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
    expect(limited.json()).toEqual({ statusCode: 429, error: 'Too Many Requests', message: expect.stringMatching(/^Too many requests: at most 3 a minute; retry in \d+ s$/) });
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

  it('shares counts between processes through the database, without a write per request', async () => {
    const errors: Error[] = [];
    const a = new PostgresRateLimitStore(t.database.db, (err) => errors.push(err), { flushMs: 60_000 });
    const b = new PostgresRateLimitStore(t.database.db, (err) => errors.push(err), { flushMs: 60_000 });
    const key = `test:${Date.now()}`;
    const incr = (store: PostgresRateLimitStore) => new Promise<number>((resolve) => store.incr(key, (_err, result) => resolve(result.current), 60_000));
    for (let i = 0; i < 6; i++) await incr(a);
    expect(await incr(b)).toBe(1);
    await a.flush();
    await b.flush();
    // b learnt a's six at its flush; a learns b's at its next flush of hits of its own.
    expect(await incr(b)).toBe(8);
    await b.flush();
    expect(await incr(a)).toBe(7);
    await a.flush();
    expect(await incr(a)).toBe(10);
    await a.close();
    await b.close();
    const rows = await t.database.db.selectFrom('rate_limit_counters').select('hits').where('key', '=', key).execute();
    expect(rows.map((row) => Number(row.hits))).toEqual([10]);
    expect(errors).toEqual([]);
  });

  it.skipIf(!redis)('shares counts between processes through Redis when REDIS_URL is set', async () => {
    const config = testConfig({ redisUrl: 'redis://127.0.0.1:6379', rateLimits: { perSecret: 4, perAddress: 100 } });
    const first = await buildApp({ config, database: t.database });
    const second = await buildApp({ config, database: t.database });
    try {
      const org = await t.org();
      const call = (app: typeof first) => app.inject({ method: 'POST', url: LOOKUP, headers: bearer(org.testSecret), payload: {} });
      const codes = [(await call(first)).statusCode, (await call(second)).statusCode, (await call(first)).statusCode, (await call(second)).statusCode, (await call(first)).statusCode];
      expect(codes).toEqual([200, 200, 200, 200, 429]);
    } finally {
      await first.close();
      await second.close();
    }
  });
});

describe('vouch org rate-limit', () => {
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
  });
});
