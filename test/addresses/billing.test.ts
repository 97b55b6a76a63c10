import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADDRESS_BILLABLES } from '../../src/addresses/service.js';
import { BUSINESS_BILLABLES } from '../../src/businesses/service.js';
import { setPrice } from '../../src/platform/billing.js';
import { buildTestContext, type TestContext } from '../helpers/app.js';
import { ADDRESS_BODY, balanceOf, BUSINESS_BODY, client, expectStyleA } from '../agents/fixtures.js';

const ADDRESSES = '/v1/verifications/addresses';
const BUSINESSES = '/v1/verifications/businesses';
const ADDRESS_PRICE = ADDRESS_BILLABLES.address.defaultPrice;
const BUSINESS_PRICE = BUSINESS_BILLABLES.business.defaultPrice;

describe('live charges for field verifications', () => {
  let t: TestContext;
  let http: ReturnType<typeof client>;

  beforeAll(async () => {
    t = await buildTestContext();
    http = client(t.app);
  });
  afterAll(() => t.close());

  const ledger = (orgId: string) =>
    t.database.db.selectFrom('ledger_entries').select(['kind', 'amount', 'balance_after']).where('org_id', '=', orgId).orderBy('id').execute();

  it('charges the address and business prices in live mode, never in test mode', async () => {
    const org = await t.org({ riskLevel: 'LOW', fund: 1_000_000 });
    expect((await http.post(ADDRESSES, org.testSecret, ADDRESS_BODY)).statusCode).toBe(201);
    expect((await http.post(BUSINESSES, org.testSecret, BUSINESS_BODY)).statusCode).toBe(200);
    expect(await balanceOf(t.database.db, org.id)).toBe(1_000_000);
    expect((await http.post(ADDRESSES, org.liveSecret, ADDRESS_BODY)).statusCode).toBe(201);
    expect((await http.post(BUSINESSES, org.liveSecret, BUSINESS_BODY)).statusCode).toBe(200);
    expect(await balanceOf(t.database.db, org.id)).toBe(1_000_000 - ADDRESS_PRICE - BUSINESS_PRICE);
    const usage = await t.database.db.selectFrom('usage_events').select(['mode', 'type', 'price']).where('org_id', '=', org.id).orderBy('id').execute();
    expect(usage.map((u) => [u.mode, u.type, Number(u.price)])).toEqual([
      ['test', 'address', 0],
      ['test', 'business', 0],
      ['live', 'address', ADDRESS_PRICE],
      ['live', 'business', BUSINESS_PRICE],
    ]);
  });

  it('answers 402 style A when the wallet is short, creating and charging nothing', async () => {
    const org = await t.org({ riskLevel: 'LOW', fund: ADDRESS_PRICE - 1 });
    expectStyleA(await http.post(ADDRESSES, org.liveSecret, ADDRESS_BODY), 402, 'PAYMENT_REQUIRED');
    expectStyleA(await http.post(BUSINESSES, org.liveSecret, BUSINESS_BODY), 402, 'PAYMENT_REQUIRED');
    expect(await balanceOf(t.database.db, org.id)).toBe(ADDRESS_PRICE - 1);
    expect((await http.get(ADDRESSES, org.liveSecret)).json()._pagination.total).toBe(0);
    expect((await http.get(BUSINESSES, org.liveSecret)).json()._pagination.total).toBe(0);
    const refused = await t.database.db.selectFrom('usage_events').select('outcome').where('org_id', '=', org.id).execute();
    expect(refused.map((u) => u.outcome)).toEqual(['insufficient_funds', 'insufficient_funds']);
  });

  it('never overdraws under concurrent creates: exactly as many succeed as the balance pays for', async () => {
    const org = await t.org({ riskLevel: 'LOW', fund: ADDRESS_PRICE * 3 });
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => http.post(ADDRESSES, org.liveSecret, { ...ADDRESS_BODY, reference: `race-${i}` })),
    );
    const codes = results.map((r) => r.statusCode).sort();
    expect(codes).toEqual([201, 201, 201, 402, 402, 402, 402, 402, 402, 402]);
    expect(await balanceOf(t.database.db, org.id)).toBe(0);
    const list = (await http.get(ADDRESSES, org.liveSecret)).json();
    expect(list._pagination.total).toBe(3);
    expect(list.data.map((r: { id: number }) => r.id)).toHaveLength(3);
  });

  it('charges nothing for a duplicate reference, even when creates race on it', async () => {
    const org = await t.org({ riskLevel: 'LOW', fund: 1_000_000 });
    const results = await Promise.all(Array.from({ length: 5 }, () => http.post(ADDRESSES, org.liveSecret, { ...ADDRESS_BODY, reference: 'one' })));
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, 409, 409, 409, 409]);
    expect(await balanceOf(t.database.db, org.id)).toBe(1_000_000 - ADDRESS_PRICE);
    expect((await http.get(ADDRESSES, org.liveSecret)).json()._pagination.total).toBe(1);
  });

  it('charges nothing for a duplicate business reference', async () => {
    const org = await t.org({ riskLevel: 'LOW', fund: 1_000_000 });
    expect((await http.post(BUSINESSES, org.liveSecret, { ...BUSINESS_BODY, reference: 'b1' })).statusCode).toBe(200);
    expectStyleA(await http.post(BUSINESSES, org.liveSecret, { ...BUSINESS_BODY, reference: 'b1' }), 409, 'CONFLICT');
    expect(await balanceOf(t.database.db, org.id)).toBe(1_000_000 - BUSINESS_PRICE);
  });

  it('uses the price set by the operator', async () => {
    await setPrice(t.database.db, 'business', 7_777);
    try {
      const org = await t.org({ riskLevel: 'LOW', fund: 10_000 });
      expect((await http.post(BUSINESSES, org.liveSecret, BUSINESS_BODY)).statusCode).toBe(200);
      expect(await balanceOf(t.database.db, org.id)).toBe(10_000 - 7_777);
    } finally {
      await t.database.db.deleteFrom('prices').where('type', '=', 'business').execute();
    }
  });

  it('refunds a cancellation before any visit, with a refund ledger row', async () => {
    const org = await t.org({ riskLevel: 'LOW', fund: 1_000_000 });
    const address = (await http.post(ADDRESSES, org.liveSecret, ADDRESS_BODY)).json().data;
    const business = (await http.post(BUSINESSES, org.liveSecret, BUSINESS_BODY)).json().data;
    expect((await http.del(`${ADDRESSES}/${address.id}`, org.liveSecret)).statusCode).toBe(200);
    expect((await http.del(`${BUSINESSES}/${business.id}`, org.liveSecret)).statusCode).toBe(200);
    expect(await balanceOf(t.database.db, org.id)).toBe(1_000_000);
    const entries = await ledger(org.id);
    expect(entries.map((e) => [e.kind, Number(e.amount), Number(e.balance_after)])).toEqual([
      ['credit', 1_000_000, 1_000_000],
      ['charge', -ADDRESS_PRICE, 1_000_000 - ADDRESS_PRICE],
      ['charge', -BUSINESS_PRICE, 1_000_000 - ADDRESS_PRICE - BUSINESS_PRICE],
      ['refund', ADDRESS_PRICE, 1_000_000 - BUSINESS_PRICE],
      ['refund', BUSINESS_PRICE, 1_000_000],
    ]);
    // A second cancel is refused and refunds nothing more.
    expectStyleA(await http.del(`${ADDRESSES}/${address.id}`, org.liveSecret), 409, 'CONFLICT');
    expect(await balanceOf(t.database.db, org.id)).toBe(1_000_000);
  });
});
