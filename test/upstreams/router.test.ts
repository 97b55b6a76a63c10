import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { CreatedOrganization } from '../../src/accounts/service.js';
import { importRegistry } from '../../src/identities/registry/import.js';
import { UpstreamCache } from '../../src/identities/upstreams/cache.js';
import { sourceStatuses } from '../../src/identities/upstreams/status.js';
import { metrics } from '../../src/platform/metrics.js';
import { addSource, removeSource, setCacheTtl, setOrder, listSources } from '../../src/identities/upstreams/store.js';
import { bearer, buildTestContext, type TestContext } from '../helpers/app.js';
import { hashToken } from '../../src/respondents/links.js';
import { open, submit, textOf } from '../respondents/browser.js';
import { GUARANTOR_BODY, linkOf, TEST_NIN } from '../respondents/fixtures.js';
import { refusedUrl, startFlaky, startServer, startUpstreamVouch, type TestServer, type UpstreamVouch } from './servers.js';

/**
 * The router through the front door: a front Vouch whose live lookups go to upstreams over real
 * sockets. The good upstream is a second Vouch (the `verifyme` kind speaks our own API); the bad
 * ones refuse connections, hang, answer 500 or garbage.
 */

const KEY = randomBytes(32);
/** Long enough that a loaded machine finishes a test's checks of the open circuit before it half-opens. */
const COOL_DOWN_MS = 2_000;
let upstream: UpstreamVouch;
let front: TestContext;
let org: CreatedOrganization;
const servers: TestServer[] = [];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/**
 * Config changes reach the running router on its next poll (100 ms here); on a loaded machine a
 * poll came late (a lookup sent 250 ms after adding sources found none: 404 from the embedded
 * registry), so the test catches the router up instead of waiting.
 */
const settle = () => front.app.upstreamRouter!.catchUp();

/**
 * A source's time limit: 10 s unless a test is about timeouts and says less. With 1 s, "does not
 * repeat a request that may have reached the registry" got a 404 in CI on a slow two-core machine
 * (2026-11-30): what a secondary answering after its limit gives, the lookup falling through to
 * the embedded registry, which does not hold the number.
 */
async function add(name: string, url: string, secret = upstream.liveSecret, timeoutMs = 10_000) {
  await addSource(front.database.db, KEY, { name, kind: 'verifyme', url, secret, timeoutMs });
}

async function reset() {
  for (const source of await listSources(front.database.db)) await removeSource(front.database.db, source.name);
  await setCacheTtl(front.database.db, 'bvn', 0);
}

function bvnLookup(bvn = upstream.identities.bvn.bvn, headers: Record<string, string> = {}) {
  return front.app.inject({ method: 'POST', url: `/v1/verifications/identities/bvn/${bvn}?type=premium`, headers: { ...bearer(org.liveSecret), ...headers }, payload: {} });
}

async function lastUsage() {
  return front.database.db.selectFrom('usage_events').selectAll().where('org_id', '=', org.id).orderBy('id', 'desc').executeTakeFirstOrThrow();
}

beforeAll(async () => {
  upstream = await startUpstreamVouch();
  front = await buildTestContext({
    config: { encryptionKey: KEY },
    upstreams: { breaker: { failureThreshold: 2, coolDownMs: COOL_DOWN_MS }, reloadIntervalMs: 100, healthWriteIntervalMs: 0, retryAfterSeconds: 7 },
  });
  org = await front.org({ fund: 10_000_000 });
}, 60_000);

afterAll(async () => {
  for (const server of servers) await server.close();
  await front?.close();
  await upstream?.context.close();
});

beforeEach(async () => {
  await reset();
  await settle();
});

