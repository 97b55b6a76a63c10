import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { disableOrganization } from '../../src/console/organizations.js';
import { SESSION_BILLABLES } from '../../src/sessions/billing.js';
import { expireDueSessions } from '../../src/sessions/service.js';
import { buildTestContext, NOWHERE_WEBHOOK_URL, type TestContext } from '../helpers/app.js';
import { addMember, portal, portalUser } from '../helpers/portal.js';
import { balanceOf, expectStyleA, HeldRegistry, httpClient, SANDBOX, sessionEvents, sessionUsage, tokenOf, until, type HttpClient } from './fixtures.js';
import { sansRequestId } from '../helpers/app.js';

/**
 * A verification session pays before it looks (docs/sessions.md, "Charging"; docs/security.md,
 * the second review): its price is charged with its first ID lookup, under the wallet's row lock,
 * before any registry is asked. Before, a session was charged only when it ended, and the balance
 * checks read a wallet that open sessions never reduced: an account holding one session price
 * opened ten live sessions and learned from each ID step whether a BVN exists, and an open
 * session still ran liveness and a face match after the first had emptied the wallet.
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
const UNKNOWN_BVN = '22045722658';
/** What the record holds that a session that did not pay must not show. */
const RECORD_ONLY = [TANKO.phone, TANKO.birthdate, TANKO.photo, TANKO.residentialAddress, 'Musa'];

