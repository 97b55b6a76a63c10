import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mapDatabaseError } from '../../src/platform/errors.js';
import { ADDRESS_BODY, BUSINESS_BODY } from '../agents/fixtures.js';
import { bearer, buildTestContext, type TestContext } from '../helpers/app.js';
import { portal, portalOrg, type PortalOrg } from '../helpers/portal.js';
import { EMPLOYMENT_BODY, GUARANTOR_BODY } from '../respondents/fixtures.js';

interface Answer {
  statusCode: number;
  headers: Record<string, unknown>;
  body: string;
}

function expectStyleA(res: Answer, status: number, message?: RegExp) {
  expect(res.headers['content-type'], res.body).toMatch(/^application\/json/);
  expect({ status: res.statusCode, body: JSON.parse(res.body) }).toEqual({ status, body: { status: 'error', code: expect.any(String), message: expect.any(String), requestId: expect.stringMatching(/^req_/) } });
  if (message) expect(JSON.parse(res.body).message).toMatch(message);
}

function expectStyleB(res: Answer, status: number, message?: RegExp) {
  expect(res.headers['content-type'], res.body).toMatch(/^application\/json/);
  expect({ status: res.statusCode, body: JSON.parse(res.body) }).toEqual({ status, body: { statusCode: status, error: expect.any(String), message: expect.any(String), requestId: expect.stringMatching(/^req_/) } });
  if (message) expect(JSON.parse(res.body).message).toMatch(message);
}

const CONTROL = /must not contain control characters/;
const NUL = '\u0000';

