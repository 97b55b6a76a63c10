import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMPLOYMENT_BILLABLES } from '../../src/employments/service.js';
import { buildTestContext, NOWHERE_WEBHOOK_URL, type TestContext } from '../helpers/app.js';
import {
  balanceOf,
  CANCELLED,
  client,
  deliveriesOf,
  EMPLOYMENT_BODY,
  EMPLOYMENT_KEYS,
  expectStyleA,
  IN_PROGRESS,
  messagesOf,
  notVerified,
  TIMESTAMP,
  VERIFIED,
} from '../respondents/fixtures.js';

const BASE = '/v1/verifications/employments';
const HELPER = '/v1/test-helpers/employments';
const PRICE = EMPLOYMENT_BILLABLES.employment.defaultPrice;

describe('employment verifications', () => {
  let t: TestContext;
  let http: ReturnType<typeof client>;
  let secret: string;

  beforeAll(async () => {
    t = await buildTestContext({ webhookUrl: NOWHERE_WEBHOOK_URL });
    http = client(t.app);
    secret = (await t.org()).testSecret;
  });
  afterAll(() => t.close());

  describe('create (addition)', () => {
    it('answers 201 with every field of the employment record, in progress, and queues the employer message', async () => {
      const res = await http.post(BASE, secret, EMPLOYMENT_BODY);
      expect(res.statusCode).toBe(201);
      const { status, data } = res.json();
      expect(status).toBe('success');
      expect(Object.keys(data).sort()).toEqual(EMPLOYMENT_KEYS);
      expect(data).toMatchObject({
        id: expect.any(Number),
        reference: expect.stringMatching(/^emp_/),
        employerName: 'Kolanut Technologies',
        employerEmail: 'hr@kolanut.example.com',
        employerPhone: '08035556666',
        title: 'Software Engineer',
        startDate: '01/04/2019',
        endDate: '30/06/2023',
        employeeStartDate: '01/04/2019',
        rehire: false,
        employerRespondedAt: '',
        applicant: { firstname: 'Chidi', lastname: 'Okafor', middlename: '', phone: '08031112222', gender: '', photo: '' },
        status: IN_PROGRESS,
        companyName: 'Kolanut Technologies',
        attestatorName: '',
        verifiedPoc: false,
        currentlyEmployed: false,
        employerConsented: false,
        employeeCurrentlyEmployed: false,
        claimed: { title: 'Software Engineer', startDate: '01/04/2019', endDate: '30/06/2023' },
        completedAt: '',
      });
      expect(data.createdAt).toMatch(TIMESTAMP);
      for (const key of ['rehire', 'verifiedPoc', 'currentlyEmployed', 'employerConsented', 'employeeCurrentlyEmployed']) {
        expect(typeof data[key], key).toBe('boolean');
      }
      const [message] = await messagesOf(t.database.db, 'employer_request', data.id);
      expect(message).toMatchObject({ recipient: 'hr@kolanut.example.com' });
      expect(message!.text).toContain('Chidi Okafor says they worked at Kolanut Technologies as Software Engineer, 01/04/2019 to 30/06/2023');
    });

    it('reads dates in any usual spelling; no end date means still employed', async () => {
      const { endDate: _, ...current } = EMPLOYMENT_BODY;
      const res = await http.post(BASE, secret, { ...current, startDate: '2020-01-15' });
      expect(res.statusCode).toBe(201);
      expect(res.json().data).toMatchObject({ startDate: '15/01/2020', endDate: '', employeeCurrentlyEmployed: true });
    });

    it('answers 400 style A naming every bad field', async () => {
      const cases: [object, RegExp[]][] = [
        [{}, [/applicant is required/]],
        [{ ...EMPLOYMENT_BODY, employerEmail: 'hr-at-kolanut', employerPhone: '0000' }, [/employerEmail must be a valid email/, /employerPhone must be a valid Nigerian phone/]],
        [{ ...EMPLOYMENT_BODY, startDate: '31/02/2020' }, [/startDate must be a past date/]],
        [{ ...EMPLOYMENT_BODY, startDate: '01/01/2999' }, [/startDate must be a past date/]],
        [{ ...EMPLOYMENT_BODY, endDate: '01/01/2018' }, [/endDate must not be before startDate/]],
        [{ ...EMPLOYMENT_BODY, title: '  ' }, [/title must not be blank/]],
        [{ ...EMPLOYMENT_BODY, applicant: { firstname: 'Chidi' } }, [/lastname/]],
        [{ ...EMPLOYMENT_BODY, applicant: { ...EMPLOYMENT_BODY.applicant, phone: 'call me' } }, [/applicant.phone must be a valid Nigerian phone number/]],
        // Written into the employer's mail: nobody writes paragraphs of their own there.
        [
          { ...EMPLOYMENT_BODY, employerName: 'Customer,\n\nYour salary account is on hold. Confirm at https://payroll-check.example/verify', title: 'Analyst\u2028Urgent' },
          [/employerName must be on one line \(no line breaks\)/, /title must be on one line/],
        ],
        [{ ...EMPLOYMENT_BODY, applicant: { ...EMPLOYMENT_BODY.applicant, firstname: 'Chidi\r\nPS: click here' } }, [/applicant.firstname must be on one line/]],
      ];
      for (const [body, patterns] of cases) {
        const error = expectStyleA(await http.post(BASE, secret, body), 400, 'VALIDATION_ERROR');
        for (const pattern of patterns) expect(error.message, JSON.stringify(body)).toMatch(pattern);
      }
      const high = await t.org({ riskLevel: 'HIGH' });
      expect(expectStyleA(await http.post(BASE, high.testSecret, EMPLOYMENT_BODY), 400, 'VALIDATION_ERROR').message).toMatch(
        /applicant.dob is required for this account's risk level \(HIGH\)/,
      );
      expect((await http.post(BASE, high.testSecret, { ...EMPLOYMENT_BODY, applicant: { ...EMPLOYMENT_BODY.applicant, dob: '05-05-1992' } })).statusCode).toBe(201);
    });

    it('answers 409 for a duplicate reference and 401 style A without a secret', async () => {
      expect((await http.post(BASE, secret, { ...EMPLOYMENT_BODY, reference: 'emp-dup' })).statusCode).toBe(201);
      expectStyleA(await http.post(BASE, secret, { ...EMPLOYMENT_BODY, reference: 'emp-dup' }), 409, 'CONFLICT');
      expectStyleA(await http.post(BASE, undefined, EMPLOYMENT_BODY), 401, 'ACCESS_DENIED');
      expectStyleA(await http.get(BASE, undefined), 401, 'ACCESS_DENIED');
      expectStyleA(await http.get(`${BASE}/1`, 'sk_test_bogus'), 401, 'ACCESS_DENIED');
      expectStyleA(await http.del(`${BASE}/1`, undefined), 401, 'ACCESS_DENIED');
    });

    it('charges live creates, 402 when short, refunds a cancellation', async () => {
      const org = await t.org({ fund: PRICE + 10 });
      expect((await http.post(BASE, org.liveSecret, EMPLOYMENT_BODY)).statusCode).toBe(201);
      expect(await balanceOf(t.database.db, org.id)).toBe(10);
      expectStyleA(await http.post(BASE, org.liveSecret, EMPLOYMENT_BODY), 402, 'PAYMENT_REQUIRED');
      expect(await balanceOf(t.database.db, org.id)).toBe(10);
      const [record] = (await http.get(BASE, org.liveSecret)).json().data;
      expect((await http.get(BASE, org.liveSecret)).json()._pagination.total).toBe(1);
      expect((await http.del(`${BASE}/${record.id}`, org.liveSecret)).statusCode).toBe(200);
      expect(await balanceOf(t.database.db, org.id)).toBe(PRICE + 10);
    });
  });

  describe('fetch, list, cancel', () => {
    it('fetches, 404s foreign and other-mode ids, 400s non-numeric ones', async () => {
      const org = await t.org();
      const created = (await http.post(BASE, org.testSecret, EMPLOYMENT_BODY)).json().data;
      expect((await http.get(`${BASE}/${created.id}`, org.testSecret)).json()).toEqual({ status: 'success', data: created });
      expectStyleA(await http.get(`${BASE}/${created.id}`, org.liveSecret), 404, 'NOT_FOUND_ERROR');
      expectStyleA(await http.get(`${BASE}/${created.id}`, (await t.org()).testSecret), 404, 'NOT_FOUND_ERROR');
      expectStyleA(await http.get(`${BASE}/12abc`, org.testSecret), 400, 'VALIDATION_ERROR');
    });

    it('lists newest first with exact totals and pages; modes and organizations never mix', async () => {
      const org = await t.org({ fund: 10 * PRICE });
      for (let i = 0; i < 3; i++) await http.post(BASE, org.testSecret, { ...EMPLOYMENT_BODY, reference: `e-${i}` });
      await http.post(BASE, org.liveSecret, { ...EMPLOYMENT_BODY, reference: 'live-only' });
      const page = (await http.get(`${BASE}?limit=2`, org.testSecret)).json();
      expect(page._pagination).toEqual({ limit: 2, offset: 0, total: 3 });
      expect(page.data.map((r: { reference: string }) => r.reference)).toEqual(['e-2', 'e-1']);
      const next = (await http.get(`${BASE}?limit=2&offset=2`, org.testSecret)).json();
      expect(next.data.map((r: { reference: string }) => r.reference)).toEqual(['e-0']);
      const live = (await http.get(BASE, org.liveSecret)).json();
      expect(live.data.map((r: { reference: string }) => r.reference)).toEqual(['live-only']);
      expect((await http.get(BASE, (await t.org()).testSecret)).json()).toEqual({ status: 'success', _pagination: { limit: 20, offset: 0, total: 0 }, data: [] });
      expectStyleA(await http.get(`${BASE}?limit=500`, org.testSecret), 400, 'VALIDATION_ERROR');
    });

    it('cancels once (200 "ok", then 409), with employment.cancelled; the other mode cannot cancel it', async () => {
      const org = await t.org();
      const created = (await http.post(BASE, org.testSecret, EMPLOYMENT_BODY)).json().data;
      expectStyleA(await http.del(`${BASE}/${created.id}`, org.liveSecret), 404, 'NOT_FOUND_ERROR');
      expect((await http.del(`${BASE}/${created.id}`, org.testSecret)).json()).toEqual({ status: 'success', data: 'ok' });
      expectStyleA(await http.del(`${BASE}/${created.id}`, org.testSecret), 409, 'CONFLICT');
      const fetched = (await http.get(`${BASE}/${created.id}`, org.testSecret)).json().data;
      expect(fetched.status).toEqual(CANCELLED);
      const deliveries = await deliveriesOf(t.database.db, org.id);
      expect(deliveries).toEqual([{ type: 'employment.cancelled', mode: 'test', payload: { type: 'employment.cancelled', timestamp: expect.any(String), data: fetched } }]);
    });
  });

  describe('test helper', () => {
    it('verified: the employer confirms the claim; VERIFIED / VERIFIED / COMPLETE with the attestation and a webhook', async () => {
      const org = await t.org();
      const created = (await http.post(BASE, org.testSecret, EMPLOYMENT_BODY)).json().data;
      const res = await http.post(`${HELPER}/${created.id}/complete`, org.testSecret, { outcome: 'verified' });
      expect(res.statusCode).toBe(200);
      const record = res.json().data;
      expect(record).toMatchObject({
        status: VERIFIED,
        title: 'Software Engineer',
        startDate: '01/04/2019',
        endDate: '30/06/2023',
        rehire: true,
        verifiedPoc: true,
        employerConsented: true,
        currentlyEmployed: false,
        attestatorName: 'Sandbox Employer',
      });
      expect(record.employerRespondedAt).toMatch(TIMESTAMP);
      const deliveries = await deliveriesOf(t.database.db, org.id);
      expect(deliveries.map((d) => [d.type, d.payload.data])).toEqual([['employment.completed', record]]);
      expectStyleA(await http.post(`${HELPER}/${created.id}/complete`, org.testSecret, { outcome: 'failed' }), 409, 'CONFLICT');
    });

    it('failed: the employer declines; live secrets get 404', async () => {
      const org = await t.org({ fund: PRICE });
      const created = (await http.post(BASE, org.testSecret, EMPLOYMENT_BODY)).json().data;
      const record = (await http.post(`${HELPER}/${created.id}/complete`, org.testSecret, { outcome: 'failed' })).json().data;
      expect(record).toMatchObject({ status: notVerified('EMPLOYER_DECLINED'), employerConsented: false, rehire: false });
      const live = (await http.post(BASE, org.liveSecret, EMPLOYMENT_BODY)).json().data;
      expectStyleA(await http.post(`${HELPER}/${live.id}/complete`, org.liveSecret, { outcome: 'verified' }), 404, 'NOT_FOUND_ERROR');
    });
  });
});
