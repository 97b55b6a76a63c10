import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedOrganization } from '../../src/accounts/service.js';
import { importRegistry } from '../../src/identities/registry/import.js';
import { addSource, setOrder } from '../../src/identities/upstreams/store.js';
import { BUSINESS_BODY, expectStyleA } from '../agents/fixtures.js';
import { bearer, buildTestContext, type TestContext } from '../helpers/app.js';
import { startSwitchable, startUpstreamVouch, type Switchable, type UpstreamVouch } from './servers.js';

/**
 * Issue 19, item 6: a provider that is down must not make the empty embedded registry say "no
 * such person". The upstream is a second Vouch behind a switch that stops it (connections
 * refused) and starts it again on the same port; the front keeps the default order (the
 * upstream, then `embedded`).
 */

const KEY = randomBytes(32);
/** Long enough that a loaded machine finishes a test's checks of the open circuit before it half-opens. */
const COOL_DOWN_MS = 2_000;
/** Generous: a first lookup on a busy machine can take a second, and a timeout is not this test's subject. */
const TIMEOUT_MS = 5_000;
let upstream: UpstreamVouch;
let provider: Switchable;
let front: TestContext;
let org: CreatedOrganization;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/**
 * Config changes reach the running router on its next poll (100 ms here); on a loaded machine a
 * poll came late (a lookup sent 250 ms after adding sources found none: 404 from the embedded
 * registry), so the test catches the router up instead of waiting.
 */
const settle = () => front.app.upstreamRouter!.catchUp();

function bvnLookup(bvn: string) {
  return front.app.inject({ method: 'POST', url: `/v1/verifications/identities/bvn/${bvn}?type=premium`, headers: bearer(org.liveSecret), payload: {} });
}

async function usageCount() {
  const rows = await front.database.db.selectFrom('usage_events').select('id').where('org_id', '=', org.id).execute();
  return rows.length;
}

async function balance() {
  return (await front.accounts.get(org.id)).balance;
}

async function importIntoFront(type: string, record: object) {
  await importRegistry(front.database.db, (async function* () {
    yield `${JSON.stringify({ type, record })}\n`;
  })());
}

beforeAll(async () => {
  upstream = await startUpstreamVouch();
  provider = await startSwitchable(upstream.url);
  front = await buildTestContext({
    config: { encryptionKey: KEY },
    upstreams: { breaker: { failureThreshold: 2, coolDownMs: COOL_DOWN_MS }, reloadIntervalMs: 100, healthWriteIntervalMs: 0, retryAfterSeconds: 7, holdingsTtlMs: 0 },
  });
  org = await front.org({ fund: 10_000_000 });
  await addSource(front.database.db, KEY, { name: 'primary', kind: 'verifyme', url: provider.url, secret: upstream.liveSecret, timeoutMs: TIMEOUT_MS });
  await settle();
}, 60_000);

afterAll(async () => {
  await provider?.stop().catch(() => undefined);
  await front?.close();
  await upstream?.context.close();
});