/** Bad input is never a 500 (issue 19): what the fuzz run found, each case through the front door. */
describe('bad input is a 400 in the family style, never a 500', () => {
  let t: TestContext;
  let secret: string;
  let owner: PortalOrg;

  beforeAll(async () => {
    t = await buildTestContext();
    secret = (await t.org({ riskLevel: 'LOW' })).testSecret;
    owner = await portalOrg(t.database.db);
  });
  afterAll(async () => {
    await t?.close();
  });

  const post = (url: string, payload: unknown, credential = secret) => t.app.inject({ method: 'POST', url, headers: bearer(credential), payload: payload as object });

  it('names the values an enumerated field takes, test helpers included', async () => {
    const created = await post('/v1/verifications/addresses', ADDRESS_BODY);
    expect(created.statusCode, created.body).toBe(201);
    const helper = await post(`/v1/test-helpers/addresses/${created.json().data.id}/complete`, { outcome: 'bogus' });
    expectStyleA(helper, 400, /^outcome must be one of verified, failed$/);
    const session = await post('/v1/test-helpers/sessions/ses_00000000000000000000/complete', { outcome: 'nah' });
    expectStyleA(session, 400, /^outcome must be one of /);
    expect(session.json().message).not.toMatch(/allowed values/);
  });

  describe('text with control characters', () => {
    it('refuses NUL in the workflow text fields that reached PostgreSQL, naming the field', async () => {
      for (const field of ['employerName', 'title']) {
        const res = await post('/v1/verifications/employments', { ...EMPLOYMENT_BODY, [field]: `Kola${NUL}nut` });
        expectStyleA(res, 400, new RegExp(`^${field} must not contain control characters`));
      }
      for (const field of ['name', 'street', 'city', 'landmark']) {
        const res = await post('/v1/verifications/businesses', { ...BUSINESS_BODY, [field]: `Broad${NUL}Street` });
        expectStyleA(res, 400, new RegExp(`^${field} ${CONTROL.source}`));
      }
      const nested = await post('/v1/verifications/guarantors', { ...GUARANTOR_BODY, applicant: { ...GUARANTOR_BODY.applicant, firstname: `Ada${NUL}` } });
      expectStyleA(nested, 400, /^applicant\.firstname must not contain control characters/);
      const inList = await post('/v1/verifications/guarantors', { ...GUARANTOR_BODY, acceptableIdType: ['BVN', `NIN${NUL}`] });
      expectStyleA(inList, 400, /^acceptableIdType\.1 must not contain control characters/);
    });

    it('refuses the other control characters alike, in keys too, and in the identity family style B', async () => {
      expectStyleA(await post('/v1/verifications/businesses', { ...BUSINESS_BODY, name: 'Mama\u0007Put' }), 400, CONTROL);
      expectStyleA(await post('/v1/verifications/businesses', { ...BUSINESS_BODY, name: 'Mama\u007fPut' }), 400, CONTROL);
      expectStyleA(await post('/v1/verifications/businesses', { ...BUSINESS_BODY, name: 'Mama\u009bPut' }), 400, CONTROL);
      expectStyleA(await post('/v1/verifications/businesses', { ...BUSINESS_BODY, [`x${NUL}`]: 1 }), 400, CONTROL);
      expectStyleB(await post('/v1/verifications/identities/bvn/22345678901', { firstname: `Ada${NUL}` }), 400, /^firstname must not contain control characters/);
      expectStyleB(await post('/v1/verifications/identities/cac', { type: 'business', rcNumber: `12${NUL}34` }), 400, CONTROL);
    });

    it('keeps tab and line breaks, which text areas send', async () => {
      const res = await post('/v1/verifications/businesses', { ...BUSINESS_BODY, landmark: 'Opposite the market,\r\nblue gate\tleft' });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data.landmark).toBe('Opposite the market,\r\nblue gate\tleft');
    });

    it('refuses NUL in query strings and path parameters', async () => {
      const list = await t.app.inject({ method: 'GET', url: '/v1/verifications/addresses?limit=1%00', headers: bearer(secret) });
      expectStyleA(list, 400);
      const lookups = await portal(t.app, owner.owner, { method: 'GET', url: `/api/orgs/${owner.org.id}/lookups?q=223%00` });
      expectStyleA(lookups, 400, /^querystring q must not contain control characters/);
      const verifications = await portal(t.app, owner.owner, { method: 'GET', url: `/api/orgs/${owner.org.id}/verifications?kind=address&q=ref%00x` });
      expectStyleA(verifications, 400, /^querystring q must not contain control characters/);
      const param = await t.app.inject({ method: 'POST', url: '/v1/verifications/identities/nin/123%00', headers: bearer(secret) });
      expectStyleB(param, 400);
    });

    it("refuses NUL in the portal's account name, invitation email and sign-up names", async () => {
      expectStyleA(await portal(t.app, owner.owner, { method: 'PATCH', url: '/api/account', payload: { name: `Ada${NUL}` } }), 400, /^name must not contain control characters/);
      const invitation = await portal(t.app, owner.owner, { method: 'POST', url: `/api/orgs/${owner.org.id}/invitations`, payload: { email: `a${NUL}@example.com`, role: 'viewer' } });
      expectStyleA(invitation, 400, /^email must not contain control characters/);
      const signUp = await portal(t.app, undefined, { method: 'POST', url: '/api/auth/sign-up', payload: { name: `Ada${NUL}`, email: 'nul@example.com', organizationName: `Org${NUL}` } });
      expectStyleA(signUp, 400, /^(name|organizationName) must not contain control characters/);
    });

    it('maps a value PostgreSQL refuses (SQLSTATE class 22) to 400, not 500', () => {
      for (const code of ['22021', '22P02', '22001', '22003', '22007', '22008', '22P05', '2200N']) {
        expect(mapDatabaseError({ code })?.statusCode, code).toBe(400);
      }
      expect(mapDatabaseError({ code: '23505' })?.statusCode).toBe(409);
      expect(mapDatabaseError({ code: '53300' })).toBeUndefined();
    });
  });

  describe('JSON nested too deeply', () => {
    const deep = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
    const raw = (url: string, payload: string) => t.app.inject({ method: 'POST', url, headers: { ...bearer(secret), 'content-type': 'application/json' }, payload });

    it('answers a clear 400 of our own for a CAC lookup nested 10,000 deep', async () => {
      const res = await raw('/v1/verifications/identities/cac', deep(10_000));
      expectStyleB(res, 400, /^JSON nested too deeply/);
      expect(res.body).not.toMatch(/call stack/);
      const arrays = await raw('/v1/verifications/identities/cac', `${'['.repeat(10_000)}${']'.repeat(10_000)}`);
      expectStyleB(arrays, 400, /^JSON nested too deeply/);
      expectStyleA(await raw('/v1/verifications/addresses', deep(10_000)), 400, /^JSON nested too deeply/);
    });

    it('reads brackets inside strings as text', async () => {
      const res = await raw('/v1/verifications/businesses', JSON.stringify({ ...BUSINESS_BODY, landmark: '{['.repeat(100) }));
      expect(res.statusCode, res.body).toBe(200);
    });
  });

  describe('biometrics bodies', () => {
    const url = '/v1/verifications/identities/biometrics';

    it('answers 400 for no body and no content type', async () => {
      expectStyleB(await t.app.inject({ method: 'POST', url, headers: bearer(secret) }), 400, /idType/);
      expectStyleB(await t.app.inject({ method: 'POST', url: '/verifications/identities/biometrics', headers: bearer(secret) }), 400, /idType/);
    });

    it('answers 400 for multipart without a boundary and for a form cut short', async () => {
      const noBoundary = await t.app.inject({ method: 'POST', url, headers: { ...bearer(secret), 'content-type': 'multipart/form-data' }, payload: 'idType=nin' });
      expectStyleB(noBoundary, 400, /multipart/i);
      const cut = [
        '--XX',
        'Content-Disposition: form-data; name="idType"',
        '',
        'nin',
        '--XX',
        'Content-Disposition: form-data; name="photo"; filename="a.jpg"',
        'Content-Type: image/jpeg',
        '',
        'abc',
      ].join('\r\n');
      const res = await t.app.inject({ method: 'POST', url, headers: { ...bearer(secret), 'content-type': 'multipart/form-data; boundary=XX' }, payload: cut });
      expectStyleB(res, 400, /multipart/i);
    });

    it('refuses control characters in the form fields like in JSON', async () => {
      const form = ['--XX', 'Content-Disposition: form-data; name="idType"', '', `nin${NUL}`, '--XX--', ''].join('\r\n');
      const res = await t.app.inject({ method: 'POST', url, headers: { ...bearer(secret), 'content-type': 'multipart/form-data; boundary=XX' }, payload: form });
      expectStyleB(res, 400, /^idType must not contain control characters/);
    });
  });

  describe('scalar types in JSON bodies: text converts to the field type, nothing converts to text', () => {
    it('refuses a number, a boolean or null where the field is text, naming the field', async () => {
      expectStyleA(await post('/v1/verifications/businesses', { ...BUSINESS_BODY, name: 5 }), 400, /^name must be string$/);
      expectStyleA(await post('/v1/verifications/businesses', { ...BUSINESS_BODY, street: true }), 400, /^street must be string$/);
      expectStyleA(await post('/v1/verifications/businesses', { ...BUSINESS_BODY, name: null }), 400, /^name must be string$/);
      expectStyleB(await post('/v1/verifications/identities/bvn/22345678901', { firstname: 12345678901234567890 }), 400, /^firstname must be string$/);
      expectStyleA(await post('/v1/verifications/businesses', { ...BUSINESS_BODY, name: ['Mama Put'] }), 400, /^name must be string$/);
    });

    it('refuses a boolean where the field is a number', async () => {
      for (const amount of [true, null]) {
        const res = await portal(t.app, owner.owner, { method: 'POST', url: `/api/orgs/${owner.org.id}/funding-requests`, payload: { amount } });
        expectStyleA(res, 400, /^amount must be integer$/);
      }
    });

    it('takes "true"/"false" for a boolean, a number written as text, and one value for a list', async () => {
      const business = await post('/v1/verifications/businesses', { ...BUSINESS_BODY, canContactPoc: 'false' });
      expect(business.statusCode, business.body).toBe(200);
      expect(business.json().data.canContactPoc).toBe(false);
      const guarantor = await post('/v1/verifications/guarantors', { ...GUARANTOR_BODY, acceptableIdType: 'NIN', verifyAddress: 'false' });
      expect(guarantor.statusCode, guarantor.body).toBe(201);
      expect(guarantor.json().data).toMatchObject({ acceptableIdType: ['NIN'], verifyAddress: false });
      // Read as the number 50: refused by the minimum, not by the type.
      const funding = await portal(t.app, owner.owner, { method: 'POST', url: `/api/orgs/${owner.org.id}/funding-requests`, payload: { amount: '50' } });
      expectStyleA(funding, 400, /^amount must be >= 100000$/);
    });

    it('takes a number where the schema says so (rcNumber)', async () => {
      const res = await post('/v1/verifications/identities/cac', { type: 'business', rcNumber: 1284395 });
      expect(res.statusCode, res.body).not.toBe(400);
    });
  });
});
