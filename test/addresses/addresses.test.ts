import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, NOWHERE_WEBHOOK_URL, type TestContext } from '../helpers/app.js';
import { ADDRESS_BODY, ADDRESS_KEYS, CANCELLED, client, deliveriesOf, expectStyleA, IN_PROGRESS, ISO, VERIFIED } from '../agents/fixtures.js';

const BASE = '/v1/verifications/addresses';

describe('address verifications', () => {
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
    it('creates with only street, lga, state and the applicant names and id: 201, In Progress, reference generated', async () => {
      const res = await http.post(BASE, secret, ADDRESS_BODY);
      expect(res.statusCode).toBe(201);
      const { status, data } = res.json();
      expect(status).toBe('success');
      expect(Object.keys(data).sort()).toEqual(ADDRESS_KEYS);
      expect(data).toMatchObject({
        id: expect.any(Number),
        reference: expect.stringMatching(/^adr_[0-9a-f]{20}$/),
        status: IN_PROGRESS,
        street: '12 Admiralty Way',
        lga: 'Eti-Osa',
        state: 'Lagos',
        country: 'Nigeria',
        city: '',
        completedAt: '',
        lattitude: '',
        longitude: '',
        photos: [],
        neighbor: { name: '', comment: '', phone: '' },
        flaggedForReview: false,
      });
      expect(data.createdAt).toMatch(ISO);
      expect(data.applicant).toEqual({
        firstname: 'Adaeze', lastname: 'Okonkwo', middlename: '', phone: '', idType: 'NIN', idNumber: '12345678901',
        gender: '', birthdate: '', photo: '',
      });
    });

    it('keeps every optional field, in canonical spellings', async () => {
      const res = await http.post(BASE, secret, {
        reference: 'full-1',
        street: ' 3 Aminu Kano Crescent ',
        city: 'Wuse',
        landmark: 'Opposite the bank',
        lga: 'amac',
        state: 'Abuja',
        country: 'NG',
        applicant: {
          firstname: 'Musa', lastname: 'Bello', middlename: 'Ade', dob: '01-02-1985', phone: '0803 123 4567',
          // Enumerations are read in any letter case; the record keeps the documented form.
          idType: 'kyc', idNumber: '08031234567', gender: 'male', photo: 'https://example.com/p.jpg',
        },
      });
      expect(res.statusCode).toBe(201);
      const { data } = res.json();
      expect(data).toMatchObject({ reference: 'full-1', street: '3 Aminu Kano Crescent', city: 'Wuse', landmark: 'Opposite the bank', lga: 'Abuja Municipal', state: 'FCT' });
      expect(data.applicant).toEqual({
        firstname: 'Musa', lastname: 'Bello', middlename: 'Ade', phone: '+2348031234567', idType: 'KYC', idNumber: '+2348031234567',
        gender: 'M', birthdate: '01-02-1985', photo: 'https://example.com/p.jpg',
      });
    });

    it('answers 400 style A naming the missing and malformed fields', async () => {
      const cases: [object, RegExp[]][] = [
        [{}, [/street is required/, /lga is required/, /state is required/, /applicant is required/]],
        [{ ...ADDRESS_BODY, state: 'Atlantis' }, [/state "Atlantis" is not a Nigerian state/]],
        [{ ...ADDRESS_BODY, lga: 'Kano Municipal' }, [/lga "Kano Municipal" is not a local government area of Lagos/]],
        [{ ...ADDRESS_BODY, street: '   ' }, [/street is required/]],
        [{ ...ADDRESS_BODY, country: 'Ghana' }, [/country must be Nigeria/]],
        [{ ...ADDRESS_BODY, applicant: { lastname: 'Okonkwo' } }, [/applicant.firstname is required/]],
        [{ ...ADDRESS_BODY, applicant: { ...ADDRESS_BODY.applicant, firstname: '' } }, [/applicant.firstname is required/]],
        [{ ...ADDRESS_BODY, applicant: { ...ADDRESS_BODY.applicant, idType: 'nin card' } }, [/applicant.idType must be one of BVN, NIN, KYC/]],
        [{ ...ADDRESS_BODY, applicant: { ...ADDRESS_BODY.applicant, idType: 'PASSPORT' } }, [/idType must be one of BVN, NIN, KYC/]],
        [{ ...ADDRESS_BODY, applicant: { ...ADDRESS_BODY.applicant, idNumber: '1234' } }, [/idNumber must be an 11-digit NIN/]],
        [{ ...ADDRESS_BODY, applicant: { ...ADDRESS_BODY.applicant, idType: 'KYC', idNumber: '12345' } }, [/valid Nigerian phone number for idType KYC/]],
        [{ ...ADDRESS_BODY, applicant: { firstname: 'A', lastname: 'B', idNumber: '12345678901' } }, [/applicant.idType is required with applicant.idNumber/]],
        [{ ...ADDRESS_BODY, applicant: { ...ADDRESS_BODY.applicant, dob: '1990-03-14' } }, [/applicant.dob must be a valid date written DD-MM-YYYY/]],
        [{ ...ADDRESS_BODY, applicant: { ...ADDRESS_BODY.applicant, dob: '31-02-1990' } }, [/applicant.dob/]],
        [{ ...ADDRESS_BODY, applicant: { ...ADDRESS_BODY.applicant, phone: '12345' } }, [/applicant.phone must be a valid Nigerian phone number/]],
        [{ ...ADDRESS_BODY, applicant: { ...ADDRESS_BODY.applicant, email: 'not-an-email' } }, [/applicant.email must be an email address/]],
        [{ ...ADDRESS_BODY, applicant: { ...ADDRESS_BODY.applicant, gender: 'X' } }, [/applicant.gender/]],
        [{ ...ADDRESS_BODY, reference: 'has space' }, [/reference must be/]],
        [{ ...ADDRESS_BODY, state: 'Atlantis', applicant: { ...ADDRESS_BODY.applicant, idType: 'X' } }, [/state/, /idType/]],
      ];
      for (const [body, patterns] of cases) {
        const res = await http.post(BASE, secret, body);
        const error = expectStyleA(res, 400, 'VALIDATION_ERROR');
        for (const pattern of patterns) expect(error.message, JSON.stringify(body)).toMatch(pattern);
      }
    });

    it('refuses a body that is not JSON with a 4xx style A', async () => {
      const res = await t.app.inject({ method: 'POST', url: BASE, headers: { authorization: `Bearer ${secret}`, 'content-type': 'text/plain' }, payload: 'hello' });
      expect(res.statusCode).toBe(415);
      expect(res.json()).toMatchObject({ status: 'error' });
      const broken = await t.app.inject({ method: 'POST', url: BASE, headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' }, payload: '{"street":' });
      expect(broken.statusCode).toBe(400);
      expect(broken.json()).toMatchObject({ status: 'error' });
    });
  });

  describe('risk levels', () => {
    it('refuses an account at NONE with 403 style A: address verification needs LOW', async () => {
      const none = await t.org({ riskLevel: 'NONE' });
      const error = expectStyleA(await http.post(BASE, none.testSecret, ADDRESS_BODY), 403, 'FORBIDDEN');
      expect(error.message).toMatch(/risk level of LOW or higher/);
      expectStyleA(await http.post(BASE, none.liveSecret, ADDRESS_BODY), 403, 'FORBIDDEN');
    });

    it('requires the applicant fields of the level: HIGH needs dob, MEDIUM and LOW do not', async () => {
      for (const riskLevel of ['LOW', 'MEDIUM'] as const) {
        const org = await t.org({ riskLevel });
        expect((await http.post(BASE, org.testSecret, ADDRESS_BODY)).statusCode).toBe(201);
        const error = expectStyleA(await http.post(BASE, org.testSecret, { ...ADDRESS_BODY, applicant: { firstname: 'A' } }), 400, 'VALIDATION_ERROR');
        expect(error.message).toMatch(/applicant.lastname is required/);
      }
      const high = await t.org({ riskLevel: 'HIGH' });
      const error = expectStyleA(await http.post(BASE, high.testSecret, ADDRESS_BODY), 400, 'VALIDATION_ERROR');
      expect(error.message).toBe("applicant.dob is required for this account's risk level (HIGH)");
      const withDob = { ...ADDRESS_BODY, applicant: { ...ADDRESS_BODY.applicant, dob: '14-03-1990' } };
      expect((await http.post(BASE, high.testSecret, withDob)).statusCode).toBe(201);
    });
  });

  describe('fetch', () => {
    it('answers the record as created', async () => {
      const created = (await http.post(BASE, secret, { ...ADDRESS_BODY, reference: 'fetch-1' })).json().data;
      const res = await http.get(`${BASE}/${created.id}`, secret);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ status: 'success', data: created });
    });

    it('answers 404 NOT_FOUND_ERROR for an unknown id, 400 for a non-numeric id', async () => {
      expectStyleA(await http.get(`${BASE}/999999999`, secret), 404, 'NOT_FOUND_ERROR');
      expectStyleA(await http.get(`${BASE}/99999999999999999999999`, secret), 404, 'NOT_FOUND_ERROR');
      expectStyleA(await http.get(`${BASE}/abc`, secret), 400, 'VALIDATION_ERROR');
      expectStyleA(await http.get(`${BASE}/1.5`, secret), 400, 'VALIDATION_ERROR');
      expectStyleA(await http.del(`${BASE}/abc`, secret), 400, 'VALIDATION_ERROR');
      expectStyleA(await http.del(`${BASE}/0`, secret), 404, 'NOT_FOUND_ERROR');
    });
  });

  describe('authentication and isolation', () => {
    it('answers 401 ACCESS_DENIED style A on every route without a valid secret', async () => {
      const created = (await http.post(BASE, secret, ADDRESS_BODY)).json().data;
      const routes: [string, string][] = [
        ['POST', BASE],
        ['GET', BASE],
        ['GET', `${BASE}/${created.id}`],
        ['DELETE', `${BASE}/${created.id}`],
        ['POST', `${BASE}/marketplace`],
        ['POST', `/v1/test-helpers/addresses/${created.id}/complete`],
      ];
      for (const [method, url] of routes) {
        for (const headers of [{}, { authorization: 'Bearer sk_test_nope' }, { authorization: 'Basic abc' }]) {
          const res = await t.app.inject({ method: method as 'GET', url, headers, payload: method === 'GET' || method === 'DELETE' ? undefined : {} });
          expectStyleA(res, 401, 'ACCESS_DENIED');
        }
      }
    });

    it("answers 404 for another organization's verification: fetch, cancel, complete", async () => {
      const created = (await http.post(BASE, secret, ADDRESS_BODY)).json().data;
      const other = await t.org({ riskLevel: 'LOW' });
      expectStyleA(await http.get(`${BASE}/${created.id}`, other.testSecret), 404, 'NOT_FOUND_ERROR');
      expectStyleA(await http.del(`${BASE}/${created.id}`, other.testSecret), 404, 'NOT_FOUND_ERROR');
      expectStyleA(await http.post(`/v1/test-helpers/addresses/${created.id}/complete`, other.testSecret, { outcome: 'verified' }), 404, 'NOT_FOUND_ERROR');
      const list = (await http.get(BASE, other.testSecret)).json();
      expect(list._pagination.total).toBe(0);
      expect((await http.get(`${BASE}/${created.id}`, secret)).json().data.status).toEqual(IN_PROGRESS);
    });

    it('keeps test and live apart: neither secret reads, lists or cancels the other mode', async () => {
      const org = await t.org({ riskLevel: 'LOW', fund: 1_000_000 });
      const live = (await http.post(BASE, org.liveSecret, { ...ADDRESS_BODY, reference: 'same-ref' })).json().data;
      const test = (await http.post(BASE, org.testSecret, { ...ADDRESS_BODY, reference: 'same-ref' })).json().data;
      expect(live.id).not.toBe(test.id);
      expectStyleA(await http.get(`${BASE}/${live.id}`, org.testSecret), 404, 'NOT_FOUND_ERROR');
      expectStyleA(await http.del(`${BASE}/${live.id}`, org.testSecret), 404, 'NOT_FOUND_ERROR');
      expectStyleA(await http.get(`${BASE}/${test.id}`, org.liveSecret), 404, 'NOT_FOUND_ERROR');
      expectStyleA(await http.del(`${BASE}/${test.id}`, org.liveSecret), 404, 'NOT_FOUND_ERROR');
      const testList = (await http.get(BASE, org.testSecret)).json();
      const liveList = (await http.get(BASE, org.liveSecret)).json();
      expect(testList.data.map((r: { id: number }) => r.id)).toEqual([test.id]);
      expect(liveList.data.map((r: { id: number }) => r.id)).toEqual([live.id]);
      expect((await http.get(`${BASE}/${live.id}`, org.liveSecret)).json().data.status).toEqual(IN_PROGRESS);
    });
  });

  describe('reference', () => {
    it('answers 409 style A for a reference used before, creating nothing', async () => {
      const org = await t.org({ riskLevel: 'LOW' });
      expect((await http.post(BASE, org.testSecret, { ...ADDRESS_BODY, reference: 'dup-1' })).statusCode).toBe(201);
      const error = expectStyleA(await http.post(BASE, org.testSecret, { ...ADDRESS_BODY, reference: 'dup-1' }), 409, 'CONFLICT');
      expect(error.message).toMatch(/reference "dup-1" already exists/);
      expect((await http.get(BASE, org.testSecret)).json()._pagination.total).toBe(1);
      // Another organization may use the same reference.
      expect((await http.post(BASE, secret, { ...ADDRESS_BODY, reference: 'dup-1' })).statusCode).toBe(201);
    });

    it('generates distinct references', async () => {
      const a = (await http.post(BASE, secret, ADDRESS_BODY)).json().data.reference;
      const b = (await http.post(BASE, secret, ADDRESS_BODY)).json().data.reference;
      expect(a).not.toBe(b);
    });
  });

  describe('list', () => {
    let org: { testSecret: string };
    const ids: number[] = [];
    beforeAll(async () => {
      org = await t.org({ riskLevel: 'LOW' });
      for (let i = 0; i < 105; i++) ids.push((await http.post(BASE, org.testSecret, { ...ADDRESS_BODY, reference: `list-${i}` })).json().data.id);
    });

    it('defaults to 20 records, newest first, with the exact total', async () => {
      const res = await http.get(BASE, org.testSecret);
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body.status).toBe('success');
      expect(body._pagination).toEqual({ limit: 20, offset: 0, total: 105 });
      expect(body.data.map((r: { id: number }) => r.id)).toEqual(ids.slice(-20).reverse());
      expect(Object.keys(body.data[0]).sort()).toEqual(ADDRESS_KEYS);
    });

    it('pages with limit and offset, up to 100', async () => {
      const page = (await http.get(`${BASE}?limit=10&offset=30`, org.testSecret)).json();
      expect(page._pagination).toEqual({ limit: 10, offset: 30, total: 105 });
      expect(page.data.map((r: { id: number }) => r.id)).toEqual(ids.slice(65, 75).reverse());
      const max = (await http.get(`${BASE}?limit=100`, org.testSecret)).json();
      expect(max.data).toHaveLength(100);
      const tail = (await http.get(`${BASE}?limit=100&offset=100`, org.testSecret)).json();
      expect(tail.data.map((r: { id: number }) => r.id)).toEqual(ids.slice(0, 5).reverse());
    });

    it('answers an empty page past the end, with the total', async () => {
      const past = (await http.get(`${BASE}?offset=105`, org.testSecret)).json();
      expect(past).toEqual({ status: 'success', _pagination: { limit: 20, offset: 105, total: 105 }, data: [] });
      expect((await http.get(`${BASE}?offset=100000`, org.testSecret)).json().data).toEqual([]);
    });

    it('gives each organization its own rows through the one compiled page statement', async () => {
      // The page statement is compiled once per shape (src/platform/pagination.ts); only its
      // parameters differ between organizations, pages and modes.
      const other = await t.org({ riskLevel: 'LOW' });
      const own = [];
      for (let i = 0; i < 2; i++) own.push((await http.post(BASE, other.testSecret, { ...ADDRESS_BODY, reference: `other-${i}` })).json().data.id);
      const first = (await http.get(BASE, org.testSecret)).json();
      const second = (await http.get(BASE, other.testSecret)).json();
      expect(second._pagination).toEqual({ limit: 20, offset: 0, total: 2 });
      expect(second.data.map((r: { id: number }) => r.id)).toEqual(own.reverse());
      expect(first.data.map((r: { id: number }) => r.id)).toEqual(ids.slice(-20).reverse());
      expect((await http.get(BASE, other.liveSecret)).json()).toEqual({ status: 'success', _pagination: { limit: 20, offset: 0, total: 0 }, data: [] });
    });

    it('refuses bad limit and offset values with 400 style A', async () => {
      for (const query of ['limit=0', 'limit=101', 'limit=abc', 'limit=-1', 'limit=1.5', 'offset=-1', 'offset=x', 'offset=1e3']) {
        const error = expectStyleA(await http.get(`${BASE}?${query}`, org.testSecret), 400, 'VALIDATION_ERROR');
        expect(error.message, query).toMatch(/limit|offset/);
      }
    });
  });

  describe('cancel', () => {
    it('cancels an open verification: 200 data "ok", Cancelled, and an address.cancelled webhook with the record', async () => {
      const org = await t.org({ riskLevel: 'LOW' });
      const created = (await http.post(BASE, org.testSecret, ADDRESS_BODY)).json().data;
      const res = await http.del(`${BASE}/${created.id}`, org.testSecret);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ status: 'success', data: 'ok' });
      const after = (await http.get(`${BASE}/${created.id}`, org.testSecret)).json().data;
      expect(after.status).toEqual(CANCELLED);
      expect(after.completedAt).toBe('');
      const deliveries = await deliveriesOf(t.database.db, org.id);
      expect(deliveries).toHaveLength(1);
      expect(deliveries[0]).toMatchObject({ type: 'address.cancelled', mode: 'test' });
      expect(deliveries[0]!.payload).toEqual({ type: 'address.cancelled', timestamp: expect.stringMatching(ISO), data: after });
    });

    it('refuses to cancel twice, or to cancel a completed verification (409 style A)', async () => {
      const created = (await http.post(BASE, secret, ADDRESS_BODY)).json().data;
      expect((await http.del(`${BASE}/${created.id}`, secret)).statusCode).toBe(200);
      expect(expectStyleA(await http.del(`${BASE}/${created.id}`, secret), 409, 'CONFLICT').message).toMatch(/already cancelled/);
      const done = (await http.post(BASE, secret, ADDRESS_BODY)).json().data;
      expect((await http.post(`/v1/test-helpers/addresses/${done.id}/complete`, secret, { outcome: 'verified' })).statusCode).toBe(200);
      expect(expectStyleA(await http.del(`${BASE}/${done.id}`, secret), 409, 'CONFLICT').message).toMatch(/already complete/);
    });
  });

  describe('test helper', () => {
    it('completes as verified, with the same webhook an agent visit sends', async () => {
      const org = await t.org({ riskLevel: 'LOW' });
      const created = (await http.post(BASE, org.testSecret, ADDRESS_BODY)).json().data;
      const res = await http.post(`/v1/test-helpers/addresses/${created.id}/complete`, org.testSecret, { outcome: 'verified' });
      expect(res.statusCode).toBe(200);
      const fetched = (await http.get(`${BASE}/${created.id}`, org.testSecret)).json().data;
      expect(res.json().data).toEqual(fetched);
      expect(fetched.status).toEqual(VERIFIED);
      expect(fetched.completedAt).toMatch(ISO);
      expect(Number(fetched.lattitude)).toBeCloseTo(6.55, 1);
      expect(Number(fetched.longitude)).toBeCloseTo(3.525, 1);
      expect(fetched.neighbor.name).toBe('Test Neighbour');
      expect(fetched.flaggedForReview).toBe(false);
      const [delivery] = await deliveriesOf(t.database.db, org.id);
      expect(delivery).toMatchObject({ type: 'address.completed', payload: { type: 'address.completed', data: fetched } });
    });

    it('completes as not verified with the reason in subStatus (default: address not found)', async () => {
      const a = (await http.post(BASE, secret, ADDRESS_BODY)).json().data;
      const failed = (await http.post(`/v1/test-helpers/addresses/${a.id}/complete`, secret, { outcome: 'failed' })).json().data;
      expect(failed.status).toEqual({ status: 'Not Verified', subStatus: 'address not found', state: 'complete' });
      const b = (await http.post(BASE, secret, ADDRESS_BODY)).json().data;
      const unknown = await http.post(`/v1/test-helpers/addresses/${b.id}/complete`, secret, { outcome: 'failed', reason: 'applicant unknown at address' });
      expect(unknown.json().data.status.subStatus).toBe('applicant unknown at address');
    });

    it('refuses a bad outcome or reason (400) and a second completion (409)', async () => {
      const a = (await http.post(BASE, secret, ADDRESS_BODY)).json().data;
      const url = `/v1/test-helpers/addresses/${a.id}/complete`;
      expectStyleA(await http.post(url, secret, { outcome: 'maybe' }), 400, 'VALIDATION_ERROR');
      expectStyleA(await http.post(url, secret, {}), 400, 'VALIDATION_ERROR');
      expectStyleA(await http.post(url, secret, { outcome: 'failed', reason: 'dog bit the agent' }), 400, 'VALIDATION_ERROR');
      expect((await http.post(url, secret, { outcome: 'verified' })).statusCode).toBe(200);
      expectStyleA(await http.post(url, secret, { outcome: 'failed' }), 409, 'CONFLICT');
      expectStyleA(await http.post('/v1/test-helpers/addresses/999999999/complete', secret, { outcome: 'verified' }), 404, 'NOT_FOUND_ERROR');
    });

    it('answers 404 to a live secret, whatever the id', async () => {
      const org = await t.org({ riskLevel: 'LOW', fund: 1_000_000 });
      const live = (await http.post(BASE, org.liveSecret, ADDRESS_BODY)).json().data;
      const error = expectStyleA(await http.post(`/v1/test-helpers/addresses/${live.id}/complete`, org.liveSecret, { outcome: 'verified' }), 404, 'NOT_FOUND_ERROR');
      expect(error.message).toMatch(/test mode only/);
      expect((await http.get(`${BASE}/${live.id}`, org.liveSecret)).json().data.status).toEqual(IN_PROGRESS);
    });
  });
});
