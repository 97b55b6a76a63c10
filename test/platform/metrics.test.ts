import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { importRegistry } from '../../src/identities/registry/import.js';
import { bearer, buildTestContext, type TestContext } from '../helpers/app.js';

const TOKEN = 'metrics-token-for-tests-0123456789';
const LIVE_BVN = { bvn: '22111111111', firstname: 'Emeka', lastname: 'Obi', gender: 'Male', phone: '08091112222', birthdate: '01-01-1980' };

/** The value of one sample of a scrape (0 when absent): `name{labels}` as Prometheus prints it. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = match[2] ? match[2].split(/,(?=\w+=")/) : [];
    if (wanted.every((pair) => present.includes(pair))) return Number(match[3]);
  }
  return 0;
}

describe('GET /metrics', () => {
  let t: TestContext;
  const scrape = async () => {
    const res = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.statusCode, res.body).toBe(200);
    return res.body;
  };

  beforeAll(async () => {
    t = await buildTestContext({ config: { metricsToken: TOKEN } });
    const result = await importRegistry(t.database.db, Readable.from([JSON.stringify({ type: 'bvn', record: LIVE_BVN })]));
    expect(result.imported).toBe(1);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers only the metrics token, in the style of the other non-identity routes', async () => {
    for (const authorization of [undefined, 'Bearer wrong-token-0123456789abcdef', `Bearer ${TOKEN}x`, TOKEN]) {
      const res = await t.app.inject({ method: 'GET', url: '/metrics', headers: authorization ? { authorization } : {} });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({ status: 'error', code: 'ACCESS_DENIED' });
      expect(res.headers['www-authenticate']).toContain('Bearer');
    }
    const org = await t.org();
    const withSecret = await t.app.inject({ method: 'GET', url: '/metrics', headers: bearer(org.liveSecret) });
    expect(withSecret.statusCode).toBe(401);
    const ok = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  });

  it('takes its token from VOUCH_METRICS_TOKEN, refusing a short or spaced one without echoing it', () => {
    expect(loadConfig({}).metricsToken).toBeUndefined();
    expect(loadConfig({ VOUCH_METRICS_TOKEN: TOKEN }).metricsToken).toBe(TOKEN);
    for (const bad of ['short-token', 'has spaces in the middle of it ok', 'x'.repeat(257)]) {
      expect(() => loadConfig({ VOUCH_METRICS_TOKEN: bad })).toThrow(ConfigError);
      expect(() => loadConfig({ VOUCH_METRICS_TOKEN: bad })).toThrow(/^VOUCH_METRICS_TOKEN: must be 24 to 256 printable characters/);
      try {
        loadConfig({ VOUCH_METRICS_TOKEN: bad });
      } catch (err) {
        expect((err as Error).message).not.toContain(bad);
      }
    }
  });

  it('is not there without a configured token', async () => {
    const off = await buildTestContext();
    try {
      const res = await off.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ status: 'error', code: 'NOT_FOUND_ERROR' });
    } finally {
      await off.close();
    }
  });

  it('counts requests by route template, lookups by outcome, charges and 402s, never an identifier', async () => {
    const rich = await t.org();
    const poor = await t.org({ fund: 0 });
    const route = '/v1/verifications/identities/bvn/:ref';
    const before = await scrape();
    const lookup = (secret: string, bvn: string) =>
      t.app.inject({ method: 'POST', url: `/v1/verifications/identities/bvn/${bvn}?type=premium`, headers: bearer(secret), payload: {} });
    expect((await lookup(rich.liveSecret, LIVE_BVN.bvn)).statusCode).toBe(200);
    expect((await lookup(rich.liveSecret, LIVE_BVN.bvn)).statusCode).toBe(200);
    expect((await lookup(rich.liveSecret, '22999999999')).statusCode).toBe(404);
    expect((await lookup(poor.liveSecret, LIVE_BVN.bvn)).statusCode).toBe(402);
    const after = await scrape();

    const delta = (name: string, labels: Record<string, string>) => sample(after, name, labels) - sample(before, name, labels);
    expect(delta('vouch_http_requests_total', { method: 'POST', route, status: '200' })).toBe(2);
    expect(delta('vouch_http_requests_total', { method: 'POST', route, status: '404' })).toBe(1);
    expect(delta('vouch_http_request_duration_seconds_count', { method: 'POST', route, status: '200' })).toBe(2);
    expect(delta('vouch_identity_lookups_total', { type: 'bvn_premium', mode: 'live', outcome: 'success' })).toBe(2);
    expect(delta('vouch_identity_lookups_total', { type: 'bvn_premium', mode: 'live', outcome: 'not_found' })).toBe(1);
    expect(delta('vouch_identity_lookups_total', { type: 'bvn_premium', mode: 'live', outcome: 'insufficient_funds' })).toBe(1);
    expect(delta('vouch_wallet_charges_total', { type: 'bvn_premium' })).toBe(2);
    expect(delta('vouch_wallet_charged_kobo_total', { type: 'bvn_premium' })).toBe(2 * 5_000);
    expect(delta('vouch_payment_required_total', { method: 'POST', route })).toBe(1);
    // Not as a label or a word: a sample value such as 0.22999999999999998 (CPU seconds) may hold the digits.
    const asWord = (digits: string) => new RegExp(`(?<![\\d.])${digits}(?![\\d])`);
    expect(after).not.toMatch(asWord(LIVE_BVN.bvn));
    expect(after).not.toMatch(asWord('22999999999'));
  });

  it('gauges the database connections, the webhook queue and the mail outbox at scrape time', async () => {
    const text = await scrape();
    expect(sample(text, 'vouch_db_connections', { state: 'max' })).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(/^vouch_db_connections\{state="in_use"\} \d+$/m);
    expect(text).toMatch(/^vouch_webhook_queue_depth\{due="now"\} \d+$/m);
    expect(text).toMatch(/^vouch_mail_outbox_unsent\{state="waiting"\} \d+$/m);
    expect(text).toMatch(/^vouch_process_cpu_seconds_total \d/m);

    // A delivery waiting for its endpoint shows in the queue depth.
    const org = await t.org();
    const dueBefore = sample(text, 'vouch_webhook_queue_depth', { due: 'now' });
    await t.database.db
      .insertInto('webhook_deliveries')
      .values({ message_id: `msg_metrics_${Date.now()}`, org_id: org.id, mode: 'test', event_type: 'test.event', payload: '{}' })
      .execute();
    expect(sample(await scrape(), 'vouch_webhook_queue_depth', { due: 'now' })).toBe(dueBefore + 1);
  });
});
