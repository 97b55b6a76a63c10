import { Readable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importRegistry } from '../../src/identities/registry/import.js';
import { purgeIdempotencyKeys } from '../../src/platform/idempotency.js';
import { ADDRESS_BODY, balanceOf, BUSINESS_BODY } from '../agents/fixtures.js';
import { bearer, buildTestContext, type TestContext } from '../helpers/app.js';

const LIVE_BVN = { bvn: '22111111111', firstname: 'Emeka', lastname: 'Obi', gender: 'Male', phone: '08091112222', birthdate: '01-01-1980' };
const BVN_URL = `/v1/verifications/identities/bvn/${LIVE_BVN.bvn}?type=premium`;
const ADDRESSES = '/v1/verifications/addresses';

/**
 * Idempotency-Key on the API's POSTs and DELETEs: one run and one charge per key and request,
 * the first answer replayed, a different request refused, concurrent retries never run twice.
 * Over real sockets where concurrency matters.
 */
describe('Idempotency-Key', () => {
  let t: TestContext;
  let base: string;
  let counter = 0;
  const newKey = () => `key-${Date.now()}-${++counter}`;

  beforeAll(async () => {
    t = await buildTestContext({ idempotency: { waitMs: 1_500, pollMs: 20 } });
    const result = await importRegistry(t.database.db, Readable.from([JSON.stringify({ type: 'bvn', record: LIVE_BVN })]));
    expect(result.imported).toBe(1);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await t?.close();
  });

  const send = (method: string, url: string, secret: string, key: string | undefined, body?: unknown) =>
    fetch(`${base}${url}`, {
      method,
      headers: { authorization: `Bearer ${secret}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...(key ? { 'idempotency-key': key } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const usageCount = async (orgId: string) =>
    Number((await t.database.db.selectFrom('usage_events').select((eb) => eb.fn.countAll().as('n')).where('org_id', '=', orgId).executeTakeFirstOrThrow()).n);
  const addressCount = async (orgId: string) =>
    Number((await t.database.db.selectFrom('address_verifications').select((eb) => eb.fn.countAll().as('n')).where('org_id', '=', orgId).executeTakeFirstOrThrow()).n);

  it('replays the first answer of a lookup for the same key and body, and charges once', async () => {
    const org = await t.org({ fund: 1_000_000 });
    const key = newKey();
    const first = await send('POST', BVN_URL, org.liveSecret, key, {});
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const firstBody = await first.text();
    const balance = await balanceOf(t.database.db, org.id);

    // The same body written differently (key order) is the same request.
    const again = await send('POST', BVN_URL, org.liveSecret, key, {});
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await again.text()).toBe(firstBody);
    expect(await balanceOf(t.database.db, org.id)).toBe(balance);
    expect(await usageCount(org.id)).toBe(1);

    // Without a key every request runs and is charged.
    expect((await send('POST', BVN_URL, org.liveSecret, undefined, {})).status).toBe(200);
    expect(await balanceOf(t.database.db, org.id)).toBeLessThan(balance);
  });

  it('refuses the same key with another request in the family\'s style, and treats reordered JSON as the same', async () => {
    const org = await t.org({ riskLevel: 'LOW', fund: 1_000_000 });
    const key = newKey();
    const created = await send('POST', ADDRESSES, org.testSecret, key, ADDRESS_BODY);
    expect(created.status).toBe(201);
    const reordered = Object.fromEntries(Object.entries(ADDRESS_BODY).reverse());
    const replay = await send('POST', ADDRESSES, org.testSecret, key, reordered);
    expect(replay.status).toBe(201);
    expect(await replay.json()).toEqual(await created.json());

    const other = await send('POST', ADDRESSES, org.testSecret, key, { ...ADDRESS_BODY, street: '1 Other Road' });
    expect(other.status).toBe(422);
    expect(await other.json()).toMatchObject({ status: 'error', message: expect.stringMatching(/different request/) });
    // Identity family: style B.
    const lookup = await send('POST', `/v1/verifications/identities/bvn/${LIVE_BVN.bvn}?type=basic`, org.testSecret, key, {});
    expect(lookup.status).toBe(422);
    expect(await lookup.json()).toMatchObject({ statusCode: 422, error: 'Unprocessable Entity' });
    expect(await addressCount(org.id)).toBe(1);
  });

  it('runs concurrent requests with one key once: the others wait and get its answer', async () => {
    const org = await t.org({ riskLevel: 'LOW', fund: 1_000_000 });
    const key = newKey();
    const balance = await balanceOf(t.database.db, org.id);
    const answers = await Promise.all(Array.from({ length: 12 }, () => send('POST', ADDRESSES, org.liveSecret, key, ADDRESS_BODY)));
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.every((status) => status === 201 || status === 409), statuses.join()).toBe(true);
    const bodies = await Promise.all(answers.filter((answer) => answer.status === 201).map((answer) => answer.text()));
    expect(new Set(bodies).size).toBe(1);
    expect(answers.filter((answer) => answer.status === 201 && answer.headers.get('idempotent-replayed') === null)).toHaveLength(1);
    expect(await addressCount(org.id)).toBe(1);
    const charged = balance - (await balanceOf(t.database.db, org.id));
    expect(charged).toBeGreaterThan(0);
    // Every retry now replays; the charge stays one.
    expect((await send('POST', ADDRESSES, org.liveSecret, key, ADDRESS_BODY)).status).toBe(201);
    expect(balance - (await balanceOf(t.database.db, org.id))).toBe(charged);
  });

  it('refuses at once a request whose key a different request in flight holds', async () => {
    const org = await t.org({ riskLevel: 'LOW' });
    const key = newKey();
    // A request in flight elsewhere (another process) holds the key for another body.
    await t.database.db
      .insertInto('idempotency_keys')
      .values({ org_id: org.id, mode: 'test', key, fingerprint: 'another-request', locked_until: new Date(Date.now() + 60_000), expires_at: new Date(Date.now() + 3_600_000) })
      .execute();
    const started = Date.now();
    const refused = await send('POST', ADDRESSES, org.testSecret, key, ADDRESS_BODY);
    expect(refused.status).toBe(422);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(await addressCount(org.id)).toBe(0);
  });

  it('waits for a running holder of the same request, then answers 409 with Retry-After', async () => {
    const org = await t.org({ riskLevel: 'LOW' });
    const key = newKey();
    // Learn the fingerprint of this request from a first run, then make it look in flight.
    expect((await send('POST', ADDRESSES, org.testSecret, key, ADDRESS_BODY)).status).toBe(201);
    await t.database.db.updateTable('idempotency_keys').set({ state: 'running', status_code: null, body: null, locked_until: new Date(Date.now() + 60_000) }).where('key', '=', key).execute();
    const started = Date.now();
    const busy = await send('POST', ADDRESSES, org.testSecret, key, ADDRESS_BODY);
    expect(busy.status).toBe(409);
    expect(busy.headers.get('retry-after')).toBe('1');
    expect(await busy.json()).toMatchObject({ status: 'error', code: 'CONFLICT', message: expect.stringMatching(/still running/) });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);

    // The holder's process died: once its lock has passed, the same request takes the key and runs.
    await t.database.db.updateTable('idempotency_keys').set({ locked_until: new Date(Date.now() - 1_000) }).where('key', '=', key).execute();
    const rerun = await send('POST', ADDRESSES, org.testSecret, key, ADDRESS_BODY);
    expect(rerun.status).toBe(201);
    expect(rerun.headers.get('idempotent-replayed')).toBeNull();
    expect(await addressCount(org.id)).toBe(2);
  });

  it('keeps keys per organization and per mode', async () => {
    const a = await t.org({ riskLevel: 'LOW', fund: 1_000_000 });
    const b = await t.org({ riskLevel: 'LOW', fund: 1_000_000 });
    const key = newKey();
    expect((await send('POST', ADDRESSES, a.testSecret, key, ADDRESS_BODY)).status).toBe(201);
    const otherMode = await send('POST', ADDRESSES, a.liveSecret, key, ADDRESS_BODY);
    expect(otherMode.status).toBe(201);
    expect(otherMode.headers.get('idempotent-replayed')).toBeNull();
    const otherOrg = await send('POST', ADDRESSES, b.testSecret, key, { ...ADDRESS_BODY, street: '9 Elsewhere' });
    expect(otherOrg.status).toBe(201);
    expect(await addressCount(a.id)).toBe(2);
    expect(await addressCount(b.id)).toBe(1);
  });

  it('does not keep a 402: after funding, a retry with the same key runs and is charged', async () => {
    const org = await t.org({ fund: 0 });
    const key = newKey();
    expect((await send('POST', BVN_URL, org.liveSecret, key, {})).status).toBe(402);
    await t.accounts.fund(org.id, 100_000);
    const retry = await send('POST', BVN_URL, org.liveSecret, key, {});
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(await balanceOf(t.database.db, org.id)).toBeLessThan(100_000);
    expect((await send('POST', BVN_URL, org.liveSecret, key, {})).headers.get('idempotent-replayed')).toBe('true');
  });

  it('replays a cancel (DELETE) instead of answering 409 the second time', async () => {
    const org = await t.org({ riskLevel: 'LOW' });
    const created = await send('POST', ADDRESSES, org.testSecret, undefined, ADDRESS_BODY);
    const { id } = ((await created.json()) as { data: { id: string } }).data;
    const key = newKey();
    const cancel = await send('DELETE', `${ADDRESSES}/${id}`, org.testSecret, key);
    expect(cancel.status).toBe(200);
    const again = await send('DELETE', `${ADDRESSES}/${id}`, org.testSecret, key);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await send('DELETE', `${ADDRESSES}/${id}`, org.testSecret, newKey())).status).toBe(409);
  });

  it('takes the uploaded photo of a multipart biometrics request into account', async () => {
    const org = await t.org();
    const image = (color: string) => sharp({ create: { width: 64, height: 64, channels: 3, background: color } }).jpeg().toBuffer();
    const post = async (key: string, photo: Buffer) => {
      const form = new FormData();
      form.set('idType', 'nin');
      form.set('idNumber', '70412358961'); // the sandbox NIN
      form.set('photo', new Blob([new Uint8Array(photo)], { type: 'image/jpeg' }), 'photo.jpg');
      return fetch(`${base}/v1/verifications/identities/biometrics`, { method: 'POST', headers: { authorization: `Bearer ${org.testSecret}`, 'idempotency-key': key }, body: form });
    };
    const key = newKey();
    const first = await post(key, await image('#808080'));
    // A photo without a face is a 400: deterministic, kept, and replayed for the same photo.
    expect(first.status).toBe(400);
    const again = await post(key, await image('#808080'));
    expect(again.status).toBe(400);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await post(key, await image('#202020'))).status).toBe(422);
  });

  it('refuses a malformed key in the family\'s style', async () => {
    const org = await t.org({ riskLevel: 'LOW' });
    for (const key of ['has space', 'x'.repeat(256)]) {
      const address = await send('POST', ADDRESSES, org.testSecret, key, ADDRESS_BODY);
      expect(address.status).toBe(400);
      expect(await address.json()).toMatchObject({ status: 'error', message: expect.stringMatching(/Idempotency-Key must be/) });
      const lookup = await send('POST', BVN_URL, org.testSecret, key, {});
      expect(lookup.status).toBe(400);
      expect(await lookup.json()).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    }
    expect(await addressCount(org.id)).toBe(0);
  });

  it('forgets a key after its time to live, and purges expired keys', async () => {
    const org = await t.org({ riskLevel: 'LOW' });
    const key = newKey();
    expect((await send('POST', ADDRESSES, org.testSecret, key, ADDRESS_BODY)).status).toBe(201);
    await t.database.db.updateTable('idempotency_keys').set({ expires_at: new Date(Date.now() - 1_000) }).where('key', '=', key).execute();
    const later = await send('POST', ADDRESSES, org.testSecret, key, { ...ADDRESS_BODY, street: '2 New Street' });
    expect(later.status).toBe(201);
    expect(later.headers.get('idempotent-replayed')).toBeNull();
    await t.database.db.updateTable('idempotency_keys').set({ expires_at: new Date(Date.now() - 1_000) }).where('key', '=', key).execute();
    expect(await purgeIdempotencyKeys(t.database.db)).toBeGreaterThanOrEqual(1);
    expect(await t.database.db.selectFrom('idempotency_keys').select('key').where('key', '=', key).executeTakeFirst()).toBeUndefined();
  });
});

/**
 * The answer commits with the work (issue 19, item 7): while the answer is held after the work
 * (the test-only holdAnswerMs), the key already holds it (creates) or is marked committed (a paid
 * lookup), so a process dying there leaves a retry something to resolve to.
 */
describe('Idempotency-Key answers committed with their work', () => {
  let t: TestContext;
  let base: string;

  beforeAll(async () => {
    t = await buildTestContext({ idempotency: { holdAnswerMs: 1_500 } });
    const result = await importRegistry(t.database.db, Readable.from([JSON.stringify({ type: 'bvn', record: LIVE_BVN })]));
    expect(result.imported).toBe(1);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await t?.close();
  });

  const keyRow = (key: string) => t.database.db.selectFrom('idempotency_keys').select(['state', 'status_code', 'body']).where('key', '=', key).executeTakeFirst();
  const pending = async (key: string, state: string) => {
    const deadline = Date.now() + 1_000;
    while (Date.now() < deadline) {
      const row = await keyRow(key);
      if (row?.state === state) return row;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return keyRow(key);
  };

  it('stores a create\'s answer in its transaction, before it is sent', async () => {
    const org = await t.org({ riskLevel: 'LOW', fund: 10_000_000 });
    for (const [url, body, status] of [[ADDRESSES, ADDRESS_BODY, 201], ['/v1/verifications/businesses', BUSINESS_BODY, 200]] as const) {
      const key = `committed-${url}-${Date.now()}`;
      const answer = fetch(`${base}${url}`, { method: 'POST', headers: { ...bearer(org.liveSecret), 'content-type': 'application/json', 'idempotency-key': key }, body: JSON.stringify(body) });
      const row = await pending(key, 'done');
      expect(row, url).toMatchObject({ state: 'done', status_code: status });
      const sent = await answer;
      expect(sent.status).toBe(status);
      expect(await sent.text()).toBe(row!.body);
    }
  });

  it('marks a paid lookup\'s key committed in its charge\'s transaction, before the answer is sent', async () => {
    const org = await t.org({ fund: 1_000_000 });
    const key = `committed-lookup-${Date.now()}`;
    const answer = fetch(`${base}${BVN_URL}`, { method: 'POST', headers: { ...bearer(org.liveSecret), 'content-type': 'application/json', 'idempotency-key': key }, body: '{}' });
    expect(await pending(key, 'committed')).toMatchObject({ state: 'committed' });
    expect((await answer).status).toBe(200);
    expect(await keyRow(key)).toMatchObject({ state: 'done', status_code: 200 });
  });
});
