import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agents/service.js';
import { ADDRESS_BODY } from '../agents/fixtures.js';
import { bearer, buildTestContext, type TestContext } from '../helpers/app.js';

const LOOKUP = '/v1/verifications/identities/bvn/22345678901?type=basic';
const WRONG_SECRET = `sk_test_${'x'.repeat(48)}`;

/**
 * Requests to the API (`/v1`) and to the field agent API whose credential is missing or refused
 * are counted per client address: past VOUCH_RATE_LIMIT_PER_ADDRESS they answer 429 in the
 * family's style, so secrets cannot be guessed (nor their lookup hammered) without limit.
 */
describe('per-address limit of refused credentials', () => {
  let t: TestContext;

  beforeAll(async () => {
    t = await buildTestContext({ config: { rateLimits: { perSecret: 100, perAddress: 3 } } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('limits identity lookups without a valid secret per address, in style B, and lets a valid secret through', async () => {
    const remoteAddress = '198.51.100.1';
    const codes = [];
    for (const headers of [{}, bearer(WRONG_SECRET), { authorization: 'Basic abc' }]) {
      const refused = await t.app.inject({ method: 'POST', url: LOOKUP, headers, payload: {}, remoteAddress });
      codes.push(refused.statusCode);
    }
    expect(codes).toEqual([401, 401, 401]);

    const limited = await t.app.inject({ method: 'POST', url: LOOKUP, headers: bearer(WRONG_SECRET), payload: {}, remoteAddress });
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toEqual({ statusCode: 429, error: 'Too Many Requests', message: expect.stringMatching(/^Too many requests: at most 3 a minute/) , requestId: expect.stringMatching(/^req_/) });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // The routed path decides, not its spelling.
    expect((await t.app.inject({ method: 'POST', url: '/%761/verifications/identities/bvn/22345678901?type=basic', payload: {}, remoteAddress })).statusCode).toBe(429);

    // A valid secret from the same address is limited per secret only; another address is not held back.
    const org = await t.org();
    expect((await t.app.inject({ method: 'POST', url: LOOKUP, headers: bearer(org.testSecret), payload: {}, remoteAddress })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'POST', url: LOOKUP, payload: {}, remoteAddress: '198.51.100.2' })).statusCode).toBe(401);
  });

  it('counts an IPv6 client by its /64, which it can rotate through, and a mapped IPv4 address as the IPv4 address', async () => {
    const codes = [];
    for (const remoteAddress of ['2001:db8:77:1::1', '2001:db8:77:1::2', '2001:db8:77:1:aaaa:bbbb:cccc:dddd', '2001:db8:77:1::4']) {
      codes.push((await t.app.inject({ method: 'POST', url: LOOKUP, headers: bearer(WRONG_SECRET), payload: {}, remoteAddress })).statusCode);
    }
    expect(codes).toEqual([401, 401, 401, 429]);
    // The next /64 is another client.
    expect((await t.app.inject({ method: 'POST', url: LOOKUP, headers: bearer(WRONG_SECRET), payload: {}, remoteAddress: '2001:db8:77:2::1' })).statusCode).toBe(401);

    const mapped = [];
    for (const remoteAddress of ['198.51.100.9', '::ffff:198.51.100.9', '198.51.100.9', '::ffff:c633:6409']) {
      mapped.push((await t.app.inject({ method: 'POST', url: LOOKUP, headers: bearer(WRONG_SECRET), payload: {}, remoteAddress })).statusCode);
    }
    expect(mapped).toEqual([401, 401, 401, 429]);
  });

  it('limits the workflow families in style A, before anything is created', async () => {
    const remoteAddress = '198.51.100.3';
    const codes = [];
    for (let i = 0; i < 4; i++) {
      codes.push((await t.app.inject({ method: 'POST', url: '/v1/verifications/addresses', headers: bearer(WRONG_SECRET), payload: ADDRESS_BODY, remoteAddress })).statusCode);
    }
    expect(codes).toEqual([401, 401, 401, 429]);
    const limited = await t.app.inject({ method: 'GET', url: '/v1/verifications/addresses', remoteAddress });
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toMatchObject({ status: 'error', code: 'RATE_LIMITED' });
  });

  it('limits the field agent API without a valid agent credential per address', async () => {
    const remoteAddress = '198.51.100.4';
    const codes = [];
    for (const headers of [{}, bearer(`ak_${'x'.repeat(43)}`), bearer('ak_short'), bearer(`ak_${'y'.repeat(43)}`)]) {
      codes.push((await t.app.inject({ method: 'GET', url: '/v1/agent/me', headers, remoteAddress })).statusCode);
    }
    expect(codes).toEqual([401, 401, 401, 429]);
    const limited = await t.app.inject({ method: 'GET', url: '/v1/%61gent/tasks', remoteAddress });
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toMatchObject({ status: 'error', code: 'RATE_LIMITED' });

    const { credential } = await createAgent(t.database.db, { name: 'Limit Agent', email: `limit-agent-${Date.now()}@agents.example`, phone: '08031230001', states: ['Lagos'] });
    expect((await t.app.inject({ method: 'GET', url: '/v1/agent/me', headers: bearer(credential), remoteAddress })).statusCode).toBe(200);
  });
});
