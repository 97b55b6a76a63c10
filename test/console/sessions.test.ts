import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, NOWHERE_WEBHOOK_URL, type TestContext } from '../helpers/app.js';
import { addMember, operatorUser, portal, portalUser, type PortalUser } from '../helpers/portal.js';
import { completeWithHelper, createSession, livenessAttempt, SESSIONS, stillPhoto, toLiveness } from '../portal/session-fixtures.js';
import { httpClient, SANDBOX, type HttpClient } from '../sessions/fixtures.js';

/**
 * The console's sessions summary: outcomes, pass rate and failure reasons over a window, for
 * all organizations or one, per mode, against the window before; per organization, so a burst of
 * replayed frames at one customer stands out. Operators only; counts and codes, no personal data.
 */
let t: TestContext;
let http: HttpClient;
let dataDir: string;
let operator: PortalUser;

beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'vouch-console-sessions-'));
  t = await buildTestContext({ webhookUrl: NOWHERE_WEBHOOK_URL, config: { dataDir } });
  http = httpClient(await t.app.listen({ port: 0, host: '127.0.0.1' }));
  operator = await operatorUser(t.app, t.database.db);
}, 120_000);
afterAll(async () => {
  await t?.close();
  await fs.rm(dataDir, { recursive: true, force: true });
});

const summary = (user: PortalUser | undefined, query = '') => portal(t.app, user, { method: 'GET', url: `/api/console/sessions/summary${query}` });

