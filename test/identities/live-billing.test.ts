import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setPrice } from '../../src/platform/billing.js';
import { importRegistry } from '../../src/identities/registry/import.js';
import { IDENTITY_BILLABLES } from '../../src/identities/lookups.js';
import { bearer, buildTestContext, type TestContext } from '../helpers/app.js';

const ID = '/v1/verifications/identities';
const LIVE_BVN = {
  bvn: '22111111111', firstname: 'Emeka', lastname: 'Obi', gender: 'Male', phone: '08091112222',
  birthdate: '01-01-1980', email: 'emeka@example.com',
};
const LIVE_NIN = {
  nin: '12121212121', firstname: 'Aisha', lastname: 'Bello', gender: 'Female', phone: '08123334444', birthdate: '05-06-1995',
};
const LIVE_TIN = { tin: '11112222-0001', taxpayerName: 'OBI VENTURES' };

async function ledgerSum(t: TestContext, orgId: string): Promise<number> {
  const rows = await t.database.db.selectFrom('ledger_entries').select('amount').where('org_id', '=', orgId).execute();
  return rows.reduce((sum, row) => sum + row.amount, 0);
}

async function balance(t: TestContext, orgId: string): Promise<number> {
  return (await t.accounts.get(orgId)).balance;
}

describe('live lookups, billing and isolation', () => {
  let t: TestContext;
  const post = (url: string, key: string, payload: object = {}) =>
    t.app.inject({ method: 'POST', url: `${ID}${url}`, headers: bearer(key), payload });

  beforeAll(async () => {
    t = await buildTestContext();
    const lines = [
      { type: 'bvn', record: LIVE_BVN },
      { type: 'nin', record: LIVE_NIN },
      { type: 'tin', record: LIVE_TIN },
    ].map((line) => JSON.stringify(line));
    const result = await importRegistry(t.database.db, Readable.from([lines.join('\n')]));
    expect(result.imported).toBe(3);
  });
  afterAll(() => t.close());

  it('charges a successful live lookup its price, with a ledger row, and records it masked', async () => {
    const org = await t.org({ fund: 100_000 });
    const res = await post(`/bvn/${LIVE_BVN.bvn}?type=premium`, org.liveSecret, { firstname: 'Emeka', lastname: 'Obi', dob: '1980-01-01' });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.fieldMatches).toEqual({ firstname: true, lastname: true, dob: true });
    const price = IDENTITY_BILLABLES.bvn_premium.defaultPrice;
    expect(await balance(t, org.id)).toBe(100_000 - price);
    expect(await ledgerSum(t, org.id)).toBe(100_000 - price);
    const usage = await t.database.db.selectFrom('usage_events').selectAll().where('org_id', '=', org.id).execute();
    expect(usage).toHaveLength(1);
    expect(usage[0]).toMatchObject({ mode: 'live', type: 'bvn_premium', outcome: 'success', price });
    expect(usage[0]!.subject).not.toContain(LIVE_BVN.bvn);
    expect(usage[0]!.subject).toMatch(/^221\*+11$/);
  });

  it('does not charge not-found, validation or auth failures, but records the not-found', async () => {
    const org = await t.org({ fund: 100_000, riskLevel: 'LOW' });
    expect((await post('/bvn/22999999999', org.liveSecret, { lastname: 'x' })).statusCode).toBe(404);
    expect((await post('/bvn/123', org.liveSecret, { lastname: 'x' })).statusCode).toBe(400);
    expect((await post(`/bvn/${LIVE_BVN.bvn}`, org.liveSecret, {})).statusCode).toBe(400);
    expect((await post(`/bvn/${LIVE_BVN.bvn}`, 'sk_live_nope', { lastname: 'Obi' })).statusCode).toBe(401);
    expect(await balance(t, org.id)).toBe(100_000);
    const usage = await t.database.db.selectFrom('usage_events').selectAll().where('org_id', '=', org.id).execute();
    expect(usage.map((row) => row.outcome)).toEqual(['not_found']);
    expect(usage[0]!.price).toBe(0);
  });

  it('uses the price set by the operator', async () => {
    const org = await t.org({ fund: 100_000 });
    await setPrice(t.database.db, 'tin', 1_234);
    const res = await t.app.inject({ method: 'GET', url: `${ID}/tin/${LIVE_TIN.tin}`, headers: bearer(org.liveSecret) });
    expect(res.statusCode).toBe(200);
    expect(await balance(t, org.id)).toBe(100_000 - 1_234);
    await setPrice(t.database.db, 'tin', IDENTITY_BILLABLES.tin.defaultPrice);
  });

  it('answers 402 style B and charges nothing when the wallet is short', async () => {
    const price = IDENTITY_BILLABLES.nin.defaultPrice;
    const org = await t.org({ fund: price - 1 });
    const res = await post(`/nin/${LIVE_NIN.nin}`, org.liveSecret);
    expect(res.statusCode).toBe(402);
    expect(res.json()).toMatchObject({ statusCode: 402, error: 'Payment Required', message: expect.stringMatching(/funded/) });
    expect(await balance(t, org.id)).toBe(price - 1);
    expect(await ledgerSum(t, org.id)).toBe(price - 1);
    const unfunded = await t.org({ fund: 0 });
    expect((await post(`/nin/${LIVE_NIN.nin}`, unfunded.liveSecret)).statusCode).toBe(402);
  });

  it('never charges test mode', async () => {
    const org = await t.org({ fund: 0 });
    expect((await post('/bvn/22345678901', org.testSecret)).statusCode).toBe(200);
    const usage = await t.database.db.selectFrom('usage_events').selectAll().where('org_id', '=', org.id).execute();
    expect(usage).toMatchObject([{ mode: 'test', price: 0, outcome: 'success' }]);
  });

  it('does not overdraw under concurrency: 200 lookups on a wallet funded for 50', async () => {
    const price = IDENTITY_BILLABLES.bvn_basic.defaultPrice;
    const org = await t.org({ fund: price * 50 });
    const responses = await Promise.all(
      Array.from({ length: 200 }, () => post(`/bvn/${LIVE_BVN.bvn}`, org.liveSecret)),
    );
    const codes = responses.map((res) => res.statusCode);
    expect(codes.filter((code) => code === 200)).toHaveLength(50);
    expect(codes.filter((code) => code === 402)).toHaveLength(150);
    expect(await balance(t, org.id)).toBe(0);
    expect(await ledgerSum(t, org.id)).toBe(0);
  });

  it('keeps test and live apart: a test secret never sees live records, a live secret never sees test identities', async () => {
    const org = await t.org();
    expect((await post(`/bvn/${LIVE_BVN.bvn}`, org.testSecret)).statusCode).toBe(404);
    expect((await post(`/nin/${LIVE_NIN.nin}`, org.testSecret)).statusCode).toBe(404);
    expect((await post('/nin_phone/08123334444', org.testSecret)).statusCode).toBe(404);
    const tin = await t.app.inject({ method: 'GET', url: `${ID}/tin/${LIVE_TIN.tin}`, headers: bearer(org.testSecret) });
    expect(tin.statusCode).toBe(404);
    expect((await post('/bvn/22345678901', org.liveSecret)).statusCode).toBe(404);
  });

  it("charges only the caller's wallet and records usage under the caller's organization", async () => {
    const a = await t.org({ fund: 50_000 });
    const b = await t.org({ fund: 50_000 });
    expect((await post(`/nin_phone/${LIVE_NIN.phone}`, a.liveSecret)).statusCode).toBe(200);
    expect(await balance(t, a.id)).toBe(50_000 - IDENTITY_BILLABLES.nin_phone.defaultPrice);
    expect(await balance(t, b.id)).toBe(50_000);
    const bUsage = await t.database.db.selectFrom('usage_events').selectAll().where('org_id', '=', b.id).execute();
    expect(bUsage).toHaveLength(0);
  });

  it('writes no identity number, phone or photo to the logs', async () => {
    const org = await t.org();
    await post(`/bvn/${LIVE_BVN.bvn}?type=premium`, org.liveSecret, { firstname: 'Emeka', lastname: 'Obi' });
    await post(`/nin_phone/${LIVE_NIN.phone}`, org.liveSecret);
    await post('/nin/70412358961', org.testSecret);
    await post('/bvn/22999999999', org.liveSecret);
    // Timings are floats whose digits could spell anything; they are not what this test is about.
    const logs = t.logs.join('').replace(/"responseTime":[\d.e+-]+/g, '');
    expect(logs).toContain('request completed');
    for (const secretValue of [LIVE_BVN.bvn, LIVE_NIN.phone, '8123334444', '70412358961', '22999999999', org.liveSecret, org.testSecret]) {
      expect(logs).not.toContain(secretValue);
    }
    expect(logs).not.toMatch(/base64|\/9j\//);
  });
});
