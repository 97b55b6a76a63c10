import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importRegistry } from '../../src/identities/registry/import.js';
import { setPrice } from '../../src/platform/billing.js';
import { SESSION_BILLABLES } from '../../src/sessions/billing.js';
import { expireDueSessions } from '../../src/sessions/service.js';
import { hashToken } from '../../src/sessions/tokens.js';
import { buildTestContext, NOWHERE_WEBHOOK_URL, type TestContext } from '../helpers/app.js';
import { balanceOf, expectStyleA, httpClient, ID_ONLY, SANDBOX, sessionEvents, sessionUsage, tokenOf, type HttpClient } from './fixtures.js';

const BASE = '/v1/verifications/sessions';
const HELPER = '/v1/test-helpers/sessions';
const PRICE = SESSION_BILLABLES.session.defaultPrice;

const SESSION_KEYS = [
  'id', 'reference', 'url', 'clientSecret', 'status', 'idTypes', 'applicant', 'requestedChecks', 'idType', 'identity', 'checks', 'reasons',
  'userConsent', 'redirectUrl', 'metadata', 'createdAt', 'startedAt', 'completedAt', 'expiresAt', 'endedAt',
].sort();

describe('verification sessions: the customer API (real sockets)', () => {
  let t: TestContext;
  let http: HttpClient;
  let base: string;

  beforeAll(async () => {
    t = await buildTestContext({ webhookUrl: NOWHERE_WEBHOOK_URL });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    http = httpClient(base);
  });
  afterAll(() => t.close());

  describe('create', () => {
    it('answers 201 with the session, its hosted url and client secret; only their hashes are stored', async () => {
      const org = await t.org();
      const res = await http.post(BASE, org.testSecret, { reference: 'onboarding-1', redirectUrl: 'https://app.example.com/done', metadata: { customerId: 'c-9' } });
      expect(res.status).toBe(201);
      const { status, data } = res.json();
      expect(status).toBe('success');
      expect(Object.keys(data).sort()).toEqual(SESSION_KEYS);
      expect(data).toMatchObject({
        id: expect.stringMatching(/^ses_[0-9a-f]{20}$/),
        reference: 'onboarding-1',
        url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:8080\/verify\/[A-Za-z0-9_-]{43}$/),
        clientSecret: expect.stringMatching(/^vcs_[A-Za-z0-9_-]{43}$/),
        status: { status: 'CREATED', subStatus: 'AWAITING_USER', state: 'CREATED' },
        idTypes: ['BVN', 'NIN', 'VNIN', 'DRIVERS_LICENSE'],
        applicant: {},
        requestedChecks: { idLookup: true, liveness: true, faceMatch: true, screening: false },
        idType: null,
        identity: null,
        checks: { idLookup: null, liveness: null, faceMatch: null, screening: null },
        reasons: [],
        redirectUrl: 'https://app.example.com/done',
        metadata: { customerId: 'c-9' },
        completedAt: null,
      });
      expect(Date.parse(data.expiresAt) - Date.parse(data.createdAt)).toBe(1440 * 60_000);
      const token = tokenOf(data.url);
      const stored = await t.database.db.selectFrom('session_tokens').select(['token_hash', 'kind']).orderBy('kind').execute();
      expect(stored).toContainEqual({ token_hash: hashToken(token), kind: 'url' });
      expect(stored).toContainEqual({ token_hash: hashToken(data.clientSecret), kind: 'client_secret' });
      const raw = JSON.stringify(await t.database.db.selectFrom('session_tokens').selectAll().execute());
      expect(raw).not.toContain(token);
      expect(raw).not.toContain(data.clientSecret.slice(4));
      // GET never shows them again.
      const fetched = (await http.get(`${BASE}/${data.id}`, org.testSecret)).json().data;
      expect(fetched).toMatchObject({ url: null, clientSecret: null, id: data.id });
    });

    it('generates a reference, takes ID types loosely, and prefills an applicant', async () => {
      const org = await t.org({ riskLevel: 'MEDIUM' });
      const res = await http.post(BASE, org.testSecret, {
        idTypes: ['nin', 'drivers license'],
        applicant: { firstname: 'Babatunde', lastname: 'Adeyemi', idType: 'NIN', idNumber: '704 1235 8961' },
        checks: { liveness: true, faceMatch: false },
        expiresInMinutes: 30,
      });
      expect(res.status).toBe(201);
      const data = res.json().data;
      expect(data.reference).toMatch(/^vsr_[A-Za-z0-9_-]{12}$/);
      expect(data.idTypes).toEqual(['NIN', 'DRIVERS_LICENSE']);
      expect(data.applicant).toEqual({ firstname: 'Babatunde', lastname: 'Adeyemi', idType: 'NIN', idNumber: '70412358961' });
      expect(data.requestedChecks).toEqual({ idLookup: true, liveness: true, faceMatch: false, screening: false });
      expect(Date.parse(data.expiresAt) - Date.parse(data.createdAt)).toBe(30 * 60_000);
    });

    it('answers 400 style A naming every bad field', async () => {
      const org = await t.org({ riskLevel: 'HIGH' });
      const cases: [unknown, RegExp[]][] = [
        [{}, [/applicant.firstname is required for this account's risk level \(HIGH\)/, /applicant.lastname is required/, /applicant.dob is required/]],
        [{ applicant: { ...SANDBOX.nin, dob: '1985-11-02' } }, [/applicant.dob must be a past date written DD-MM-YYYY/]],
        [{ applicant: { ...SANDBOX.nin, idNumber: '123' } }, [/applicant.idNumber must be a NIN: 11 digits/]],
        [{ applicant: { ...SANDBOX.nin, idType: 'PASSPORT' } }, [/applicant.idType must be one of BVN, NIN, VNIN, DRIVERS_LICENSE/]],
        [{ applicant: { ...SANDBOX.nin, idType: undefined } }, [/applicant.idType and applicant.idNumber go together/]],
        [{ applicant: SANDBOX.nin, idTypes: ['BVN'] }, [/applicant.idType NIN is not one of the session's idTypes \(BVN\)/]],
        [{ applicant: SANDBOX.nin, idTypes: [] }, [/idTypes must name at least one/]],
        [{ applicant: SANDBOX.nin, idTypes: ['VOTERS'] }, [/idTypes: "VOTERS" is not one of/]],
        [{ applicant: SANDBOX.nin, checks: { liveness: false } }, [/checks.faceMatch needs checks.liveness/]],
        [{ applicant: SANDBOX.nin, expiresInMinutes: 2 }, [/expiresInMinutes must be a whole number from 5 to 10080/]],
        [{ applicant: SANDBOX.nin, expiresInMinutes: 1.5 }, [/expiresInMinutes/]],
        [{ applicant: SANDBOX.nin, redirectUrl: 'javascript:alert(1)' }, [/redirectUrl must be an absolute http\(s\) URL/]],
        [{ applicant: SANDBOX.nin, redirectUrl: 'https://user:pw@example.com/' }, [/redirectUrl/]],
        [{ applicant: SANDBOX.nin, metadata: { n: 5 } }, [/metadata.n must be a string/]],
        [{ applicant: SANDBOX.nin, metadata: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])) }, [/metadata may hold at most 20 keys/]],
        [{ applicant: SANDBOX.nin, reference: 'has spaces' }, [/reference must be 1 to 100 printable characters/]],
        [{ applicant: SANDBOX.nin, consent: { reference: 'c-1' } }, [/consent.obtainedAt is required/, /consent.channel is required/]],
        [{ applicant: SANDBOX.nin, checks: { liveness: 'maybe' } }, [/checks.liveness/]],
        ['not json', [/JSON|body/i]],
        [[1, 2], [/must be object/]],
      ];
      for (const [body, patterns] of cases) {
        const res = await http.call('POST', BASE, { secret: org.testSecret, body });
        const error = expectStyleA(res, 400, res.json().code === 'BAD_REQUEST' ? 'BAD_REQUEST' : 'VALIDATION_ERROR');
        for (const pattern of patterns) expect(error.message, JSON.stringify(body)).toMatch(pattern);
      }
      expect((await http.get(BASE, org.testSecret)).json()._pagination.total).toBe(0);
    });

    it('answers 401 style A without a valid secret', async () => {
      expectStyleA(await http.post(BASE, undefined, {}), 401, 'ACCESS_DENIED');
      expectStyleA(await http.post(BASE, 'sk_test_nope', {}), 401, 'ACCESS_DENIED');
      expectStyleA(await http.get(`${BASE}/ses_00000000000000000000`, undefined), 401, 'ACCESS_DENIED');
    });

    it('refuses a reference used before (409), and requires consent when the organization does', async () => {
      const org = await t.org();
      expect((await http.post(BASE, org.testSecret, { reference: 'dup' })).status).toBe(201);
      expectStyleA(await http.post(BASE, org.testSecret, { reference: 'dup' }), 409, 'CONFLICT');
      // The same reference in live mode is another scope.
      expect((await http.post(BASE, org.liveSecret, { reference: 'dup' })).status).toBe(201);
      await t.database.db.updateTable('organizations').set({ consent_required: true } as never).where('id', '=', org.id).execute();
      const strict = await t.org();
      await t.database.db.updateTable('organizations').set({ consent_required: true } as never).where('id', '=', strict.id).execute();
      expect(expectStyleA(await http.post(BASE, strict.testSecret, {}), 400, 'VALIDATION_ERROR').message).toMatch(/consent is required/);
      const ok = await http.post(BASE, strict.testSecret, { consent: { reference: 'form-7', obtainedAt: '2024-05-01T09:30:00Z', channel: 'web' } });
      expect(ok.status).toBe(201);
    });

    it('replays an Idempotency-Key: one session, the same answer (tokens included), marked replayed', async () => {
      const org = await t.org();
      const headers = { 'idempotency-key': 'create-session-1' };
      const first = await http.post(BASE, org.testSecret, { reference: 'idem' }, headers);
      const second = await http.post(BASE, org.testSecret, { reference: 'idem' }, headers);
      expect(first.status).toBe(201);
      expect(second.status).toBe(201);
      expect(second.headers.get('idempotent-replayed')).toBe('true');
      expect(second.json()).toEqual(first.json());
      expect((await http.get(BASE, org.testSecret)).json()._pagination.total).toBe(1);
      const other = await http.post(BASE, org.testSecret, { reference: 'other' }, headers);
      expectStyleA(other, 422, 'UNPROCESSABLE');
    });
  });

  describe('fetch, list, cancel', () => {
    it('lists newest first with _pagination, and logs every read of personal data', async () => {
      const org = await t.org();
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await http.post(BASE, org.testSecret, { reference: `list-${i}` })).json().data.id);
      const page = (await http.get(`${BASE}?limit=2&offset=0`, org.testSecret)).json();
      expect(page.status).toBe('success');
      expect(page._pagination).toEqual({ limit: 2, offset: 0, total: 3 });
      expect(page.data.map((s: { id: string }) => s.id)).toEqual([ids[2], ids[1]]);
      expect(page.data[0].clientSecret).toBeNull();
      const rest = (await http.get(`${BASE}?limit=2&offset=2`, org.testSecret)).json();
      expect(rest.data.map((s: { id: string }) => s.id)).toEqual([ids[0]]);
      expectStyleA(await http.get(`${BASE}?limit=0`, org.testSecret), 400, 'VALIDATION_ERROR');
      expectStyleA(await http.get(`${BASE}?offset=-1`, org.testSecret), 400, 'VALIDATION_ERROR');
      await http.get(`${BASE}/${ids[0]}`, org.testSecret);
      const log = await t.database.db.selectFrom('personal_data_access_records').select(['resource', 'resource_id', 'action', 'actor_kind']).where('org_id', '=', org.id).orderBy('id').orderBy('position').execute();
      expect(log).toEqual([
        { resource: 'session', resource_id: ids[2], action: 'list', actor_kind: 'api' },
        { resource: 'session', resource_id: ids[1], action: 'list', actor_kind: 'api' },
        { resource: 'session', resource_id: ids[0], action: 'list', actor_kind: 'api' },
        { resource: 'session', resource_id: ids[0], action: 'view', actor_kind: 'api' },
      ]);
    });

    it('cancels an open session (no webhook, no charge); a second cancel is 409; unknown ids are 404', async () => {
      const org = await t.org();
      const created = (await http.post(BASE, org.liveSecret, {})).json().data;
      const res = await http.del(`${BASE}/${created.id}`, org.liveSecret);
      expect(res.status).toBe(200);
      expect(res.json()).toEqual({ status: 'success', data: 'ok' });
      const fetched = (await http.get(`${BASE}/${created.id}`, org.liveSecret)).json().data;
      expect(fetched.status).toEqual({ status: 'CANCELLED', subStatus: 'CANCELLED_BY_CUSTOMER', state: 'CANCELLED' });
      expect(fetched.reasons).toEqual(['CANCELLED']);
      expect(fetched.endedAt).not.toBeNull();
      expectStyleA(await http.del(`${BASE}/${created.id}`, org.liveSecret), 409, 'CONFLICT');
      expectStyleA(await http.del(`${BASE}/ses_00000000000000000000`, org.liveSecret), 404, 'NOT_FOUND_ERROR');
      expectStyleA(await http.get(`${BASE}/not-a-session`, org.liveSecret), 404, 'NOT_FOUND_ERROR');
      expect(await sessionEvents(t.database.db, org.id)).toEqual([]);
      expect(await balanceOf(t.database.db, org.id)).toBe(100_000);
      // The end user's link is dead: the view shows the result for an hour, every step is refused.
      const token = tokenOf(created.url);
      expect((await http.get(`/verify/api/${token}`)).json()).toMatchObject({ step: 'done', result: { outcome: 'failed', reasons: ['CANCELLED'] } });
      expectStyleA(await http.post(`/verify/api/${token}/consent`, undefined, { accepted: true }), 409, 'CONFLICT');
    });
  });

  describe('isolation', () => {
    it('keeps organizations apart: another tenant reads, lists, cancels and completes nothing (404)', async () => {
      const owner = await t.org();
      const other = await t.org();
      const created = (await http.post(BASE, owner.testSecret, {})).json().data;
      expectStyleA(await http.get(`${BASE}/${created.id}`, other.testSecret), 404, 'NOT_FOUND_ERROR');
      expectStyleA(await http.del(`${BASE}/${created.id}`, other.testSecret), 404, 'NOT_FOUND_ERROR');
      expectStyleA(await http.post(`${HELPER}/${created.id}/complete`, other.testSecret, { outcome: 'verified' }), 404, 'NOT_FOUND_ERROR');
      expect((await http.get(BASE, other.testSecret)).json()._pagination.total).toBe(0);
      expect((await http.get(`${BASE}/${created.id}`, owner.testSecret)).json().data.status.state).toBe('CREATED');
    });

    it('keeps test and live apart: a live secret sees no test session and the reverse', async () => {
      const org = await t.org();
      const test = (await http.post(BASE, org.testSecret, {})).json().data;
      const live = (await http.post(BASE, org.liveSecret, {})).json().data;
      expectStyleA(await http.get(`${BASE}/${test.id}`, org.liveSecret), 404, 'NOT_FOUND_ERROR');
      expectStyleA(await http.get(`${BASE}/${live.id}`, org.testSecret), 404, 'NOT_FOUND_ERROR');
      expectStyleA(await http.del(`${BASE}/${test.id}`, org.liveSecret), 404, 'NOT_FOUND_ERROR');
      expect((await http.get(BASE, org.testSecret)).json().data.map((s: { id: string }) => s.id)).toEqual([test.id]);
      expect((await http.get(BASE, org.liveSecret)).json().data.map((s: { id: string }) => s.id)).toEqual([live.id]);
      // The test helper exists in test mode only.
      expectStyleA(await http.post(`${HELPER}/${live.id}/complete`, org.liveSecret, { outcome: 'verified' }), 404, 'NOT_FOUND_ERROR');
      expectStyleA(await http.post(`${HELPER}/${live.id}/complete`, org.testSecret, { outcome: 'verified' }), 404, 'NOT_FOUND_ERROR');
      // The end user sees which mode it is.
      expect((await http.get(`/verify/api/${tokenOf(test.url)}`)).json().testMode).toBe(true);
      expect((await http.get(`/verify/api/${tokenOf(live.url)}`)).json().testMode).toBe(false);
    });
  });

  describe('the test helper', () => {
    it('completes verified with the sandbox identity, sends session.completed with the record as GET returns it', async () => {
      const org = await t.org();
      const created = (await http.post(BASE, org.testSecret, { idTypes: ['BVN'] })).json().data;
      const res = await http.post(`${HELPER}/${created.id}/complete`, org.testSecret, { outcome: 'verified' });
      expect(res.status).toBe(200);
      const data = res.json().data;
      expect(data).toMatchObject({
        status: { status: 'VERIFIED', subStatus: 'VERIFIED', state: 'COMPLETED' },
        idType: 'BVN',
        identity: { bvn: SANDBOX.bvn.idNumber, firstname: 'Adaeze', lastname: 'Okonkwo' },
        checks: {
          idLookup: { passed: true, idType: 'BVN', reasons: [] },
          liveness: { passed: true, simulated: true, reasons: [] },
          faceMatch: { passed: true, simulated: true, reasons: [] },
        },
        reasons: [],
      });
      expect(data.completedAt).not.toBeNull();
      const events = await sessionEvents(t.database.db, org.id);
      expect(events.map((e) => e.type)).toEqual(['session.completed']);
      expect(events[0]!.resource).toMatch(/^session\/\d+$/);
      expect(events[0]!.payload!.data).toEqual((await http.get(`${BASE}/${created.id}`, org.testSecret)).json().data);
      // Test mode is never charged, and a completed session cannot be completed again.
      expect(await sessionUsage(t.database.db, org.id)).toEqual([{ mode: 'test', outcome: 'success', price: 0, subject: `reference ${created.reference}` }]);
      expectStyleA(await http.post(`${HELPER}/${created.id}/complete`, org.testSecret, { outcome: 'failed' }), 409, 'CONFLICT');
    });

    it('fails the check that owns the reason, and refuses reasons of checks the session does not run', async () => {
      const org = await t.org();
      const created = (await http.post(BASE, org.testSecret, {})).json().data;
      const res = await http.post(`${HELPER}/${created.id}/complete`, org.testSecret, { outcome: 'failed', reason: 'SPOOF_SUSPECTED' });
      expect(res.json().data).toMatchObject({
        status: { status: 'NOT_VERIFIED', subStatus: 'SPOOF_SUSPECTED', state: 'FAILED' },
        checks: { idLookup: { passed: true }, liveness: { passed: false, reasons: ['SPOOF_SUSPECTED'] }, faceMatch: null },
        reasons: ['SPOOF_SUSPECTED'],
      });
      const idOnly = (await http.post(BASE, org.testSecret, ID_ONLY)).json().data;
      expect(expectStyleA(await http.post(`${HELPER}/${idOnly.id}/complete`, org.testSecret, { outcome: 'failed', reason: 'FACE_MISMATCH' }), 400, 'VALIDATION_ERROR').message).toMatch(/faceMatch check/);
      expectStyleA(await http.post(`${HELPER}/${idOnly.id}/complete`, org.testSecret, { outcome: 'failed', reason: 'NOPE' }), 400, 'VALIDATION_ERROR');
      expectStyleA(await http.post(`${HELPER}/${idOnly.id}/complete`, org.testSecret, { outcome: 'maybe' }), 400, 'VALIDATION_ERROR');
      const failed = await http.post(`${HELPER}/${idOnly.id}/complete`, org.testSecret, { outcome: 'failed' });
      expect(failed.json().data).toMatchObject({ checks: { idLookup: { passed: false, reasons: ['ID_NOT_FOUND'] }, liveness: null }, reasons: ['ID_NOT_FOUND'] });
    });
  });

  describe('charging (live)', () => {
    it('refuses with 402 a live session the wallet cannot cover, creating nothing', async () => {
      const org = await t.org({ fund: PRICE - 1 });
      expect(expectStyleA(await http.post(BASE, org.liveSecret, {}), 402, 'PAYMENT_REQUIRED').message).toMatch(/session price/);
      expect((await http.get(BASE, org.liveSecret)).json()._pagination.total).toBe(0);
      expect(await sessionUsage(t.database.db, org.id)).toEqual([{ mode: 'live', outcome: 'insufficient_funds', price: 0, subject: 'create' }]);
      // Test mode never needs funds.
      expect((await http.post(BASE, org.testSecret, {})).status).toBe(201);
    });

    it('charges once, when the end user completes it, with the usage row, in the completing transaction', async () => {
      await setPrice(t.database.db, 'session', PRICE);
      const org = await t.org({ fund: 100_000 });
      const created = (await http.post(BASE, org.liveSecret, ID_ONLY)).json().data;
      expect(await balanceOf(t.database.db, org.id)).toBe(100_000);
      // Sandbox numbers are not in the live registry: a live ID the embedded registry holds is needed.
      await importRegistry(t.database.db, Readable.from([JSON.stringify({ type: 'nin', record: { nin: SANDBOX.nin.idNumber, firstname: 'Babatunde', lastname: 'Adeyemi', gender: 'Male', birthdate: '02-11-1985' } })]));
      const token = tokenOf(created.url);
      expect((await http.post(`/verify/api/${token}/consent`, undefined, { accepted: true })).status).toBe(200);
      const done = await http.post(`/verify/api/${token}/id`, undefined, { idType: 'NIN', idNumber: SANDBOX.nin.idNumber });
      expect(done.json()).toMatchObject({ step: 'done', result: { outcome: 'verified', reasons: [] } });
      expect(await balanceOf(t.database.db, org.id)).toBe(100_000 - PRICE);
      expect(await sessionUsage(t.database.db, org.id)).toEqual([{ mode: 'live', outcome: 'success', price: PRICE, subject: `reference ${created.reference}` }]);
      const ledger = await t.database.db.selectFrom('ledger_entries').select(['kind', 'amount']).where('org_id', '=', org.id).where('kind', '=', 'charge').execute();
      expect(ledger).toEqual([{ kind: 'charge', amount: -PRICE }]);
      // Nothing more happens to a completed session: no second charge.
      expectStyleA(await http.post(`/verify/api/${token}/id`, undefined, { idType: 'NIN', idNumber: SANDBOX.nin.idNumber }), 409, 'CONFLICT');
      expectStyleA(await http.del(`${BASE}/${created.id}`, org.liveSecret), 409, 'CONFLICT');
      expect(await balanceOf(t.database.db, org.id)).toBe(100_000 - PRICE);
      expect((await http.get(`${BASE}/${created.id}`, org.liveSecret)).json().data.identity).toMatchObject({ nin: SANDBOX.nin.idNumber });
    });

    it('charges nothing for sessions that expire, are cancelled by either side, or are abandoned', async () => {
      const org = await t.org({ fund: 100_000 });
      const expiring = (await http.post(BASE, org.liveSecret, { expiresInMinutes: 5 })).json().data;
      const cancelled = (await http.post(BASE, org.liveSecret, {})).json().data;
      const userCancelled = (await http.post(BASE, org.liveSecret, {})).json().data;
      const abandoned = (await http.post(BASE, org.liveSecret, {})).json().data;
      await http.post(`/verify/api/${tokenOf(abandoned.url)}/consent`, undefined, { accepted: true });
      await http.del(`${BASE}/${cancelled.id}`, org.liveSecret);
      const byUser = await http.post(`/verify/api/${tokenOf(userCancelled.url)}/cancel`, undefined, {});
      expect(byUser.json()).toMatchObject({ step: 'done', result: { outcome: 'failed', reasons: ['CANCELLED'] } });
      expect((await http.get(`${BASE}/${userCancelled.id}`, org.liveSecret)).json().data.status.subStatus).toBe('CANCELLED_BY_USER');
      expect(await expireDueSessions(t.database.db, new Date(Date.now() + 6 * 60_000))).toBeGreaterThanOrEqual(1);
      expect((await http.get(`${BASE}/${expiring.id}`, org.liveSecret)).json().data.status).toEqual({ status: 'EXPIRED', subStatus: 'EXPIRED', state: 'EXPIRED' });
      expect((await http.get(`${BASE}/${abandoned.id}`, org.liveSecret)).json().data.status.state).toBe('IN_PROGRESS');
      expect(await expireDueSessions(t.database.db, new Date(Date.now() + 25 * 3_600_000))).toBeGreaterThanOrEqual(1);
      expect((await http.get(`${BASE}/${abandoned.id}`, org.liveSecret)).json().data.status.state).toBe('EXPIRED');
      expect(await balanceOf(t.database.db, org.id)).toBe(100_000);
      expect(await sessionUsage(t.database.db, org.id)).toEqual([]);
      // Expiries are told (session.expired, the record as GET returns it); cancellations are not.
      const events = await sessionEvents(t.database.db, org.id);
      expect(events.map((e) => e.type)).toEqual(['session.expired', 'session.expired']);
      expect(events[0]!.payload!.data).toEqual((await http.get(`${BASE}/${expiring.id}`, org.liveSecret)).json().data);
    });
  });
});