describe('verifyme upstream', () => {
  it('answers every lookup type as the upstream itself does, and notes the source', async () => {
    await add('primary', upstream.url);
    await settle();
    const ids = upstream.identities;
    const requests = [
      { method: 'POST' as const, url: `bvn/${ids.bvn.bvn}?type=premium`, payload: {} },
      { method: 'POST' as const, url: `nin/${ids.nin.nin}`, payload: {} },
      { method: 'POST' as const, url: `nin_phone/${encodeURIComponent(ids.nin.phone!)}`, payload: {} },
      { method: 'POST' as const, url: `virtual-nin/${ids.vnin.vNin}`, payload: {} },
      { method: 'POST' as const, url: `drivers_license/${ids.drivers_license.licenseNo}`, payload: {} },
      { method: 'POST' as const, url: `vin/${ids.vin.vin}`, payload: {} },
      { method: 'POST' as const, url: 'cac', payload: { type: ids.cac.type, rcNumber: ids.cac.rcNumber } },
      { method: 'GET' as const, url: `tin/${ids.tin.tin}` },
    ];
    for (const request of requests) {
      const url = `/v1/verifications/identities/${request.url}`;
      const direct = await upstream.context.app.inject({ ...request, url, headers: bearer(upstream.liveSecret) });
      const viaFront = await front.app.inject({ ...request, url, headers: bearer(org.liveSecret) });
      expect(viaFront.statusCode, `${url}: ${viaFront.body}`).toBe(direct.statusCode);
      expect(viaFront.json(), url).toEqual(direct.json());
      expect((await lastUsage()).source).toBe('primary');
    }
  });

  it('takes a not-found from a healthy primary as the answer: no failover, not charged', async () => {
    await add('primary', upstream.url);
    await setOrder(front.database.db, 'bvn', ['primary', 'embedded']);
    // The embedded registry would know the number: it must not be asked.
    const record = { ...upstream.identities.bvn, bvn: '22222222222' };
    await importRegistry(front.database.db, (async function* () {
      yield `${JSON.stringify({ type: 'bvn', record })}\n`;
    })());
    await settle();
    const response = await bvnLookup('22222222222');
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ code: 'NOT_FOUND_ERROR' });
    const usage = await lastUsage();
    expect(usage).toMatchObject({ source: 'primary', outcome: 'not_found', price: 0 });
  });
});

describe('failover', () => {
  const broken: [string, () => Promise<string>][] = [
    ['refuses connections', refusedUrl],
    ['hangs past the timeout', async () => (servers[servers.push(await startServer('hang')) - 1]!).url],
    ['answers 500', async () => (servers[servers.push(await startServer((_req, res) => res.writeHead(500).end('{"error":"boom"}'))) - 1]!).url],
    ['answers garbage', async () => (servers[servers.push(await startServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('<html>oops</html>'))) - 1]!).url],
    [
      'answers a record that fails its schema',
      async () =>
        (servers[servers.push(await startServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"success","data":{"bvn":"1","firstname":7}}'))) - 1]!).url,
    ],
  ];

  it.each(broken)('goes to the secondary when the primary %s', async (_what, primaryUrl) => {
    await add('primary', await primaryUrl(), upstream.liveSecret, 300);
    await add('secondary', upstream.url);
    await settle();
    const started = Date.now();
    const response = await bvnLookup();
    expect(response.statusCode, response.body).toBe(200);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await lastUsage()).toMatchObject({ source: 'secondary', outcome: 'success' });
    expect((await lastUsage()).price).toBeGreaterThan(0);
  });
});

describe('retries and credentials', () => {
  it('retries once after a connection error, on the same source', async () => {
    let seen = 0;
    const resetting = await startServer((req, res) => {
      seen += 1;
      // The first connection is reset before any answer: it never reached the registry.
      if (seen === 1) {
        req.socket.destroy();
        return;
      }
      void fetch(`${upstream.url}${req.url}`, { method: req.method, headers: { authorization: req.headers.authorization!, 'content-type': 'application/json' }, body: '{}' }).then(async (answer) =>
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text()),
      );
    });
    servers.push(resetting);
    await add('primary', resetting.url);
    await add('secondary', upstream.url);
    await settle();
    const response = await bvnLookup();
    expect(response.statusCode, response.body).toBe(200);
    expect(resetting.requests()).toBe(2);
    expect(await lastUsage()).toMatchObject({ source: 'primary', outcome: 'success' });
  });

  it('does not repeat a request that may have reached the registry: an HTTP error or a timeout', async () => {
    const failing = await startServer((_req, res) => res.writeHead(500).end('{}'));
    const hanging = await startServer('hang');
    servers.push(failing, hanging);
    for (const [primary, timeoutMs] of [[failing, 1_000], [hanging, 300]] as const) {
      await reset();
      await add('primary', primary.url, upstream.liveSecret, timeoutMs);
      await add('secondary', upstream.url);
      await settle();
      const before = primary.requests();
      expect((await bvnLookup()).statusCode).toBe(200);
      expect(primary.requests() - before).toBe(1);
      expect(await lastUsage()).toMatchObject({ source: 'secondary' });
    }
  });

  it('treats credentials it cannot read (another installation key) as a refused source, and says so', async () => {
    // Stored with a key that is not this server's: VOUCH_ENCRYPTION_KEY changed or differs between processes.
    await addSource(front.database.db, randomBytes(32), { name: 'primary', kind: 'verifyme', url: upstream.url, secret: upstream.liveSecret, timeoutMs: 1_000 });
    await add('secondary', upstream.url);
    await settle();
    const response = await bvnLookup();
    expect(response.statusCode).toBe(200);
    expect(await lastUsage()).toMatchObject({ source: 'secondary' });
    expect(front.logs.join('')).toContain('upstream credentials cannot be read');
    const primaryStatus = async () => (await sourceStatuses(front.database.db)).find((s) => s.name === 'primary');
    await expect.poll(primaryStatus, { timeout: 5_000 }).toMatchObject({ lastFailure: { kind: 'refused' } });
  });

  it('purges cached records whose time to live has passed, and only those', async () => {
    const cache = new UpstreamCache(front.database.db, randomBytes(32));
    const now = new Date();
    await cache.put('nin', '11111111111', { nin: '11111111111' }, 'primary', new Date(now.getTime() - 1_000));
    await cache.put('nin', '22222222222', { nin: '22222222222' }, 'primary', new Date(now.getTime() + 60_000));
    await cache.purge(now);
    expect(await cache.get('nin', '22222222222', now)).toEqual({ nin: '22222222222' });
    const rows = await front.database.db.selectFrom('upstream_cache').select('type').where('type', '=', 'nin').execute();
    expect(rows).toHaveLength(1);
  });
});

