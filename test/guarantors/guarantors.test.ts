import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GUARANTOR_BILLABLES } from '../../src/guarantors/service.js';
import { setPrice } from '../../src/platform/billing.js';
import { buildTestContext, NOWHERE_WEBHOOK_URL, type TestContext } from '../helpers/app.js';
import {
  balanceOf,
  CANCELLED,
  client,
  deliveriesOf,
  expectStyleA,
  GUARANTOR_BODY,
  GUARANTOR_KEYS,
  IN_PROGRESS,
  messagesOf,
  notVerified,
  TIMESTAMP,
  VERIFIED,
} from '../respondents/fixtures.js';

const BASE = '/v1/verifications/guarantors';
const HELPER = '/v1/test-helpers/guarantors';
const PRICE = GUARANTOR_BILLABLES.guarantor.defaultPrice;

describe('guarantor verifications', () => {
  let t: TestContext;
  let http: ReturnType<typeof client>;
  let secret: string;

  beforeAll(async () => {
    t = await buildTestContext({ webhookUrl: NOWHERE_WEBHOOK_URL });
    http = client(t.app);
    secret = (await t.org({ riskLevel: 'LOW' })).testSecret;
  });
  afterAll(() => t.close());

  describe('create', () => {
    it('answers 201 with the guarantor record, IN_PROGRESS x3, and queues the guarantor message', async () => {
      const res = await http.post(BASE, secret, GUARANTOR_BODY);
      expect(res.statusCode).toBe(201);
      const { status, data } = res.json();
      expect(status).toBe('success');
      expect(Object.keys(data).sort()).toEqual(GUARANTOR_KEYS);
      expect(data).toMatchObject({
        id: expect.any(Number),
        reference: expect.stringMatching(/^gua_[A-Za-z0-9_-]{12}$/),
        firstname: 'Babatunde',
        lastname: 'Adeyemi',
        phone: '08051234567',
        email: 'babatunde@example.com',
        acceptableIdType: ['NIN', 'BVN', 'FRSC'],
        address: {
          formattedAddress: '27 Allen Avenue, Ikeja, Lagos, Nigeria',
          state: 'Lagos',
          lga: 'Ikeja',
          street: '27 Allen Avenue',
          city: '',
          country: 'Nigeria',
        },
        verifyAddress: false,
        addressVerificationId: null,
        status: IN_PROGRESS,
        completedAt: '',
      });
      expect(data.createdAt).toMatch(TIMESTAMP);
      expect(data.applicant).toEqual({
        idType: 'BVN', idNumber: '22345678901', firstname: 'Adaeze', middlename: '', lastname: 'Okonkwo',
        phone: '08031234567', gender: '', birthdate: '14-03-1990', photo: '',
      });
      const [message] = await messagesOf(t.database.db, 'guarantor_request', data.id);
      expect(message).toMatchObject({ recipient: 'babatunde@example.com', sent_at: null });
      expect(message!.link).toMatch(/^http:\/\/127\.0\.0\.1:8080\/respond\/[A-Za-z0-9_-]{43}$/);
      expect(message!.text).toContain(message!.link);
      expect(message!.subject).toContain('Adaeze Okonkwo');
    });

    it('accepts the sample request: the /guarantor path, acceptableIdTypes and a string boolean', async () => {
      const { acceptableIdType: _, ...rest } = GUARANTOR_BODY;
      const res = await http.post('/v1/verifications/guarantor', secret, { ...rest, acceptableIdTypes: ['BVN', 'NIN'], verifyAddress: 'false' });
      expect(res.statusCode).toBe(201);
      expect(res.json().data).toMatchObject({ acceptableIdType: ['BVN', 'NIN'], verifyAddress: false });
      const one = await http.post(BASE, secret, { ...rest, acceptableIdType: 'NIN,VIN' });
      expect(one.json().data.acceptableIdType).toEqual(['NIN', 'VIN']);
    });

    it('needs only the guarantor names and email and the risk level applicant fields', async () => {
      const res = await http.post(BASE, secret, { firstname: 'Ada', lastname: 'Obi', email: 'ada@example.com', applicant: { lastname: 'Eze' } });
      expect(res.statusCode).toBe(201);
      expect(res.json().data).toMatchObject({ acceptableIdType: ['BVN', 'NIN', 'FRSC'], phone: '', address: { formattedAddress: '', state: '', lga: '' } });
    });

    it('reads states and LGAs loosely and answers the canonical names', async () => {
      const res = await http.post(BASE, secret, { ...GUARANTOR_BODY, state: 'abuja', lga: 'AMAC', city: 'Garki' });
      expect(res.statusCode).toBe(201);
      expect(res.json().data.address).toMatchObject({ state: 'FCT', lga: 'Abuja Municipal', city: 'Garki' });
    });

    it('answers 400 style A naming every bad field', async () => {
      const cases: [object, RegExp[]][] = [
        [{}, [/firstname is required/]],
        [{ ...GUARANTOR_BODY, email: 'not-an-email', phone: '12345' }, [/email must be a valid email address/, /phone must be a valid Nigerian phone number/]],
        [{ ...GUARANTOR_BODY, email: 'a@b.com\r\nBcc: x@y.com' }, [/email must be a valid email address/]],
        [{ ...GUARANTOR_BODY, firstname: '   ' }, [/firstname must not be blank/]],
        [{ ...GUARANTOR_BODY, state: 'Atlantis' }, [/state "Atlantis" is not a Nigerian state/]],
        [{ ...GUARANTOR_BODY, lga: 'Kano Municipal' }, [/lga "Kano Municipal" is not a local government area of Lagos/]],
        [{ ...GUARANTOR_BODY, state: undefined }, [/state is required with lga/]],
        [{ ...GUARANTOR_BODY, acceptableIdType: ['Passport'] }, [/acceptableIdType "Passport" is not one of BVN, NIN, Drivers license/]],
        [{ ...GUARANTOR_BODY, acceptableIdType: ['PN'] }, [/PN \(passport\) cannot be checked/]],
        [{ ...GUARANTOR_BODY, acceptableIdType: [] }, [/acceptableIdType must name at least one ID type/]],
        [{ ...GUARANTOR_BODY, verifyAddress: 'yes' }, [/verifyAddress/]],
        [{ ...GUARANTOR_BODY, verifyAddress: true, street: undefined, lga: undefined, state: undefined }, [/street is required when verifyAddress is true/, /state is required when verifyAddress is true/, /lga is required when verifyAddress is true/]],
        [{ ...GUARANTOR_BODY, applicant: { ...GUARANTOR_BODY.applicant, dob: '1990-03-14' } }, [/applicant.dob must be a past date written DD-MM-YYYY/]],
        [{ ...GUARANTOR_BODY, applicant: { ...GUARANTOR_BODY.applicant, dob: '31-02-1990' } }, [/applicant.dob/]],
        [{ ...GUARANTOR_BODY, applicant: { ...GUARANTOR_BODY.applicant, idType: 'PASSPORT' } }, [/applicant.idType must be one of BVN, NIN, KYC/]],
        [{ ...GUARANTOR_BODY, applicant: { ...GUARANTOR_BODY.applicant, idNumber: '123' } }, [/applicant.idNumber must be an BVN of 11 digits/]],
        [{ ...GUARANTOR_BODY, applicant: { lastname: 'Okonkwo', idNumber: '22345678901' } }, [/applicant.idType and applicant.idNumber go together/]],
        [{ ...GUARANTOR_BODY, applicant: { lastname: 'Okonkwo', idType: 'KYC', idNumber: '1234' } }, [/applicant.idNumber must be a Nigerian phone number/]],
        [{ ...GUARANTOR_BODY, reference: 'has spaces' }, [/reference must be 1 to 100 printable characters/]],
        [{ ...GUARANTOR_BODY, firstname: 'x'.repeat(101), street: 'y'.repeat(301) }, [/firstname must be at most 100 characters/, /street must be at most 300 characters/]],
        // Names are written into the guarantor's mail: one line each.
        [{ ...GUARANTOR_BODY, firstname: 'Kemi,\n\nYour BVN check failed. Re-verify at https://bvn-check.example', landmark: 'Gate\nB' }, [/firstname must be on one line \(no line breaks\)/, /landmark must be on one line/]],
      ];
      for (const [body, patterns] of cases) {
        const res = await http.post(BASE, secret, body);
        const error = expectStyleA(res, 400, 'VALIDATION_ERROR');
        for (const pattern of patterns) expect(error.message, JSON.stringify(body)).toMatch(pattern);
      }
    });

    it('requires the applicant fields of the risk level, and refuses an account at NONE with 403', async () => {
      const none = await t.org({ riskLevel: 'NONE' });
      const refused = expectStyleA(await http.post(BASE, none.testSecret, GUARANTOR_BODY), 403, 'FORBIDDEN');
      expect(refused.message).toMatch(/risk level of LOW or higher; this account is at NONE/);
      const high = await t.org({ riskLevel: 'HIGH' });
      const res = await http.post(BASE, high.testSecret, { ...GUARANTOR_BODY, applicant: { lastname: 'Okonkwo' } });
      const error = expectStyleA(res, 400, 'VALIDATION_ERROR');
      expect(error.message).toMatch(/applicant.firstname is required for this account's risk level \(HIGH\)/);
      expect(error.message).toMatch(/applicant.dob is required for this account's risk level \(HIGH\)/);
      const medium = await t.org({ riskLevel: 'MEDIUM' });
      expect(expectStyleA(await http.post(BASE, medium.testSecret, { ...GUARANTOR_BODY, applicant: {} }), 400, 'VALIDATION_ERROR').message).toMatch(
        /applicant.lastname is required.*applicant.firstname is required/,
      );
      expect((await http.post(BASE, high.testSecret, GUARANTOR_BODY)).statusCode).toBe(201);
    });

    it('answers 409 to a second create with the same reference, and creates nothing', async () => {
      const org = await t.org({ riskLevel: 'LOW' });
      expect((await http.post(BASE, org.testSecret, { ...GUARANTOR_BODY, reference: 'dup-1' })).statusCode).toBe(201);
      const again = expectStyleA(await http.post(BASE, org.testSecret, { ...GUARANTOR_BODY, reference: 'dup-1' }), 409, 'CONFLICT');
      expect(again.message).toMatch(/reference "dup-1" already exists/);
      const list = await http.get(BASE, org.testSecret);
      expect(list.json()._pagination.total).toBe(1);
      // The same reference in the other mode is another record.
      expect((await http.post(BASE, org.liveSecret, { ...GUARANTOR_BODY, reference: 'dup-1' })).statusCode).toBe(201);
    });

    it('answers 401 style A without a valid secret', async () => {
      for (const headers of [{}, { authorization: 'Bearer sk_test_nope' }, { authorization: 'Basic abc' }]) {
        const res = await t.app.inject({ method: 'POST', url: BASE, headers, payload: GUARANTOR_BODY });
        expectStyleA(res, 401, 'ACCESS_DENIED');
      }
      expectStyleA(await http.get(`${BASE}/1`, undefined), 401, 'ACCESS_DENIED');
      expectStyleA(await http.get(BASE, undefined), 401, 'ACCESS_DENIED');
      expectStyleA(await http.del(`${BASE}/1`, undefined), 401, 'ACCESS_DENIED');
      expectStyleA(await http.post(`${HELPER}/1/complete`, undefined, { outcome: 'verified' }), 401, 'ACCESS_DENIED');
    });
  });

  it('documents the routes in /openapi.json, the sample-request alias and the respondent pages hidden', async () => {
    const spec = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const paths = Object.keys(spec.paths);
    for (const path of [
      '/v1/verifications/guarantors',
      '/v1/verifications/guarantors/{id}',
      '/v1/test-helpers/guarantors/{id}/complete',
      '/v1/verifications/employments',
      '/v1/verifications/employments/{id}',
      '/v1/test-helpers/employments/{id}/complete',
    ]) {
      expect(paths, path).toContain(path);
    }
    expect(paths.filter((path) => path.startsWith('/v1/verifications/guarantor/') || path === '/v1/verifications/guarantor')).toEqual([]);
    expect(paths.filter((path) => path.startsWith('/respond'))).toEqual([]);
    expect(Object.keys(spec.paths['/v1/verifications/guarantors'].post.responses).sort()).toEqual(['201', '400', '401', '402', '403', '409', '429', '500']);
  });

  describe('live billing', () => {
    it('charges a live create the guarantor price, answers 402 when short, and charges nothing for test mode', async () => {
      const org = await t.org({ riskLevel: 'LOW', fund: PRICE + 500 });
      expect((await http.post(BASE, org.testSecret, GUARANTOR_BODY)).statusCode).toBe(201);
      expect(await balanceOf(t.database.db, org.id)).toBe(PRICE + 500);
      expect((await http.post(BASE, org.liveSecret, GUARANTOR_BODY)).statusCode).toBe(201);
      expect(await balanceOf(t.database.db, org.id)).toBe(500);
      const short = expectStyleA(await http.post(BASE, org.liveSecret, GUARANTOR_BODY), 402, 'PAYMENT_REQUIRED');
      expect(short.message).toMatch(/Insufficient balance/);
      expect(await balanceOf(t.database.db, org.id)).toBe(500);
      const list = await http.get(BASE, org.liveSecret);
      expect(list.json()._pagination.total).toBe(1);
      expect(await messagesOf(t.database.db, 'guarantor_request', list.json().data[0].id)).toHaveLength(1);
    });

    it('never overdraws a wallet under concurrent creates', async () => {
      const org = await t.org({ riskLevel: 'LOW', fund: 3 * PRICE });
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => http.post(BASE, org.liveSecret, { ...GUARANTOR_BODY, reference: `race-${i}` })));
      expect(results.map((res) => res.statusCode).sort()).toEqual([201, 201, 201, 402, 402, 402, 402, 402]);
      expect(await balanceOf(t.database.db, org.id)).toBe(0);
      expect((await http.get(BASE, org.liveSecret)).json()._pagination.total).toBe(3);
    });

    it('uses the price the operator set', async () => {
      const org = await t.org({ riskLevel: 'LOW', fund: 100_000 });
      await setPrice(t.database.db, 'guarantor', 1_234);
      try {
        expect((await http.post(BASE, org.liveSecret, GUARANTOR_BODY)).statusCode).toBe(201);
        expect(await balanceOf(t.database.db, org.id)).toBe(100_000 - 1_234);
      } finally {
        await setPrice(t.database.db, 'guarantor', PRICE);
      }
    });

    it('refunds a cancellation before the guarantor answers, and not after', async () => {
      const org = await t.org({ riskLevel: 'LOW', fund: 2 * PRICE });
      const first = (await http.post(BASE, org.liveSecret, GUARANTOR_BODY)).json().data;
      expect(await balanceOf(t.database.db, org.id)).toBe(PRICE);
      expect((await http.del(`${BASE}/${first.id}`, org.liveSecret)).json()).toEqual({ status: 'success', data: 'ok' });
      expect(await balanceOf(t.database.db, org.id)).toBe(2 * PRICE);
      const ledger = await t.database.db.selectFrom('ledger_entries').select(['kind', 'amount']).where('org_id', '=', org.id).orderBy('id').execute();
      expect(ledger.map((row) => [row.kind, Number(row.amount)])).toEqual([['credit', 2 * PRICE], ['charge', -PRICE], ['refund', PRICE]]);
    });
  });

  describe('fetch, list, cancel', () => {
    it('fetches a record as created, and 404s an unknown, foreign or other-mode id', async () => {
      const org = await t.org({ riskLevel: 'LOW' });
      const created = (await http.post(BASE, org.testSecret, GUARANTOR_BODY)).json().data;
      const res = await http.get(`${BASE}/${created.id}`, org.testSecret);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ status: 'success', data: created });
      expect((await http.get(`/v1/verifications/guarantor/${created.id}`, org.testSecret)).json().data).toEqual(created);
      const other = await t.org({ riskLevel: 'LOW' });
      expectStyleA(await http.get(`${BASE}/${created.id}`, other.testSecret), 404, 'NOT_FOUND_ERROR');
      expectStyleA(await http.get(`${BASE}/${created.id}`, org.liveSecret), 404, 'NOT_FOUND_ERROR');
      expectStyleA(await http.get(`${BASE}/999999999`, org.testSecret), 404, 'NOT_FOUND_ERROR');
      expectStyleA(await http.get(`${BASE}/99999999999999999999`, org.testSecret), 404, 'NOT_FOUND_ERROR');
      expectStyleA(await http.get(`${BASE}/abc`, org.testSecret), 400, 'VALIDATION_ERROR');
      expectStyleA(await http.get(`${BASE}/-1`, org.testSecret), 400, 'VALIDATION_ERROR');
    });

    it('lists newest first with exact totals, paginates, and keeps organizations and modes apart', async () => {
      const org = await t.org({ riskLevel: 'LOW', fund: 10 * PRICE });
      const ids: number[] = [];
      for (let i = 0; i < 5; i++) ids.push((await http.post(BASE, org.testSecret, { ...GUARANTOR_BODY, reference: `page-${i}` })).json().data.id);
      await http.post(BASE, org.liveSecret, GUARANTOR_BODY);
      await http.post(BASE, (await t.org({ riskLevel: 'LOW' })).testSecret, GUARANTOR_BODY);

      const all = (await http.get(BASE, org.testSecret)).json();
      expect(all._pagination).toEqual({ limit: 20, offset: 0, total: 5 });
      expect(all.data.map((r: { id: number }) => r.id)).toEqual([...ids].reverse());
      const page = (await http.get(`${BASE}?limit=2&offset=1`, org.testSecret)).json();
      expect(page._pagination).toEqual({ limit: 2, offset: 1, total: 5 });
      expect(page.data.map((r: { reference: string }) => r.reference)).toEqual(['page-3', 'page-2']);
      const last = (await http.get(`${BASE}?limit=2&offset=4`, org.testSecret)).json();
      expect(last.data.map((r: { reference: string }) => r.reference)).toEqual(['page-0']);
      expect((await http.get(`${BASE}?offset=10`, org.testSecret)).json().data).toEqual([]);
      expect((await http.get(BASE, org.liveSecret)).json()._pagination.total).toBe(1);
      expect((await http.get('/v1/verifications/guarantor?limit=1', org.testSecret)).json().data).toHaveLength(1);
      for (const query of ['limit=0', 'limit=101', 'limit=abc', 'offset=-1', 'offset=1.5']) {
        expectStyleA(await http.get(`${BASE}?${query}`, org.testSecret), 400, 'VALIDATION_ERROR');
      }
    });

    it('cancels an in-progress verification once: 200 "ok", then 409; queues guarantor.cancelled', async () => {
      const org = await t.org({ riskLevel: 'LOW' });
      const created = (await http.post(BASE, org.testSecret, GUARANTOR_BODY)).json().data;
      expectStyleA(await http.del(`${BASE}/${created.id}`, org.liveSecret), 404, 'NOT_FOUND_ERROR');
      expectStyleA(await http.del(`${BASE}/${created.id}`, (await t.org()).testSecret), 404, 'NOT_FOUND_ERROR');
      const res = await http.del(`${BASE}/${created.id}`, org.testSecret);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ status: 'success', data: 'ok' });
      const fetched = (await http.get(`${BASE}/${created.id}`, org.testSecret)).json().data;
      expect(fetched.status).toEqual(CANCELLED);
      expect(fetched.completedAt).toMatch(TIMESTAMP);
      const again = expectStyleA(await http.del(`${BASE}/${created.id}`, org.testSecret), 409, 'CONFLICT');
      expect(again.message).toMatch(/already cancelled/);
      expectStyleA(await http.post(`${HELPER}/${created.id}/complete`, org.testSecret, { outcome: 'verified' }), 409, 'CONFLICT');
      const deliveries = await deliveriesOf(t.database.db, org.id);
      expect(deliveries.map((d) => d.type)).toEqual(['guarantor.cancelled']);
      expect(deliveries[0]!.payload.data).toEqual(fetched);
      expectStyleA(await http.del(`${BASE}/abc`, org.testSecret), 400, 'VALIDATION_ERROR');
      // The alias path cancels too.
      const other = (await http.post(BASE, org.testSecret, GUARANTOR_BODY)).json().data;
      expect((await http.del(`/v1/verifications/guarantor/${other.id}`, org.testSecret)).statusCode).toBe(200);
    });
  });

  describe('test helper', () => {
    it('completes as a guarantor accepting with a matching ID: VERIFIED, webhook with the record', async () => {
      const org = await t.org({ riskLevel: 'LOW' });
      const created = (await http.post(BASE, org.testSecret, GUARANTOR_BODY)).json().data;
      const res = await http.post(`${HELPER}/${created.id}/complete`, org.testSecret, { outcome: 'verified' });
      expect(res.statusCode).toBe(200);
      const record = res.json().data;
      expect(record.status).toEqual(VERIFIED);
      expect(record.completedAt).toMatch(TIMESTAMP);
      expect((await http.get(`${BASE}/${created.id}`, org.testSecret)).json().data).toEqual(record);
      const deliveries = await deliveriesOf(t.database.db, org.id);
      expect(deliveries).toHaveLength(1);
      expect(deliveries[0]).toMatchObject({ type: 'guarantor.completed', mode: 'test', payload: { type: 'guarantor.completed', data: record } });
      expectStyleA(await http.post(`${HELPER}/${created.id}/complete`, org.testSecret, { outcome: 'verified' }), 409, 'CONFLICT');
      expectStyleA(await http.del(`${BASE}/${created.id}`, org.testSecret), 409, 'CONFLICT');
    });

    it('completes as a guarantor declining: NOT_VERIFIED / GUARANTOR_DECLINED', async () => {
      const org = await t.org({ riskLevel: 'LOW' });
      const created = (await http.post(BASE, org.testSecret, GUARANTOR_BODY)).json().data;
      const res = await http.post(`${HELPER}/${created.id}/complete`, org.testSecret, { outcome: 'failed' });
      expect(res.json().data.status).toEqual(notVerified('GUARANTOR_DECLINED'));
      expect((await deliveriesOf(t.database.db, org.id)).map((d) => d.type)).toEqual(['guarantor.completed']);
    });

    it('answers 404 with a live secret, and 400 for a bad outcome', async () => {
      const org = await t.org({ riskLevel: 'LOW', fund: PRICE });
      const live = (await http.post(BASE, org.liveSecret, GUARANTOR_BODY)).json().data;
      expectStyleA(await http.post(`${HELPER}/${live.id}/complete`, org.liveSecret, { outcome: 'verified' }), 404, 'NOT_FOUND_ERROR');
      expectStyleA(await http.post(`${HELPER}/${live.id}/complete`, org.testSecret, { outcome: 'verified' }), 404, 'NOT_FOUND_ERROR');
      const test = (await http.post(BASE, org.testSecret, GUARANTOR_BODY)).json().data;
      expectStyleA(await http.post(`${HELPER}/${test.id}/complete`, org.testSecret, { outcome: 'maybe' }), 400, 'VALIDATION_ERROR');
      expectStyleA(await http.post(`${HELPER}/abc/complete`, org.testSecret, { outcome: 'verified' }), 400, 'VALIDATION_ERROR');
      expect((await http.get(`${BASE}/${live.id}`, org.liveSecret)).json().data.status).toEqual(IN_PROGRESS);
    });
  });

  describe('verifyAddress', () => {
    it('creates the guarantor address verification and completes only once it has', async () => {
      const org = await t.org({ riskLevel: 'LOW' });
      const created = (await http.post(BASE, org.testSecret, { ...GUARANTOR_BODY, verifyAddress: 'true' })).json().data;
      expect(created).toMatchObject({ verifyAddress: true, addressVerificationId: expect.any(Number) });
      const address = (await http.get(`/v1/verifications/addresses/${created.addressVerificationId}`, org.testSecret)).json().data;
      expect(address).toMatchObject({ street: '27 Allen Avenue', lga: 'Ikeja', state: 'Lagos', applicant: { firstname: 'Babatunde', lastname: 'Adeyemi' } });

      const res = await http.post(`${HELPER}/${created.id}/complete`, org.testSecret, { outcome: 'verified' });
      expect(res.json().data.status).toEqual(VERIFIED);
      const after = (await http.get(`/v1/verifications/addresses/${created.addressVerificationId}`, org.testSecret)).json().data;
      expect(after.status.status).toBe('Verified');
      expect((await deliveriesOf(t.database.db, org.id)).map((d) => d.type)).toEqual(['address.completed', 'guarantor.completed']);
    });

    it('cancels the address verification with the guarantor verification', async () => {
      const org = await t.org({ riskLevel: 'LOW' });
      const created = (await http.post(BASE, org.testSecret, { ...GUARANTOR_BODY, verifyAddress: true })).json().data;
      expect((await http.del(`${BASE}/${created.id}`, org.testSecret)).statusCode).toBe(200);
      const address = (await http.get(`/v1/verifications/addresses/${created.addressVerificationId}`, org.testSecret)).json().data;
      expect(address.status.status).toBe('Cancelled');
      expect((await deliveriesOf(t.database.db, org.id)).map((d) => d.type)).toEqual(['guarantor.cancelled', 'address.cancelled']);
    });

    it('is not verified when the address is not verified', async () => {
      const org = await t.org({ riskLevel: 'LOW' });
      const created = (await http.post(BASE, org.testSecret, { ...GUARANTOR_BODY, verifyAddress: true })).json().data;
      // The address completes first (a field agent, here the address test helper); the guarantor has not answered.
      const address = await http.post(`/v1/test-helpers/addresses/${created.addressVerificationId}/complete`, org.testSecret, { outcome: 'failed' });
      expect(address.statusCode).toBe(200);
      expect((await http.get(`${BASE}/${created.id}`, org.testSecret)).json().data.status).toEqual(IN_PROGRESS);
      const res = await http.post(`${HELPER}/${created.id}/complete`, org.testSecret, { outcome: 'verified' });
      expect(res.json().data.status).toEqual(notVerified('ADDRESS_NOT_VERIFIED'));
    });
  });
});
