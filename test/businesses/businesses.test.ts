import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setWebhookEndpoint } from '../../src/webhooks/endpoints.js';
import { buildTestContext, NOWHERE_WEBHOOK_URL, type TestContext } from '../helpers/app.js';
import { BUSINESS_BODY, CANCELLED, client, deliveriesOf, expectStyleA, IN_PROGRESS, ISO, VERIFIED } from '../agents/fixtures.js';

const BASE = '/v1/verifications/businesses';
const ALIAS = '/v1/verifications/business';
const BUSINESS_KEYS = [
  'id', 'reference', 'applicant', 'business', 'canContactPoc', 'businessNameFound', 'businessArea', 'businessPhotos', 'photos',
  'createdAt', 'completedAt', 'lattitude', 'longitude', 'neighbor', 'status', 'city', 'street', 'landmark', 'lga', 'state',
  'country', 'addressSource', 'flaggedForReview', 'reviewReason',
].sort();

/** Events of a scope without an endpoint are recorded without their bodies: tests reading bodies set one. */
async function withEndpoint(t: TestContext, orgId: string) {
  await setWebhookEndpoint(t.database.db, { orgId, mode: 'test' }, { url: 'http://127.0.0.1:9/hooks' }, { allowPrivateUrls: true });
}

describe('business verifications', () => {
  let t: TestContext;
  let http: ReturnType<typeof client>;
  let secret: string;

  beforeAll(async () => {
    t = await buildTestContext({ webhookUrl: NOWHERE_WEBHOOK_URL });
    http = client(t.app);
    secret = (await t.org({ riskLevel: 'NONE' })).testSecret;
  });
  afterAll(() => t.close());

  describe('create', () => {
    it('answers 200 (spec) with the record, In Progress, and the visit fields empty', async () => {
      const res = await http.post(BASE, secret, { ...BUSINESS_BODY, rcNumber: 'rc 1284395' });
      expect(res.statusCode).toBe(200);
      const { status, data } = res.json();
      expect(status).toBe('success');
      expect(Object.keys(data).sort()).toEqual(BUSINESS_KEYS);
      expect(data).toMatchObject({
        reference: expect.stringMatching(/^biz_[0-9a-f]{20}$/),
        business: { name: 'Mama Put Ventures', type: 'Informal', rcNumber: 'RC1284395' },
        canContactPoc: true,
        businessNameFound: '',
        businessArea: '',
        businessPhotos: [],
        photos: [],
        status: IN_PROGRESS,
        completedAt: '',
        lattitude: '',
        lga: 'Lagos Island',
        state: 'Lagos',
        addressSource: 'applicant',
      });
      expect(data.business).not.toHaveProperty('isBusinessKnown');
      expect(data).not.toHaveProperty('isCorrectBusinessName');
      expect(data.createdAt).toMatch(ISO);
      expect(data.applicant).toEqual({
        firstname: 'Chidi', lastname: 'Eze', middlename: '', phone: '+2348031234567', email: 'chidi@example.com',
        idType: '', idNumber: '', gender: '', birthdate: '', photo: '',
      });
    });

    it('accepts the sample request: businessName, businessType, canContactPoc as a string', async () => {
      const { name: _n, type: _t, canContactPoc: _c, ...rest } = BUSINESS_BODY;
      for (const [raw, expected] of [['true', true], ['false', false]] as const) {
        const res = await http.post(BASE, secret, { ...rest, businessName: 'Sample Ltd', businessType: 'Formal', canContactPoc: raw });
        expect(res.statusCode).toBe(200);
        expect(res.json().data).toMatchObject({ business: { name: 'Sample Ltd', type: 'Formal' }, canContactPoc: expected });
      }
      const minimal = await http.post(BASE, secret, { ...rest, businessName: 'Only Name' });
      expect(minimal.json().data).toMatchObject({ business: { name: 'Only Name', type: '', rcNumber: '' }, canContactPoc: false });
    });

    it('accepts every business idType, spelled as the spec spells it', async () => {
      for (const [idType, idNumber, stored] of [
        ['BVN', '22345678901', '22345678901'],
        ['NIN', '12345678901', '12345678901'],
        ['KYC PHONE', '08031234567', '+2348031234567'],
        ['DRIVERS LICENCE', 'kja-83927aa02', 'KJA83927AA02'],
      ]) {
        const res = await http.post(BASE, secret, { ...BUSINESS_BODY, applicant: { ...BUSINESS_BODY.applicant, idType, idNumber } });
        expect(res.statusCode, idType).toBe(200);
        expect(res.json().data.applicant).toMatchObject({ idType, idNumber: stored });
      }
    });

    it('reads idType in any letter case and spacing (clients send the identity endpoints\' "bvn"), and keeps the documented form', async () => {
      for (const [idType, idNumber, stored] of [
        ['bvn', '22345678901', 'BVN'],
        ['Nin', '12345678901', 'NIN'],
        ['kyc  phone', '08031234567', 'KYC PHONE'],
        [' Drivers Licence ', 'KJA83927AA02', 'DRIVERS LICENCE'],
      ]) {
        const res = await http.post(BASE, secret, { ...BUSINESS_BODY, applicant: { ...BUSINESS_BODY.applicant, idType, idNumber } });
        expect(res.statusCode, `${idType}: ${res.body}`).toBe(200);
        expect(res.json().data.applicant.idType).toBe(stored);
      }
    });

    it('answers 400 style A naming the bad fields', async () => {
      const { name: _n, ...noName } = BUSINESS_BODY;
      const cases: [object, RegExp][] = [
        [noName, /name \(or businessName\) is required/],
        [{ ...BUSINESS_BODY, type: 'formal' }, /type must be one of Formal, Informal/],
        [{ ...BUSINESS_BODY, type: 'Corporate' }, /type must be one of Formal, Informal/],
        [{ ...BUSINESS_BODY, canContactPoc: 'yes' }, /canContactPoc/],
        [{ ...BUSINESS_BODY, rcNumber: 'not a number' }, /rcNumber/],
        [{ ...BUSINESS_BODY, lga: 'Ikeja', state: 'Kano' }, /lga "Ikeja" is not a local government area of Kano/],
        [{ ...BUSINESS_BODY, applicant: { idType: 'KYC', idNumber: '08031234567' } }, /idType must be one of BVN, NIN, KYC PHONE, DRIVERS LICENCE/],
        [{ ...BUSINESS_BODY, applicant: { idType: 'DRIVERS_LICENCE', idNumber: 'KJA83927AA02' } }, /idType must be one of/],
        [{ ...BUSINESS_BODY, applicant: { email: 'x@' } }, /applicant.email must be an email address/],
        [{ ...BUSINESS_BODY, applicant: { dob: '14/03/1990' } }, /applicant.dob must be a valid date written DD-MM-YYYY/],
        [{ ...BUSINESS_BODY, street: undefined }, /street is required/],
      ];
      for (const [body, pattern] of cases) {
        const error = expectStyleA(await http.post(BASE, secret, body), 400, 'VALIDATION_ERROR');
        expect(error.message, JSON.stringify(body)).toMatch(pattern);
      }
    });

    it('requires the contact fields of the risk level (no minimum level for businesses)', async () => {
      const { applicant: _a, ...noApplicant } = BUSINESS_BODY;
      expect((await http.post(BASE, secret, noApplicant)).statusCode).toBe(200);
      const low = await t.org({ riskLevel: 'LOW' });
      expect(expectStyleA(await http.post(BASE, low.testSecret, noApplicant), 400, 'VALIDATION_ERROR').message).toMatch(/applicant.lastname is required for this account's risk level \(LOW\)/);
      const medium = await t.org({ riskLevel: 'MEDIUM' });
      expect(expectStyleA(await http.post(BASE, medium.testSecret, { ...noApplicant, applicant: { lastname: 'Eze' } }), 400, 'VALIDATION_ERROR').message).toMatch(/applicant.firstname is required/);
      const high = await t.org({ riskLevel: 'HIGH' });
      expect(expectStyleA(await http.post(BASE, high.testSecret, BUSINESS_BODY), 400, 'VALIDATION_ERROR').message).toMatch(/applicant.dob is required/);
      const withDob = { ...BUSINESS_BODY, applicant: { ...BUSINESS_BODY.applicant, dob: '01-01-1980' } };
      expect((await http.post(BASE, high.testSecret, withDob)).json().data.applicant.birthdate).toBe('01-01-1980');
    });

    it('answers 409 for a reused reference, creating nothing', async () => {
      const org = await t.org();
      expect((await http.post(BASE, org.testSecret, { ...BUSINESS_BODY, reference: 'biz-1' })).statusCode).toBe(200);
      expectStyleA(await http.post(BASE, org.testSecret, { ...BUSINESS_BODY, reference: 'biz-1' }), 409, 'CONFLICT');
      expect((await http.get(BASE, org.testSecret)).json()._pagination.total).toBe(1);
    });
  });

  describe('fetch, list and cancel, on the documented and the alias paths', () => {
    it('fetches by id on both paths', async () => {
      const created = (await http.post(BASE, secret, BUSINESS_BODY)).json().data;
      for (const base of [BASE, ALIAS]) {
        const res = await http.get(`${base}/${created.id}`, secret);
        expect(res.statusCode).toBe(200);
        expect(res.json()).toEqual({ status: 'success', data: created });
      }
      expectStyleA(await http.get(`${ALIAS}/999999999`, secret), 404, 'NOT_FOUND_ERROR');
      expectStyleA(await http.get(`${ALIAS}/nope`, secret), 400, 'VALIDATION_ERROR');
    });

    it('creates and lists on the alias path too', async () => {
      const org = await t.org();
      expect((await http.post(ALIAS, org.testSecret, BUSINESS_BODY)).statusCode).toBe(200);
      expect((await http.post(BASE, org.testSecret, BUSINESS_BODY)).statusCode).toBe(200);
      for (const base of [BASE, ALIAS]) {
        const list = (await http.get(`${base}?limit=1`, org.testSecret)).json();
        expect(list._pagination).toEqual({ limit: 1, offset: 0, total: 2 });
        expect(list.data).toHaveLength(1);
      }
      expectStyleA(await http.get(`${BASE}?limit=500`, org.testSecret), 400, 'VALIDATION_ERROR');
    });

    it('lists newest first with the exact total', async () => {
      const org = await t.org();
      const ids: number[] = [];
      for (let i = 0; i < 25; i++) ids.push((await http.post(BASE, org.testSecret, BUSINESS_BODY)).json().data.id);
      const first = (await http.get(BASE, org.testSecret)).json();
      expect(first._pagination).toEqual({ limit: 20, offset: 0, total: 25 });
      expect(first.data.map((r: { id: number }) => r.id)).toEqual(ids.slice(5).reverse());
      const second = (await http.get(`${BASE}?offset=20`, org.testSecret)).json();
      expect(second.data.map((r: { id: number }) => r.id)).toEqual(ids.slice(0, 5).reverse());
      expect((await http.get(`${BASE}?offset=25`, org.testSecret)).json().data).toEqual([]);
    });

    it('cancels on either path, once; sends business.cancelled', async () => {
      const org = await t.org();
      await withEndpoint(t, org.id);
      const a = (await http.post(BASE, org.testSecret, BUSINESS_BODY)).json().data;
      const b = (await http.post(BASE, org.testSecret, BUSINESS_BODY)).json().data;
      expect((await http.del(`${BASE}/${a.id}`, org.testSecret)).json()).toEqual({ status: 'success', data: 'ok' });
      expect((await http.del(`${ALIAS}/${b.id}`, org.testSecret)).json()).toEqual({ status: 'success', data: 'ok' });
      expectStyleA(await http.del(`${ALIAS}/${a.id}`, org.testSecret), 409, 'CONFLICT');
      expectStyleA(await http.del(`${BASE}/${b.id}`, org.testSecret), 409, 'CONFLICT');
      const fetched = (await http.get(`${BASE}/${a.id}`, org.testSecret)).json().data;
      expect(fetched.status).toEqual(CANCELLED);
      const deliveries = await deliveriesOf(t.database.db, org.id);
      expect(deliveries.map((d) => d.type)).toEqual(['business.cancelled', 'business.cancelled']);
      expect(deliveries[0]!.payload.data).toEqual(fetched);
    });
  });

  describe('authentication and isolation', () => {
    it('answers 401 ACCESS_DENIED style A on every route and alias', async () => {
      for (const [method, url] of [
        ['POST', BASE], ['GET', BASE], ['GET', `${BASE}/1`], ['DELETE', `${BASE}/1`],
        ['POST', ALIAS], ['GET', ALIAS], ['GET', `${ALIAS}/1`], ['DELETE', `${ALIAS}/1`],
        ['POST', '/v1/test-helpers/businesses/1/complete'],
      ] as const) {
        expectStyleA(await t.app.inject({ method, url, payload: method === 'POST' ? {} : undefined }), 401, 'ACCESS_DENIED');
      }
    });

    it('hides other organizations and the other mode (404)', async () => {
      const org = await t.org({ fund: 1_000_000 });
      const live = (await http.post(BASE, org.liveSecret, BUSINESS_BODY)).json().data;
      const test = (await http.post(BASE, org.testSecret, BUSINESS_BODY)).json().data;
      const other = await t.org();
      for (const [id, key] of [[live.id, org.testSecret], [test.id, org.liveSecret], [test.id, other.testSecret], [live.id, other.liveSecret]]) {
        expectStyleA(await http.get(`${BASE}/${id}`, key), 404, 'NOT_FOUND_ERROR');
        expectStyleA(await http.get(`${ALIAS}/${id}`, key), 404, 'NOT_FOUND_ERROR');
        expectStyleA(await http.del(`${BASE}/${id}`, key), 404, 'NOT_FOUND_ERROR');
      }
      expect((await http.get(BASE, org.testSecret)).json().data.map((r: { id: number }) => r.id)).toEqual([test.id]);
      expect((await http.get(BASE, org.liveSecret)).json().data.map((r: { id: number }) => r.id)).toEqual([live.id]);
    });
  });

  it('documents every field-verification route in the OpenAPI document, aliases hidden', async () => {
    const spec = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const paths = Object.keys(spec.paths);
    for (const path of [
      '/v1/verifications/addresses', '/v1/verifications/addresses/{id}', '/v1/verifications/addresses/marketplace',
      '/v1/verifications/businesses', '/v1/verifications/businesses/{id}',
      '/v1/test-helpers/addresses/{id}/complete', '/v1/test-helpers/businesses/{id}/complete',
      '/v1/agent/me', '/v1/agent/tasks', '/v1/agent/tasks/{kind}/{id}/start', '/v1/agent/tasks/{kind}/{id}/report', '/v1/files/{id}',
    ]) {
      expect(paths, path).toContain(path);
    }
    expect(paths).not.toContain('/v1/verifications/business/{id}');
    const create = spec.paths['/v1/verifications/businesses'].post;
    expect(Object.keys(create.responses).sort()).toEqual(['200', '400', '401', '402', '409', '500', '503']);
    expect(create.tags).toEqual(['Business verification']);
  });

  describe('test helper', () => {
    it('completes as an agent would: the business findings, the webhook', async () => {
      const org = await t.org();
      await withEndpoint(t, org.id);
      const created = (await http.post(BASE, org.testSecret, BUSINESS_BODY)).json().data;
      const res = await http.post(`/v1/test-helpers/businesses/${created.id}/complete`, org.testSecret, { outcome: 'verified' });
      expect(res.statusCode).toBe(200);
      const fetched = (await http.get(`${BASE}/${created.id}`, org.testSecret)).json().data;
      expect(res.json().data).toEqual(fetched);
      expect(fetched).toMatchObject({
        status: VERIFIED,
        business: { name: 'Mama Put Ventures', isBusinessKnown: true, isBusinessOwnerKnown: true, ownerVisitsFrequently: true },
        isCorrectBusinessName: true,
        businessNameFound: 'Mama Put Ventures',
        businessArea: 'commercial',
      });
      expect(fetched.completedAt).toMatch(ISO);
      const [delivery] = await deliveriesOf(t.database.db, org.id);
      expect(delivery).toMatchObject({ type: 'business.completed', payload: { type: 'business.completed', data: fetched } });
    });

    it('completes as not verified with a reason; refuses a live secret (404)', async () => {
      const org = await t.org({ fund: 1_000_000 });
      const created = (await http.post(BASE, org.testSecret, BUSINESS_BODY)).json().data;
      const failed = await http.post(`/v1/test-helpers/businesses/${created.id}/complete`, org.testSecret, { outcome: 'failed', reason: 'business closed' });
      expect(failed.json().data).toMatchObject({ status: { status: 'Not Verified', subStatus: 'business closed', state: 'complete' }, business: { isBusinessKnown: false } });
      expectStyleA(await http.post(`/v1/test-helpers/businesses/${created.id}/complete`, org.testSecret, { outcome: 'verified' }), 409, 'CONFLICT');
      const live = (await http.post(BASE, org.liveSecret, BUSINESS_BODY)).json().data;
      expectStyleA(await http.post(`/v1/test-helpers/businesses/${live.id}/complete`, org.liveSecret, { outcome: 'verified' }), 404, 'NOT_FOUND_ERROR');
      expectStyleA(await http.post(`/v1/test-helpers/businesses/${created.id}/complete`, org.testSecret, { outcome: 'failed', reason: 'address not found' }), 400, 'VALIDATION_ERROR');
    });
  });
});