describe('the console sessions summary', { timeout: 180_000 }, () => {
  let quiet: Awaited<ReturnType<TestContext['org']>>;
  let attacked: Awaited<ReturnType<TestContext['org']>>;

  beforeAll(async () => {
    // A quiet customer: two verified, one face mismatch, one cancelled, one still open, and one
    // verified two days ago (the window before a 24-hour one).
    quiet = await t.org({ name: 'Quiet Savings' });
    for (const outcome of ['verified', 'verified'] as const) await completeWithHelper(http, quiet.testSecret, await createSession(http, quiet.testSecret, { applicant: { ...SANDBOX.bvn } }), outcome);
    await completeWithHelper(http, quiet.testSecret, await createSession(http, quiet.testSecret), 'failed', 'FACE_MISMATCH');
    const cancelled = await createSession(http, quiet.testSecret);
    expect((await http.del(`${SESSIONS}/${cancelled.id}`, quiet.testSecret)).status).toBe(200);
    await createSession(http, quiet.testSecret);
    const old = await createSession(http, quiet.testSecret);
    await completeWithHelper(http, quiet.testSecret, old, 'verified');
    await t.database.db.updateTable('verification_sessions').set({ created_at: new Date(Date.now() - 36 * 3600_000) } as never).where('public_id', '=', old.id).execute();
    await createSession(http, quiet.liveSecret);

    // An attacked customer: a photo held to the camera, then the same frames replayed twice.
    attacked = await t.org({ name: 'Attacked Microfinance' });
    const frames = await stillPhoto(88);
    const first = await createSession(http, attacked.testSecret);
    await toLiveness(http, first);
    expect((await livenessAttempt(http, first, frames)).view.lastAttempt.passed).toBe(false);
    for (let i = 0; i < 2; i++) {
      const replay = await createSession(http, attacked.testSecret);
      await toLiveness(http, replay);
      const { view } = await livenessAttempt(http, replay, frames);
      expect(view.lastAttempt).toEqual({ passed: false, reasons: ['REPLAYED_FRAMES'], quality: [] });
    }
  }, 180_000);

  it('counts outcomes, the pass rate and the failure reasons ranked, per organization, against the window before', async () => {
    const res = await summary(operator, '?window=24h&mode=test');
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ window: '24h', mode: 'test', orgId: null });
    expect(new Date(body.to).getTime() - new Date(body.from).getTime()).toBe(24 * 3600_000);
    const quietRow = body.organizations.find((o: { orgId: string }) => o.orgId === quiet.id);
    expect(quietRow).toMatchObject({ orgName: 'Quiet Savings', sessions: 5, verified: 2, failed: 1, cancelled: 1, expired: 0, inProgress: 1, passRate: 0.667, previousPassRate: 1, attemptsDecided: 0 });
    expect(quietRow.reasons.map((r: { code: string; sessions: number }) => [r.code, r.sessions])).toEqual([
      ['CANCELLED', 1],
      ['FACE_MISMATCH', 1],
    ]);
    const attackedRow = body.organizations.find((o: { orgId: string }) => o.orgId === attacked.id);
    expect(attackedRow).toMatchObject({ sessions: 3, inProgress: 3, passRate: null, attemptsDecided: 3, attemptsFailed: 3 });
    expect(attackedRow.reasons[0]).toMatchObject({ code: 'REPLAYED_FRAMES', sessions: 0, attempts: 2, previousAttempts: 0, text: 'Frames were replayed from another attempt or session' });
    // The ranking across organizations puts the replays first; every reason is said in words.
    const replays = body.reasons.find((r: { code: string }) => r.code === 'REPLAYED_FRAMES');
    expect(replays.attempts).toBeGreaterThanOrEqual(2);
    for (const reason of body.reasons) expect(reason.text).not.toBe(reason.code);
    const ranks = body.reasons.map((r: { sessions: number; attempts: number }) => r.sessions + r.attempts);
    expect(ranks).toEqual([...ranks].sort((a: number, b: number) => b - a));
    expect(body.totals.sessions).toBeGreaterThanOrEqual(8);
    expect(body.totals.previousSessions).toBeGreaterThanOrEqual(1);
    // Counts and codes only: no reference, number or name of anyone.
    expect(res.body).not.toContain(SANDBOX.bvn.idNumber);
    expect(res.body).not.toContain(SANDBOX.nin.idNumber);
    expect(res.body).not.toContain('Adaeze');
    expect(res.body).not.toContain('ses_');
    // The summary is no view of personal data: nothing is access-logged.
    expect(await t.database.db.selectFrom('personal_data_access_records').select('id').where('channel', '=', 'console').execute()).toEqual([]);
  });

  it('narrows to one organization and one mode; a week counts the older session too', async () => {
    const one = (await summary(operator, `?window=24h&orgId=${quiet.id}`)).json();
    expect(one.organizations.map((o: { orgId: string }) => o.orgId)).toEqual([quiet.id]);
    // Both modes: the live session counts too.
    expect(one.totals).toMatchObject({ sessions: 6, verified: 2, failed: 1, inProgress: 2 });
    expect(one.reasons.map((r: { code: string }) => r.code)).not.toContain('REPLAYED_FRAMES');
    const live = (await summary(operator, `?window=24h&orgId=${quiet.id}&mode=live`)).json();
    expect(live.totals).toMatchObject({ sessions: 1, inProgress: 1, passRate: null });
    const week = (await summary(operator, `?window=7d&orgId=${quiet.id}&mode=test`)).json();
    expect(week.totals).toMatchObject({ sessions: 6, verified: 3, passRate: 0.75 });
    const nobody = (await summary(operator, `?orgId=${crypto.randomUUID()}`)).json();
    expect(nobody).toMatchObject({ window: '7d', organizations: [], reasons: [], totals: { sessions: 0, passRate: null } });
  });

  it('is for operators only, and answers bad input in the console’s style', async () => {
    expect((await summary(undefined)).statusCode).toBe(401);
    const customer = await portalUser(t.database.db);
    await addMember(t.database.db, quiet.id, customer.personId, 'owner');
    const refused = await summary(customer);
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ status: 'error', code: 'FORBIDDEN' });
    for (const query of ['?window=1y', '?mode=prod', '?orgId=not-a-uuid']) {
      const res = await summary(operator, query);
      expect(res.statusCode, query).toBe(400);
      expect(res.json()).toMatchObject({ status: 'error', code: 'VALIDATION_ERROR' });
    }
  });
});
