import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_BILLABLES } from '../../src/sessions/billing.js';
import { expireDueSessions } from '../../src/sessions/service.js';
import { buildTestContext, NOWHERE_WEBHOOK_URL, type TestContext } from '../helpers/app.js';
import { addMember, portal, portalUser } from '../helpers/portal.js';
import { balanceOf, expectStyleA, HeldRegistry, httpClient, SANDBOX, sessionEvents, sessionUsage, tokenOf, type HttpClient } from './fixtures.js';

/**
 * A session's ID lookup is the costly part of its price (a paid upstream provider may answer
 * it), so what it found is not given away (docs/sessions.md, "Charging"; docs/security.md):
 *
 * - an open session says that its ID step passed, never the registry's record (identity, how the
 *   prefilled names compared, why a try failed): not in GET, the list, the portal or a webhook;
 * - a live session cancelled (by the customer or the person) or expired after its ID was found is
 *   charged the session price once, as a completion is, and shows the record from then on;
 *   cancelled or expired before, it is free; test mode is never charged.
 *
 * Before, a customer acting as its own end user read the full record of any BVN from an open
 * session and cancelled it for nothing.
 */

const BASE = '/v1/verifications/sessions';
const api = (token: string, step = '') => `/verify/api/${token}${step}`;
const PRICE = SESSION_BILLABLES.session.defaultPrice;
const FUND = 100_000;

const TANKO = {
  bvn: '22045722657',
  firstname: 'Musa',
  lastname: 'Tanko',
  gender: 'Male',
  phone: '08033344455',
  birthdate: '17-08-1979',
  photo: 'aGVsZCBwaG90bw==',
  residentialAddress: '12 Zaria Road, Kano',
};
/** What the record holds that an open session must not show. */
const RECORD_ONLY = [TANKO.phone, TANKO.birthdate, TANKO.photo, TANKO.residentialAddress, 'Musa'];