describe('circuit breaker', () => {
  it('opens after repeated failures, skips the source, and closes after a successful half-open probe', async () => {
    const flaky = await startFlaky(upstream.url);
    servers.push(flaky);
    await add('primary', flaky.url);
    await add('secondary', upstream.url);
    await settle();
    const metric = async (metric: typeof metrics.upstreamCircuit | typeof metrics.upstreamLookups, labels: Record<string, string>) =>
      (await metric.get()).values.find((value) => Object.entries(labels).every(([key, wanted]) => (value.labels as Record<string, unknown>)[key] === wanted))?.value ?? 0;
    const httpFailures = await metric(metrics.upstreamLookups, { source: 'primary', outcome: 'http' });
    const secondaryFound = await metric(metrics.upstreamLookups, { source: 'secondary', outcome: 'found' });
    for (let i = 0; i < 2; i++) expect((await bvnLookup()).statusCode).toBe(200);
    // In /metrics: the circuit per source (2 = open) and the lookups asked of each by outcome.
    expect(await metric(metrics.upstreamCircuit, { source: 'primary' })).toBe(2);
    expect(await metric(metrics.upstreamLookups, { source: 'primary', outcome: 'http' })).toBe(httpFailures + 2);
    expect(await metric(metrics.upstreamLookups, { source: 'secondary', outcome: 'found' })).toBe(secondaryFound + 2);
    expect(flaky.requests()).toBe(2);
    expect(front.logs.join('')).toContain('upstream circuit open');
    // Open: the primary is not asked at all.
    expect((await bvnLookup()).statusCode).toBe(200);
    expect(flaky.requests()).toBe(2);
    // The health row is written beside the lookups, not before their answers: wait for it.
    const primaryStatus = async () => (await sourceStatuses(front.database.db)).find((s) => s.name === 'primary');
    await expect.poll(primaryStatus, { timeout: 5_000 }).toMatchObject({ circuit: 'open', failures: 2, lastFailure: { kind: 'http' } });

    flaky.broken = false;
    await sleep(COOL_DOWN_MS + 50);
    expect((await bvnLookup()).statusCode).toBe(200);
    expect(flaky.requests()).toBe(3);
    expect(await lastUsage()).toMatchObject({ source: 'primary' });
    await expect.poll(primaryStatus, { timeout: 5_000 }).toMatchObject({ circuit: 'closed', consecutiveFailures: 0 });
    expect((await primaryStatus())!.latencyMs.p50).not.toBeNull();
    expect(await metric(metrics.upstreamCircuit, { source: 'primary' })).toBe(0);
  });
});

describe('cache', () => {
  it('keeps an upstream record for the type TTL; Cache-Control: no-cache skips it', async () => {
    await add('primary', upstream.url);
    await setCacheTtl(front.database.db, 'bvn', 60);
    await settle();
    const first = await bvnLookup();
    expect(first.statusCode).toBe(200);
    expect((await lastUsage()).source).toBe('primary');
    const second = await bvnLookup();
    expect(second.json()).toEqual(first.json());
    expect(await lastUsage()).toMatchObject({ source: 'cache', outcome: 'success' });
    await bvnLookup(undefined, { 'cache-control': 'no-cache' });
    expect((await lastUsage()).source).toBe('primary');
    // The identifier is never a key of the cache.
    const rows = await front.database.db.selectFrom('upstream_cache').selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.key_hash).not.toContain(upstream.identities.bvn.bvn);
    // Nor is the record stored in clear (docs/data-protection.md): read back decrypted, stored encrypted.
    expect(rows[0]!.record).toMatchObject({ bvn: upstream.identities.bvn.bvn });
    const stored = await front.database.db.withoutPlugins().selectFrom('upstream_cache').select(sql<string>`record::text`.as('record')).executeTakeFirstOrThrow();
    expect(stored.record).toMatch(/^"vx1:[0-9a-f]{8}:/);
    expect(stored.record).not.toContain(upstream.identities.bvn.bvn);
  });
});