describe('the upstream is down and the embedded registry holds no records of the type', () => {
  it('answers a known person\'s BVN from the upstream while it is up', async () => {
    const response = await bvnLookup(upstream.identities.bvn.bvn);
    expect(response.statusCode, response.body).toBe(200);
  });

  it('answers 503 with Retry-After, not 404, once the upstream stops; nothing charged or recorded', async () => {
    await provider.stop();
    const before = { balance: await balance(), usage: await usageCount() };
    const response = await bvnLookup(upstream.identities.bvn.bvn);
    expect(response.statusCode, response.body).toBe(503);
    expect(response.headers['retry-after']).toBe('7');
    expect(response.json()).toEqual({ statusCode: 503, error: 'Service Unavailable', message: expect.stringMatching(/unavailable/) , requestId: expect.stringMatching(/^req_/) });
    // A number nobody holds is no different: nothing that could know it answered.
    expect((await bvnLookup('22999999999')).statusCode).toBe(503);
    // The circuit is open now: the answer comes at once, with its remaining cool-down.
    const open = await bvnLookup(upstream.identities.bvn.bvn);
    expect(open.statusCode).toBe(503);
    expect(Number(open.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(open.headers['retry-after'])).toBeLessThanOrEqual(Math.ceil(COOL_DOWN_MS / 1000));
    expect(await balance()).toBe(before.balance);
    expect(await usageCount()).toBe(before.usage);
    expect(front.logs.join('')).toContain('no upstream could answer');
  });

  it('answers a NIN, a CAC and a TIN lookup with 503 too (every type the upstream serves)', async () => {
    await sleep(COOL_DOWN_MS + 50);
    const ids = upstream.identities;
    for (const request of [
      { method: 'POST' as const, url: `nin/${ids.nin.nin}`, payload: {} },
      { method: 'POST' as const, url: 'cac', payload: { type: ids.cac.type, rcNumber: ids.cac.rcNumber } },
      { method: 'GET' as const, url: `tin/${ids.tin.tin}` },
    ]) {
      const response = await front.app.inject({ ...request, url: `/v1/verifications/identities/${request.url}`, headers: bearer(org.liveSecret) });
      expect(response.statusCode, `${request.url}: ${response.body}`).toBe(503);
      expect(response.headers['retry-after']).toBeDefined();
    }
  });

  it('creates no business verification from an unreachable corporate registry: 503 style A with Retry-After, nothing charged', async () => {
    const { street: _s, lga: _l, state: _st, name: _n, ...onlyRc } = BUSINESS_BODY;
    const before = await balance();
    const response = await front.app.inject({
      method: 'POST',
      url: '/v1/verifications/businesses',
      headers: bearer(org.liveSecret),
      payload: { ...onlyRc, rcNumber: `RC${upstream.identities.cac.rcNumber}` },
    });
    const error = expectStyleA(response, 503, 'SERVICE_UNAVAILABLE');
    expect(error.message).toMatch(/corporate registry/);
    expect(response.headers['retry-after']).toBeDefined();
    expect(await balance()).toBe(before);
    const list = await front.app.inject({ method: 'GET', url: '/v1/verifications/businesses', headers: bearer(org.liveSecret) });
    expect(list.json()._pagination.total).toBe(0);
  });

  it('answers from the upstream again once it is back, and charges', async () => {
    await provider.start();
    await sleep(COOL_DOWN_MS + 50);
    const before = await balance();
    const response = await bvnLookup(upstream.identities.bvn.bvn);
    expect(response.statusCode, response.body).toBe(200);
    const usage = await front.database.db.selectFrom('usage_events').selectAll().where('org_id', '=', org.id).orderBy('id', 'desc').executeTakeFirstOrThrow();
    expect(usage).toMatchObject({ source: 'primary', outcome: 'success' });
    expect(await balance()).toBeLessThan(before);
  });
});

describe('the upstream is down and the embedded registry holds records of the type', () => {
  it('takes the embedded registry\'s answer: its record, and its not-found', async () => {
    const held = { ...upstream.identities.bvn, bvn: '22333333333' };
    await importIntoFront('bvn', held);
    await provider.stop();
    await sleep(COOL_DOWN_MS + 50);
    const found = await bvnLookup(held.bvn);
    expect(found.statusCode, found.body).toBe(200);
    const missing = await bvnLookup(upstream.identities.bvn.bvn);
    expect(missing.statusCode, missing.body).toBe(404);
    expect(missing.json()).toMatchObject({ code: 'NOT_FOUND_ERROR' });
    const usage = await front.database.db.selectFrom('usage_events').selectAll().where('org_id', '=', org.id).orderBy('id', 'desc').executeTakeFirstOrThrow();
    expect(usage).toMatchObject({ source: 'embedded', outcome: 'not_found', price: 0 });
    await provider.start();
  });

  it('still answers 503 for a type the embedded registry does not hold (a NIN)', async () => {
    await provider.stop();
    await sleep(COOL_DOWN_MS + 50);
    const response = await front.app.inject({ method: 'POST', url: `/v1/verifications/identities/nin/${upstream.identities.nin.nin}`, headers: bearer(org.liveSecret), payload: {} });
    expect(response.statusCode, response.body).toBe(503);
    await provider.start();
  });
});

describe('an explicit order', () => {
  it('asks a source after the embedded registry when that one holds nothing and an earlier source failed', async () => {
    await addSource(front.database.db, KEY, { name: 'secondary', kind: 'verifyme', url: upstream.url, secret: upstream.liveSecret, timeoutMs: TIMEOUT_MS });
    await setOrder(front.database.db, 'nin', ['primary', 'embedded', 'secondary']);
    await settle();
    await provider.stop();
    await sleep(COOL_DOWN_MS + 50);
    const response = await front.app.inject({ method: 'POST', url: `/v1/verifications/identities/nin/${upstream.identities.nin.nin}`, headers: bearer(org.liveSecret), payload: {} });
    expect(response.statusCode, response.body).toBe(201);
    const usage = await front.database.db.selectFrom('usage_events').selectAll().where('org_id', '=', org.id).orderBy('id', 'desc').executeTakeFirstOrThrow();
    expect(usage).toMatchObject({ source: 'secondary', outcome: 'success' });
    await provider.start();
  });
});
