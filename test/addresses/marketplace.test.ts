import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADDRESS_BILLABLES } from '../../src/addresses/service.js';
import { buildTestContext, type TestContext } from '../helpers/app.js';
import { ADDRESS_BODY, balanceOf, client, expectStyleA, VERIFIED } from '../agents/fixtures.js';

const BASE = '/v1/verifications/addresses';
const MARKET = `${BASE}/marketplace`;
const QUERY = { maxAddressAge: '6M', firstname: 'Adaeze', lastname: 'Okonkwo', idType: 'NIN', idNumber: '12345678901' };

describe('address marketplace (address by identity)', () => {
  let t: TestContext;
  let http: ReturnType<typeof client>;
  let owner: Awaited<ReturnType<TestContext['org']>>;
  let caller: Awaited<ReturnType<TestContext['org']>>;

  const verify = async (secret: string, body: object, outcome: 'verified' | 'failed' = 'verified') => {
    const created = (await http.post(BASE, secret, body)).json().data;
    const done = await http.post(`/v1/test-helpers/addresses/${created.id}/complete`, secret, { outcome });
    expect(done.statusCode).toBe(200);
    return done.json().data;
  };

  beforeAll(async () => {
    t = await buildTestContext();
    http = client(t.app);
    owner = await t.org({ riskLevel: 'LOW', fund: 10_000_000 });
    caller = await t.org({ riskLevel: 'LOW', fund: 100_000 });
  });
  afterAll(() => t.close());

  it("finds another organization's verified address in live mode, without its reference or personal data", async () => {
    const body = {
      ...ADDRESS_BODY,
      reference: 'owner-secret-ref',
      city: 'Lekki',
      applicant: { ...ADDRESS_BODY.applicant, phone: '08031234567', dob: '14-03-1990', middlename: 'Chi' },
    };
    const created = await http.post(BASE, owner.liveSecret, body);
    expect(created.statusCode, created.body).toBe(201);
    // Live verifications complete through a field agent; the row is completed directly here.
    const completedAt = new Date();
    await t.database.db
      .updateTable('address_verifications')
      .set({ status: 'verified', completed_at: completedAt, latitude: 6.55, longitude: 3.525 })
      .where('id', '=', created.json().data.id)
      .execute();
    const res = await http.post(MARKET, caller.liveSecret, { ...QUERY, firstname: 'ADAEZE', lastname: 'okonkwo', idNumber: '123 4567 8901' });
    expect(res.statusCode).toBe(200);
    const { status, data } = res.json();
    expect(status).toBe('success');
    expect(data).not.toHaveProperty('reference');
    expect(data).toMatchObject({
      id: created.json().data.id,
      street: '12 Admiralty Way',
      city: 'Lekki',
      lga: 'Eti-Osa',
      state: 'Lagos',
      country: 'Nigeria',
      status: VERIFIED,
      completedAt: completedAt.toISOString(),
      lattitude: '6.55',
      photos: [],
      neighbor: { name: '', comment: '', phone: '' },
    });
    expect(data.applicant).toEqual({
      firstname: 'Adaeze', lastname: 'Okonkwo', middlename: '', phone: '', idType: 'NIN', idNumber: '12345678901',
      gender: '', birthdate: '', photo: '',
    });
  });

  it('answers the most recent verified address when there are several', async () => {
    const idNumber = '22222222222';
    const applicant = { ...ADDRESS_BODY.applicant, idNumber };
    await verify(caller.testSecret, { ...ADDRESS_BODY, street: 'Old Street 1', applicant });
    const newest = await verify(caller.testSecret, { ...ADDRESS_BODY, street: 'New Street 2', applicant });
    await verify(caller.testSecret, { ...ADDRESS_BODY, street: 'Failed Street 3', applicant }, 'failed');
    const res = await http.post(MARKET, caller.testSecret, { ...QUERY, idNumber });
    expect(res.json().data).toMatchObject({ id: newest.id, street: 'New Street 2' });
  });

  it('answers 404 style A "address not found" for an unknown identity, other names, a failed or open verification', async () => {
    const idNumber = '33333333333';
    const applicant = { ...ADDRESS_BODY.applicant, idNumber };
    await verify(caller.testSecret, { ...ADDRESS_BODY, applicant }, 'failed');
    await http.post(BASE, caller.testSecret, { ...ADDRESS_BODY, applicant });
    for (const query of [
      { ...QUERY, idNumber: '99999999999' },
      { ...QUERY, idNumber },
      { ...QUERY, firstname: 'Ngozi' },
      { ...QUERY, lastname: 'Adebayo' },
      { ...QUERY, idType: 'FRSC', idNumber: 'ABC12345678' },
    ]) {
      const error = expectStyleA(await http.post(MARKET, caller.testSecret, query), 404, 'NOT_FOUND_ERROR');
      expect(error.message).toMatch(/^Address not found/);
    }
  });

  it('only looks back maxAddressAge months', async () => {
    const idNumber = '44444444444';
    const old = await verify(caller.testSecret, { ...ADDRESS_BODY, applicant: { ...ADDRESS_BODY.applicant, idNumber } });
    const eightMonthsAgo = new Date();
    eightMonthsAgo.setUTCMonth(eightMonthsAgo.getUTCMonth() - 8);
    await t.database.db.updateTable('address_verifications').set({ completed_at: eightMonthsAgo }).where('id', '=', old.id).execute();
    expectStyleA(await http.post(MARKET, caller.testSecret, { ...QUERY, idNumber, maxAddressAge: '6M' }), 404, 'NOT_FOUND_ERROR');
    const found = await http.post(MARKET, caller.testSecret, { ...QUERY, idNumber, maxAddressAge: '9M' });
    expect(found.json().data.id).toBe(old.id);
  });

  it('never crosses modes', async () => {
    const idNumber = '55555555555';
    await verify(caller.testSecret, { ...ADDRESS_BODY, applicant: { ...ADDRESS_BODY.applicant, idNumber } });
    expectStyleA(await http.post(MARKET, caller.liveSecret, { ...QUERY, idNumber }), 404, 'NOT_FOUND_ERROR');
  });

  it("in test mode finds the caller's own organization's addresses only (test/security/sandbox-address-isolation.test.ts)", async () => {
    const idNumber = '56565656565';
    await verify(owner.testSecret, { ...ADDRESS_BODY, applicant: { ...ADDRESS_BODY.applicant, idNumber } });
    expectStyleA(await http.post(MARKET, caller.testSecret, { ...QUERY, idNumber }), 404, 'NOT_FOUND_ERROR');
    expect((await http.post(MARKET, owner.testSecret, { ...QUERY, idNumber })).statusCode).toBe(200);
  });

  it('validates maxAddressAge, idType and idNumber (400 style A)', async () => {
    for (const [query, pattern] of [
      [{ ...QUERY, maxAddressAge: '6' }, /maxAddressAge/],
      [{ ...QUERY, maxAddressAge: '6 months' }, /maxAddressAge/],
      [{ ...QUERY, maxAddressAge: '1000M' }, /maxAddressAge/],
      [{ ...QUERY, maxAddressAge: '0M' }, /maxAddressAge/],
      [{ ...QUERY, idType: 'BVN' }, /idType/],
      [{ ...QUERY, idNumber: '123' }, /idNumber must be an 11-digit NIN/],
      [{ ...QUERY, firstname: ' ' }, /firstname and lastname are required/],
      [{ maxAddressAge: '6M' }, /firstname is required/],
    ] as const) {
      const error = expectStyleA(await http.post(MARKET, caller.testSecret, query), 400, 'VALIDATION_ERROR');
      expect(error.message, JSON.stringify(query)).toMatch(pattern);
    }
  });

  it('charges a live lookup when found, not when not found, and answers 402 when short', async () => {
    const idNumber = '66666666666';
    const liveBody = { ...ADDRESS_BODY, applicant: { ...ADDRESS_BODY.applicant, idNumber } };
    const created = (await http.post(BASE, owner.liveSecret, liveBody)).json().data;
    // Live verifications complete through a field agent; the row is completed directly here.
    await t.database.db.updateTable('address_verifications').set({ status: 'verified', completed_at: new Date() }).where('id', '=', created.id).execute();
    const before = await balanceOf(t.database.db, caller.id);
    const found = await http.post(MARKET, caller.liveSecret, { ...QUERY, idNumber });
    expect(found.statusCode).toBe(200);
    const price = ADDRESS_BILLABLES.address_marketplace.defaultPrice;
    expect(await balanceOf(t.database.db, caller.id)).toBe(before - price);
    expectStyleA(await http.post(MARKET, caller.liveSecret, { ...QUERY, idNumber: '77777777777' }), 404, 'NOT_FOUND_ERROR');
    expect(await balanceOf(t.database.db, caller.id)).toBe(before - price);
    const poor = await t.org({ riskLevel: 'LOW', fund: price - 1 });
    expectStyleA(await http.post(MARKET, poor.liveSecret, { ...QUERY, idNumber }), 402, 'PAYMENT_REQUIRED');
    expect(await balanceOf(t.database.db, poor.id)).toBe(price - 1);
  });
});