describe('every source down', () => {
  it('answers 503 in style B with Retry-After, records and charges nothing', async () => {
    await add('primary', await refusedUrl());
    await setOrder(front.database.db, 'bvn', ['primary']);
    await settle();
    const before = await front.accounts.get(org.id);
    const usageBefore = (await lastUsage()).id;
    const response = await bvnLookup();
    expect(response.statusCode).toBe(503);
    expect(response.headers['retry-after']).toBe('7');
    expect(response.json()).toEqual({ statusCode: 503, error: 'Service Unavailable', message: expect.stringMatching(/unavailable/) , requestId: expect.stringMatching(/^req_/) });
    // Once the circuit is open, Retry-After is its remaining cool-down.
    await bvnLookup();
    const open = await bvnLookup();
    expect(open.statusCode).toBe(503);
    expect(Number(open.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(open.headers['retry-after'])).toBeLessThanOrEqual(Math.ceil(COOL_DOWN_MS / 1000));
    expect((await front.accounts.get(org.id)).balance).toBe(before.balance);
    expect((await lastUsage()).id).toBe(usageBefore);
  });

  it('keeps a guarantor\'s link open with a 503 page when no source can check the ID, counting no failed try', async () => {
    await add('primary', await refusedUrl());
    await setOrder(front.database.db, 'nin', ['primary']);
    await settle();
    // Guarantor verifications need a risk level of LOW or higher.
    const lender = await front.org({ riskLevel: 'LOW', fund: 10_000_000 });
    const created = await front.app.inject({ method: 'POST', url: '/v1/verifications/guarantors', headers: bearer(lender.liveSecret), payload: GUARANTOR_BODY });
    expect(created.statusCode, created.body).toBe(201);
    const { token } = await linkOf(front.database.db, 'guarantor_request', created.json().data.id);
    const base = await front.app.listen({ port: 0, host: '127.0.0.1' });
    const form = await open(`${base}/respond/${token}`);
    expect(form.status).toBe(200);
    const answered = await submit(form, { decision: 'accept', idType: 'NIN', idNumber: TEST_NIN.nin, dob: TEST_NIN.dob });
    expect(answered.status, answered.html).toBe(503);
    expect(answered.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(textOf(answered.html)).toContain('We could not reach the ID registry just now, so nothing was recorded');
    const link = await front.database.db.selectFrom('respondent_links').select(['failed_attempts', 'used_at']).where('token_hash', '=', hashToken(token)).executeTakeFirstOrThrow();
    expect(link).toEqual({ failed_attempts: 0, used_at: null });
    expect((await open(`${base}/respond/${token}`)).status).toBe(200);
  });

  it('logs failures by source and kind, never the credentials or the identifier', async () => {
    const text = front.logs.join('');
    expect(text).toContain('"failure":"connection"');
    expect(text).not.toContain(upstream.liveSecret);
    expect(text).not.toContain(org.liveSecret);
    expect(text).not.toContain(upstream.identities.bvn.bvn);
    const stored = await front.database.db.selectFrom('upstream_sources').select('secret_encrypted').execute();
    for (const row of stored) expect(row.secret_encrypted).not.toContain(upstream.liveSecret);
  });
});

describe('tenant-neutral configuration', () => {
  it('routes every organization through the same sources', async () => {
    await add('primary', upstream.url);
    await settle();
    const other = await front.org({ fund: 1_000_000 });
    const response = await front.app.inject({ method: 'POST', url: `/v1/verifications/identities/nin/${upstream.identities.nin.nin}`, headers: bearer(other.liveSecret), payload: {} });
    expect(response.statusCode).toBe(201);
    const usage = await front.database.db.selectFrom('usage_events').selectAll().where('org_id', '=', other.id).executeTakeFirstOrThrow();
    expect(usage.source).toBe('primary');
    // Test mode keeps the sandbox: no upstream is asked.
    const sandbox = await front.app.inject({ method: 'POST', url: `/v1/verifications/identities/nin/${upstream.identities.nin.nin}`, headers: bearer(other.testSecret), payload: {} });
    expect(sandbox.statusCode).toBe(201);
  });
});