describe('verification sessions pay before they look', () => {
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

  async function liveOrg(fund = FUND) {
    const org = await t.org({ riskLevel: 'LOW', fund });
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
    return { id: session.id as string, reference: session.reference as string, token };
  }

  async function withIdFound(secret: string) {
    const session = await startedSession(secret);
    const res = await http.post(api(session.token, '/id'), undefined, { idType: 'BVN', idNumber: TANKO.bvn });
    expect(res.status, res.text).toBe(200);
    expect(res.json().step).toBe('liveness');
    return session;
  }

  const charges = async (orgId: string) =>
    (await t.database.db.selectFrom('ledger_entries').select(['kind', 'amount']).where('org_id', '=', orgId).where('kind', 'in', ['charge', 'refund']).orderBy('id').execute()).map(
      (row) => [row.kind, Number(row.amount)],
    );

  it('the first ID lookup pays the session price once; the record is the customer\'s from then on, and nothing more is charged', async () => {
    const { org, owner } = await liveOrg();
    const { id, reference, token } = await withIdFound(org.liveSecret);
    expect(await balanceOf(t.database.db, org.id)).toBe(FUND - PRICE);
    expect(await charges(org.id)).toEqual([['charge', -PRICE]]);
    expect(await sessionUsage(t.database.db, org.id)).toEqual([{ mode: 'live', outcome: 'success', price: PRICE, subject: `reference ${reference}` }]);
    // Paid, so shown while open: GET, the list and the portal page.
    const record = (await http.get(`${BASE}/${id}`, org.liveSecret)).json().data;
    expect(record).toMatchObject({
      status: { subStatus: 'AWAITING_LIVENESS' },
      identity: { bvn: TANKO.bvn, lastname: 'Tanko', phone: TANKO.phone },
      checks: { idLookup: { passed: true, attempts: 1, fieldMatches: { lastname: true }, reasons: [] } },
    });
    expect((await http.get(`${BASE}?limit=5`, org.liveSecret)).json().data).toEqual([record]);
    const page = (await portal(t.app, owner, { method: 'GET', url: `/api/orgs/${org.id}/sessions/${id}?mode=live` })).json();
    expect(page).toMatchObject({ unpaid: false, idCheck: { passed: true, fieldMatches: { lastname: true } } });
    // The end user's cancel (or the customer's, or expiry) charges nothing more.
    expect((await http.post(api(token, '/cancel'), undefined, {})).json()).toMatchObject({ step: 'done', status: 'cancelled' });
    expect(await balanceOf(t.database.db, org.id)).toBe(FUND - PRICE);
    expect(await charges(org.id)).toEqual([['charge', -PRICE]]);
  });

  it('a failed try is paid too: the person gets one 422 for "not found" and "not matching", the customer reads why', async () => {
    const { org } = await liveOrg();
    const { id, token } = await startedSession(org.liveSecret, { applicant: { lastname: 'Okafor' }, idTypes: ['BVN'] });
    const mismatch = await http.post(api(token, '/id'), undefined, { idType: 'BVN', idNumber: TANKO.bvn });
    const missing = await http.post(api(token, '/id'), undefined, { idType: 'BVN', idNumber: UNKNOWN_BVN });
    expect([mismatch.status, missing.status]).toEqual([422, 422]);
    expect(mismatch.json().message.replace(/\d+ (try|tries) left/, '')).toBe(missing.json().message.replace(/\d+ (try|tries) left/, ''));
    // One price for the session, whatever its tries.
    expect(await charges(org.id)).toEqual([['charge', -PRICE]]);
    const record = (await http.get(`${BASE}/${id}`, org.liveSecret)).json().data;
    expect(record.checks.idLookup).toMatchObject({ passed: false, attempts: 2, reasons: ['ID_NOT_FOUND'] });
    // Cancelled now: a session whose lookups ran was paid for; nothing is given back.
    expect((await http.del(`${BASE}/${id}`, org.liveSecret)).status).toBe(200);
    expect(await balanceOf(t.database.db, org.id)).toBe(FUND - PRICE);
  });

  it('the review\'s attack: ten live sessions on one price learn one answer; the other nine are 402 before any lookup, alike for a number that exists and one that does not', async () => {
    const { org } = await liveOrg(PRICE);
    const sessions = [];
    // The wallet holds one price, so each create passes its balance check.
    for (let i = 0; i < 10; i++) sessions.push(await startedSession(org.liveSecret));
    const asked = registry.asked.length;
    // All at once: the wallet's row lock lets exactly one pay.
    const answers = await Promise.all(sessions.map((s, i) => http.post(api(s.token, '/id'), undefined, { idType: 'BVN', idNumber: i % 2 ? TANKO.bvn : UNKNOWN_BVN })));
    const paid = answers.filter((a) => a.status !== 402);
    expect(paid).toHaveLength(1);
    expect(registry.asked.length).toBe(asked + 1);
    const refused = answers.filter((a) => a.status === 402);
    for (const answer of refused) expectStyleA(answer, 402, 'PAYMENT_REQUIRED');
    expect(new Set(refused.map((a) => JSON.stringify(sansRequestId(JSON.parse(a.text))))).size).toBe(1);
    expect(await balanceOf(t.database.db, org.id)).toBe(0);
    expect(await charges(org.id)).toEqual([['charge', -PRICE]]);
    // The refused sessions spent no try, looked nothing up, and their customer reads nothing either.
    for (const [i, session] of sessions.entries()) {
      if (answers[i]!.status !== 402) continue;
      expect((await http.get(api(session.token))).json()).toMatchObject({ step: 'id', attemptsLeft: { id: 3 } });
      const record = (await http.get(`${BASE}/${session.id}`, org.liveSecret)).json().data;
      expect(record).toMatchObject({ identity: null, checks: { idLookup: null, liveness: null, faceMatch: null } });
    }
    // One at a time afterwards, the same: 402 for a number that exists and one that does not.
    const idle = sessions.filter((_, i) => answers[i]!.status === 402);
    const exists = await http.post(api(idle[0]!.token, '/id'), undefined, { idType: 'BVN', idNumber: TANKO.bvn });
    const absent = await http.post(api(idle[1]!.token, '/id'), undefined, { idType: 'BVN', idNumber: UNKNOWN_BVN });
    expect([exists.status, absent.status]).toEqual([402, 402]);
    expect(sansRequestId(JSON.parse(exists.text))).toEqual(sansRequestId(JSON.parse(absent.text)));
    expect(exists.text.length).toBe(absent.text.length);
    expect(registry.asked.length).toBe(asked + 1);
    // Funded again, the same step goes on and pays.
    await t.database.db.updateTable('organizations').set({ balance: PRICE }).where('id', '=', org.id).execute();
    expect((await http.post(api(idle[0]!.token, '/id'), undefined, { idType: 'BVN', idNumber: TANKO.bvn })).json().step).toBe('liveness');
    expect(await balanceOf(t.database.db, org.id)).toBe(0);
  });

  it('a lookup no registry answered gives its price back with its try; the next try pays again', async () => {
    const { org } = await liveOrg();
    const { id, token } = await startedSession(org.liveSecret);
    registry.fail(TANKO.bvn, new Error('upstream down'));
    try {
      const failed = await http.post(api(token, '/id'), undefined, { idType: 'BVN', idNumber: TANKO.bvn });
      expect(failed.status).toBeGreaterThanOrEqual(500);
    } finally {
      registry.heal(TANKO.bvn);
    }
    expect(await balanceOf(t.database.db, org.id)).toBe(FUND);
    expect(await charges(org.id)).toEqual([
      ['charge', -PRICE],
      ['refund', PRICE],
    ]);
    expect((await sessionUsage(t.database.db, org.id)).map((u) => [u.outcome, u.price])).toEqual([['refunded', 0]]);
    expect((await http.get(`${BASE}/${id}`, org.liveSecret)).json().data).toMatchObject({ identity: null, checks: { idLookup: null } });
    expect((await http.get(api(token))).json()).toMatchObject({ step: 'id', attemptsLeft: { id: 3 } });
    expect((await http.post(api(token, '/id'), undefined, { idType: 'BVN', idNumber: TANKO.bvn })).json().step).toBe('liveness');
    expect(await balanceOf(t.database.db, org.id)).toBe(FUND - PRICE);
  });

  it('a session that never looked anything up is free: not opened, or cancelled or expired before its ID', async () => {
    const { org } = await liveOrg();
    const unopened = (await http.post(BASE, org.liveSecret, { applicant: { lastname: 'Tanko' } })).json().data;
    expect((await http.del(`${BASE}/${unopened.id}`, org.liveSecret)).status).toBe(200);
    const consented = await startedSession(org.liveSecret);
    await t.database.db.updateTable('verification_sessions').set({ expires_at: new Date(Date.now() - 1000) }).where('public_id', '=', consented.id).execute();
    await expireDueSessions(t.database.db, new Date());
    expect((await http.get(`${BASE}/${consented.id}`, org.liveSecret)).json().data.status.status).toBe('EXPIRED');
    expect(await balanceOf(t.database.db, org.id)).toBe(FUND);
    expect(await sessionUsage(t.database.db, org.id)).toEqual([]);
  });

  it('test mode records the lookup at no cost and shows the record', async () => {
    const { org } = await liveOrg();
    const created = (await http.post(BASE, org.testSecret, { applicant: { lastname: SANDBOX.bvn.lastname }, idTypes: ['BVN'] })).json().data;
    const token = tokenOf(created.url);
    await http.post(api(token, '/consent'), undefined, { accepted: true });
    expect((await http.post(api(token, '/id'), undefined, { idType: 'BVN', idNumber: SANDBOX.bvn.idNumber })).json().step).toBe('liveness');
    expect((await http.get(`${BASE}/${created.id}`, org.testSecret)).json().data.identity).toMatchObject({ bvn: SANDBOX.bvn.idNumber });
    expect((await http.del(`${BASE}/${created.id}`, org.testSecret)).status).toBe(200);
    expect(await balanceOf(t.database.db, org.id)).toBe(FUND);
    expect(await sessionUsage(t.database.db, org.id)).toEqual([{ mode: 'test', outcome: 'success', price: 0, subject: `reference ${created.reference}` }]);
  });

  describe('a session whose ID was found before sessions paid at their lookup', () => {
    /** A session as the previous release left it: its ID found, nothing charged yet. */
    async function unchargedWithIdFound(secret: string) {
      const session = await withIdFound(secret);
      const row = await t.database.db.selectFrom('verification_sessions').select(['org_id', 'usage_id', 'price']).where('public_id', '=', session.id).executeTakeFirstOrThrow();
      await t.database.db.deleteFrom('usage_events').where('id', '=', row.usage_id!).execute();
      await t.database.db.updateTable('verification_sessions').set({ usage_id: null, price: 0 }).where('public_id', '=', session.id).execute();
      await t.database.db.updateTable('organizations').set((eb) => ({ balance: eb('balance', '+', Number(row.price)) })).where('id', '=', row.org_id).execute();
      return session;
    }

    it('pays before its selfie (402 while the wallet cannot), and shows nothing of the record until it has paid', async () => {
      const { org } = await liveOrg();
      const { id, token } = await unchargedWithIdFound(org.liveSecret);
      expect((await http.get(`${BASE}/${id}`, org.liveSecret)).json().data).toMatchObject({ identity: null, checks: { idLookup: { passed: true, fieldMatches: null } } });
      await t.database.db.updateTable('organizations').set({ balance: PRICE - 1 }).where('id', '=', org.id).execute();
      expectStyleA(await http.post(api(token, '/liveness/attempts'), undefined, {}), 402, 'PAYMENT_REQUIRED');
      expect(await t.database.db.selectFrom('session_liveness_attempts').select('id').where('session_id', '=', (await t.database.db.selectFrom('verification_sessions').select('id').where('public_id', '=', id).executeTakeFirstOrThrow()).id).execute()).toEqual([]);
      await t.database.db.updateTable('organizations').set({ balance: PRICE }).where('id', '=', org.id).execute();
      expect((await http.post(api(token, '/liveness/attempts'), undefined, {})).status).toBe(201);
      expect(await balanceOf(t.database.db, org.id)).toBe(0);
      expect((await http.get(`${BASE}/${id}`, org.liveSecret)).json().data.identity).toMatchObject({ bvn: TANKO.bvn });
    });

    it('ending against an emptied wallet keeps its outcome, pays nothing and never shows what the registry answered: GET, the list, the portal, the webhook, the person\'s page', async () => {
      const { org, owner } = await liveOrg();
      const cancelled = await unchargedWithIdFound(org.liveSecret);
      const expiring = await unchargedWithIdFound(org.liveSecret);
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
      for (const record of records) expect(record).toMatchObject({ identity: null, checks: { idLookup: { fieldMatches: null, reasons: [] } } });
      const listed = (await http.get(`${BASE}?limit=5`, org.liveSecret)).json().data;
      const page = await portal(t.app, owner, { method: 'GET', url: `/api/orgs/${org.id}/sessions/${cancelled.id}?mode=live` });
      expect(page.json()).toMatchObject({ unpaid: true, identity: { idType: 'BVN', facts: [] }, idCheck: { fieldMatches: null } });
      await until(async () => (await sessionEvents(t.database.db, org.id)).length > 0, 'the session.expired event');
      const [expired] = await sessionEvents(t.database.db, org.id);
      expect(expired).toMatchObject({ type: 'session.expired', payload: { data: { id: expiring.id, identity: null } } });
      for (const text of [JSON.stringify(records), JSON.stringify(listed), page.body, JSON.stringify(expired)]) {
        for (const value of RECORD_ONLY) expect(text).not.toContain(value);
      }
    });

    it('one that ended failed and unpaid (as the previous release could) shows no reason the registry decided: not why, not the face match', async () => {
      const { org, owner } = await liveOrg();
      const { id, token } = await unchargedWithIdFound(org.liveSecret);
      const faceMatch = { passed: false, matchScore: null, matchingThreshold: 43, maxScore: 100, reasons: ['NO_REGISTRY_PHOTO'], simulated: false };
      const row = await t.database.db.selectFrom('verification_sessions').select(['checks']).where('public_id', '=', id).executeTakeFirstOrThrow();
      await t.database.db
        .updateTable('verification_sessions')
        .set({ status: 'failed', unpaid: true, reasons: JSON.stringify(['NO_REGISTRY_PHOTO']), completed_at: new Date(), checks: JSON.stringify({ ...row.checks, faceMatch }) })
        .where('public_id', '=', id)
        .execute();
      const record = (await http.get(`${BASE}/${id}`, org.liveSecret)).json().data;
      expect(record).toMatchObject({ status: { status: 'NOT_VERIFIED', subStatus: 'UNPAID', state: 'FAILED' }, reasons: [], identity: null, checks: { faceMatch: null } });
      expect((await http.get(api(token))).json().result).toEqual({ outcome: 'failed', reasons: [] });
      const page = (await portal(t.app, owner, { method: 'GET', url: `/api/orgs/${org.id}/sessions/${id}?mode=live` })).json();
      expect(page).toMatchObject({ unpaid: true, reasons: [], faceMatch: null });
      for (const text of [JSON.stringify(record), JSON.stringify(page)]) expect(text).not.toContain('NO_REGISTRY_PHOTO');
    });
  });

  describe('turning live access off stops the live sessions already open', () => {
    it('every step but cancel is 403 and nothing is looked up; test sessions go on; turned on again, they go on', async () => {
      const { org } = await liveOrg();
      const beforeConsent = tokenOf((await http.post(BASE, org.liveSecret, { applicant: { lastname: 'Tanko' }, idTypes: ['BVN'] })).json().data.url);
      const atId = await startedSession(org.liveSecret);
      const atSelfie = await withIdFound(org.liveSecret);
      const attempt = (await http.post(api(atSelfie.token, '/liveness/attempts'), undefined, {})).json();
      const test = await startedSession(org.testSecret, { applicant: { lastname: SANDBOX.bvn.lastname }, idTypes: ['BVN'] });
      const balance = await balanceOf(t.database.db, org.id);

      await disableOrganization(t.database.db, org.id, 'review: suspected abuse', { kind: 'cli' });
      const asked = registry.asked.length;
      const refusals = [
        await http.post(api(beforeConsent, '/consent'), undefined, { accepted: true }),
        await http.post(api(atId.token, '/id'), undefined, { idType: 'BVN', idNumber: TANKO.bvn }),
        await http.post(api(atSelfie.token, '/liveness/attempts'), undefined, {}),
        await http.call('POST', api(atSelfie.token, `/liveness/attempts/${attempt.attemptId}/frames`), { form: framesForm() }),
        await http.post(api(atSelfie.token, '/handoff'), undefined, {}),
      ];
      for (const refused of refusals) {
        expectStyleA(refused, 403, 'FORBIDDEN');
        expect(refused.json().message).toMatch(/cannot take it further just now/);
      }
      expect(registry.asked.length).toBe(asked);
      expect(await balanceOf(t.database.db, org.id)).toBe(balance);
      // The page still loads (it says where the session stands), and the person may still stop.
      expect((await http.get(api(atId.token))).status).toBe(200);
      expect((await http.post(api(atId.token, '/cancel'), undefined, {})).json().status).toBe('cancelled');
      // Test mode is not live access.
      expect((await http.post(api(test.token, '/id'), undefined, { idType: 'BVN', idNumber: SANDBOX.bvn.idNumber })).json().step).toBe('liveness');

      await t.database.db.updateTable('organizations').set({ enabled: true }).where('id', '=', org.id).execute();
      expect((await http.post(api(beforeConsent, '/consent'), undefined, { accepted: true })).status).toBe(200);
    });
  });
});

/** A frames form of one small JPEG: refused before it is read when the session may not go on. */
function framesForm(): FormData {
  const form = new FormData();
  form.append('timestamps', '[0]');
  form.append('frame', new Blob([new Uint8Array([0xff, 0xd8, 0xff, 0xd9])], { type: 'image/jpeg' }), 'frame.jpg');
  return form;
}