describe('verification sessions: the ID lookup is paid for before its record is shown', () => {
  let t: TestContext;
  let http: HttpClient;
  let registry: HeldRegistry;

  beforeAll(async () => {
    registry = new HeldRegistry().add('bvn', TANKO.bvn, TANKO);
    t = await buildTestContext({ webhookUrl: NOWHERE_WEBHOOK_URL, liveRegistry: registry });
    http = httpClient(await t.app.listen({ port: 0, host: '127.0.0.1' }));
  });
  afterAll(async () => {
    await t.close();
  });

  async function liveOrg() {
    const org = await t.org({ riskLevel: 'LOW', fund: FUND });
    const owner = await portalUser(t.database.db);
    await addMember(t.database.db, org.id, owner.personId, 'owner');
    return { org, owner };
  }

  async function startedSession(secret: string, body: object = { applicant: { lastname: 'Tanko' }, idTypes: ['BVN'] }) {
    const created = await http.post(BASE, secret, body);
    expect(created.status, created.text).toBe(201);
    const session = created.json().data;
    const token = tokenOf(session.url);
    expect((await http.post(api(token, '/consent'), undefined, { accepted: true })).status).toBe(200);
    return { id: session.id as string, token };
  }

  async function withIdFound(secret: string, idNumber = TANKO.bvn) {
    const session = await startedSession(secret);
    const res = await http.post(api(session.token, '/id'), undefined, { idType: 'BVN', idNumber });
    expect(res.status, res.text).toBe(200);
    expect(res.json().step).toBe('liveness');
    return session;
  }

  it('an open session says its ID passed without the record: GET, the list and the portal page', async () => {
    const { org, owner } = await liveOrg();
    const { id } = await withIdFound(org.liveSecret);

    const got = await http.get(`${BASE}/${id}`, org.liveSecret);
    const record = got.json().data;
    expect(record).toMatchObject({
      status: { status: 'IN_PROGRESS', subStatus: 'AWAITING_LIVENESS', state: 'IN_PROGRESS' },
      idType: 'BVN',
      identity: null,
      checks: { idLookup: { passed: true, idType: 'BVN', attempts: 1, fieldMatches: null, reasons: [] }, liveness: null, faceMatch: null },
    });
    const listed = (await http.get(`${BASE}?limit=5`, org.liveSecret)).json().data;
    expect(listed).toEqual([record]);
    const page = await portal(t.app, owner, { method: 'GET', url: `/api/orgs/${org.id}/sessions/${id}?mode=live` });
    expect(page.statusCode, page.body).toBe(200);
    expect(page.json()).toMatchObject({ identity: { idType: 'BVN', facts: [] }, idCheck: { passed: true, fieldMatches: null, reasons: [] } });
    for (const text of [got.text, JSON.stringify(listed), page.body]) for (const value of RECORD_ONLY) expect(text).not.toContain(value);
    // Nothing charged while it is open.
    expect(await balanceOf(t.database.db, org.id)).toBe(FUND);
    expect(await sessionUsage(t.database.db, org.id)).toEqual([]);
  });

  it('a failed try of an open session does not say whether the number exists or how the names compared', async () => {
    const { org, owner } = await liveOrg();
    const { id, token } = await startedSession(org.liveSecret, { applicant: { lastname: 'Okafor' }, idTypes: ['BVN'] });
    // Tanko's BVN with another last name: found, but not matching.
    const tried = await http.post(api(token, '/id'), undefined, { idType: 'BVN', idNumber: TANKO.bvn });
    expect(tried.status).toBe(422);
    const record = (await http.get(`${BASE}/${id}`, org.liveSecret)).json().data;
    expect(record.checks.idLookup).toEqual({ passed: false, idType: 'BVN', attempts: 1, fieldMatches: null, reasons: [] });
    expect(record.identity).toBeNull();
    const page = (await portal(t.app, owner, { method: 'GET', url: `/api/orgs/${org.id}/sessions/${id}?mode=live` })).json();
    expect(page.idCheck).toEqual({ passed: false, tries: 1, fieldMatches: null, reasons: [] });
    expect(JSON.stringify(page.steps)).not.toMatch(/match|found/i);
    // Cancelled before any identity was found: free, and still nothing of the record.
    expect((await http.del(`${BASE}/${id}`, org.liveSecret)).status).toBe(200);
    expect(await balanceOf(t.database.db, org.id)).toBe(FUND);
    expect(await sessionUsage(t.database.db, org.id)).toEqual([]);
    expect((await http.get(`${BASE}/${id}`, org.liveSecret)).json().data.checks.idLookup).toMatchObject({ fieldMatches: null, reasons: [] });
  });

  it('the customer cancelling after the ID was found pays the session price once; the record is shown from then on', async () => {
    const { org } = await liveOrg();
    const { id } = await withIdFound(org.liveSecret);
    expect((await http.del(`${BASE}/${id}`, org.liveSecret)).status).toBe(200);
    expect(await balanceOf(t.database.db, org.id)).toBe(FUND - PRICE);
    expect(await sessionUsage(t.database.db, org.id)).toEqual([{ mode: 'live', outcome: 'success', price: PRICE, subject: expect.stringMatching(/^reference vsr_/) }]);
    const ledger = await t.database.db.selectFrom('ledger_entries').select(['kind', 'amount']).where('org_id', '=', org.id).where('kind', '=', 'charge').execute();
    expect(ledger.map((row) => [row.kind, Number(row.amount)])).toEqual([['charge', -PRICE]]);
    const record = (await http.get(`${BASE}/${id}`, org.liveSecret)).json().data;
    expect(record).toMatchObject({
      status: { status: 'CANCELLED', subStatus: 'CANCELLED_BY_CUSTOMER' },
      identity: { bvn: TANKO.bvn, lastname: 'Tanko', phone: TANKO.phone, residentialAddress: TANKO.residentialAddress },
      checks: { idLookup: { passed: true, fieldMatches: { lastname: true } } },
    });
    // Once only: a second DELETE is 409 and charges nothing; a cancellation sends no webhook.
    expectStyleA(await http.del(`${BASE}/${id}`, org.liveSecret), 409, 'CONFLICT');
    expect(await balanceOf(t.database.db, org.id)).toBe(FUND - PRICE);
    expect(await sessionEvents(t.database.db, org.id)).toEqual([]);
  });

  it('the person cancelling, or the session expiring, after the ID was found is charged too; session.expired carries the record', async () => {
    const { org } = await liveOrg();
    const byPerson = await withIdFound(org.liveSecret);
    expect((await http.post(api(byPerson.token, '/cancel'), undefined, {})).json()).toMatchObject({ step: 'done', status: 'cancelled' });
    expect(await balanceOf(t.database.db, org.id)).toBe(FUND - PRICE);

    const expiring = await withIdFound(org.liveSecret);
    await t.database.db.updateTable('verification_sessions').set({ expires_at: new Date(Date.now() - 1000) }).where('public_id', '=', expiring.id).execute();
    expect(await expireDueSessions(t.database.db, new Date())).toBeGreaterThanOrEqual(1);
    expect(await balanceOf(t.database.db, org.id)).toBe(FUND - 2 * PRICE);
    const [expired] = await sessionEvents(t.database.db, org.id);
    expect(expired).toMatchObject({ type: 'session.expired', payload: { data: { id: expiring.id, identity: { bvn: TANKO.bvn }, checks: { idLookup: { fieldMatches: { lastname: true } } } } } });
    // Its link, used late, finds it already ended: not charged again.
    expect((await http.get(api(expiring.token))).json().status).toBe('expired');
    expect((await sessionUsage(t.database.db, org.id)).map((u) => u.price)).toEqual([PRICE, PRICE]);
  });

  it('a session that ends against an emptied wallet keeps its outcome, pays nothing and never shows the record: GET, the list, the portal, the webhook', async () => {
    const { org, owner } = await liveOrg();
    const cancelled = await withIdFound(org.liveSecret);
    const expiring = await withIdFound(org.liveSecret);
    // The wallet held the price when the sessions were created; now it is empty.
    await t.database.db.updateTable('organizations').set({ balance: 0 }).where('id', '=', org.id).execute();
    expect((await http.del(`${BASE}/${cancelled.id}`, org.liveSecret)).status).toBe(200);
    await t.database.db.updateTable('verification_sessions').set({ expires_at: new Date(Date.now() - 1000) }).where('public_id', '=', expiring.id).execute();
    expect(await expireDueSessions(t.database.db, new Date())).toBeGreaterThanOrEqual(1);
    expect(await balanceOf(t.database.db, org.id)).toBe(0);
    expect((await sessionUsage(t.database.db, org.id)).map((u) => [u.outcome, u.price])).toEqual([
      ['insufficient_funds', 0],
      ['insufficient_funds', 0],
    ]);

    const records = await Promise.all([cancelled, expiring].map(async ({ id }) => (await http.get(`${BASE}/${id}`, org.liveSecret)).json().data));
    expect(records.map((record) => record.status.status)).toEqual(['CANCELLED', 'EXPIRED']);
    for (const record of records) {
      expect(record.identity).toBeNull();
      expect(record.checks.idLookup).toMatchObject({ passed: true, fieldMatches: null, reasons: [] });
    }
    const listed = (await http.get(`${BASE}?limit=5`, org.liveSecret)).json().data;
    const page = await portal(t.app, owner, { method: 'GET', url: `/api/orgs/${org.id}/sessions/${cancelled.id}?mode=live` });
    expect(page.json()).toMatchObject({ unpaid: true, identity: { idType: 'BVN', facts: [] }, idCheck: { fieldMatches: null } });
    const [expired] = await sessionEvents(t.database.db, org.id);
    expect(expired).toMatchObject({ type: 'session.expired', payload: { data: { id: expiring.id, identity: null } } });
    for (const text of [JSON.stringify(records), JSON.stringify(listed), page.body, JSON.stringify(expired)]) {
      for (const value of RECORD_ONLY) expect(text).not.toContain(value);
    }
    // A paid one shows it, and says it is not unpaid.
    await t.database.db.updateTable('organizations').set({ balance: FUND }).where('id', '=', org.id).execute();
    const paid = await withIdFound(org.liveSecret);
    expect((await http.del(`${BASE}/${paid.id}`, org.liveSecret)).status).toBe(200);
    expect((await http.get(`${BASE}/${paid.id}`, org.liveSecret)).json().data.identity).toMatchObject({ bvn: TANKO.bvn });
    expect((await portal(t.app, owner, { method: 'GET', url: `/api/orgs/${org.id}/sessions/${paid.id}?mode=live` })).json().unpaid).toBe(false);
  });

  it('the ID step of a live session whose wallet no longer holds its price is 402: no lookup made, no try spent', async () => {
    const { org } = await liveOrg();
    const { id, token } = await startedSession(org.liveSecret);
    await t.database.db.updateTable('organizations').set({ balance: PRICE - 1 }).where('id', '=', org.id).execute();
    const asked = registry.asked.length;
    const refused = await http.post(api(token, '/id'), undefined, { idType: 'BVN', idNumber: TANKO.bvn });
    expectStyleA(refused, 402, 'PAYMENT_REQUIRED');
    expect(refused.json().message).toMatch(/cannot take it further just now/);
    expect(registry.asked.length).toBe(asked);
    expect((await http.get(api(token))).json()).toMatchObject({ step: 'id', attemptsLeft: { id: 3 } });
    expect((await http.get(`${BASE}/${id}`, org.liveSecret)).json().data.checks.idLookup).toBeNull();
    // Funded again, the same step goes on.
    await t.database.db.updateTable('organizations').set({ balance: FUND }).where('id', '=', org.id).execute();
    expect((await http.post(api(token, '/id'), undefined, { idType: 'BVN', idNumber: TANKO.bvn })).json().step).toBe('liveness');
  });

  it('cancelled or expired before an identity was found, a live session is free', async () => {
    const { org } = await liveOrg();
    const unopened = (await http.post(BASE, org.liveSecret, { applicant: { lastname: 'Tanko' } })).json().data;
    expect((await http.del(`${BASE}/${unopened.id}`, org.liveSecret)).status).toBe(200);
    const notFound = await startedSession(org.liveSecret);
    expect((await http.post(api(notFound.token, '/id'), undefined, { idType: 'BVN', idNumber: '22045722658' })).status).toBe(422);
    await t.database.db.updateTable('verification_sessions').set({ expires_at: new Date(Date.now() - 1000) }).where('public_id', '=', notFound.id).execute();
    await expireDueSessions(t.database.db, new Date());
    expect((await http.get(`${BASE}/${notFound.id}`, org.liveSecret)).json().data.status.status).toBe('EXPIRED');
    expect(await balanceOf(t.database.db, org.id)).toBe(FUND);
    expect(await sessionUsage(t.database.db, org.id)).toEqual([]);
  });

  it('test mode is never charged: a test session cancelled after its ID was found costs nothing', async () => {
    const { org } = await liveOrg();
    const created = (await http.post(BASE, org.testSecret, { applicant: { lastname: SANDBOX.bvn.lastname }, idTypes: ['BVN'] })).json().data;
    const token = tokenOf(created.url);
    await http.post(api(token, '/consent'), undefined, { accepted: true });
    expect((await http.post(api(token, '/id'), undefined, { idType: 'BVN', idNumber: SANDBOX.bvn.idNumber })).json().step).toBe('liveness');
    expect((await http.get(`${BASE}/${created.id}`, org.testSecret)).json().data.identity).toBeNull();
    expect((await http.del(`${BASE}/${created.id}`, org.testSecret)).status).toBe(200);
    expect(await balanceOf(t.database.db, org.id)).toBe(FUND);
    expect(await sessionUsage(t.database.db, org.id)).toEqual([{ mode: 'test', outcome: 'success', price: 0, subject: `reference ${created.reference}` }]);
    expect((await http.get(`${BASE}/${created.id}`, org.testSecret)).json().data.identity).toMatchObject({ bvn: SANDBOX.bvn.idNumber });
  });
});
