import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FRAMES_PER_PERSON_PER_MINUTE } from '../../src/portal/verifications/session-routes.js';
import { buildTestContext, NOWHERE_WEBHOOK_URL, type TestContext } from '../helpers/app.js';
import { addMember, portal, portalUser, type PortalUser } from '../helpers/portal.js';
import { balanceOf, httpClient, sessionEvents, sessionUsage, type HttpClient } from '../sessions/fixtures.js';
import { completeWithHelper, createSession } from './session-fixtures.js';

/**
 * A verification session cancelled from the portal (the session page's Cancel session): the
 * API's rules (open sessions only, 409 once ended, nothing charged, no webhook), audited, for the
 * roles that act on verifications, organizations and modes kept apart. And the frames' limit per
 * signed-in person, which holds a member who rotates addresses.
 */
let t: TestContext;
let http: HttpClient;

beforeAll(async () => {
  t = await buildTestContext({ webhookUrl: NOWHERE_WEBHOOK_URL });
  http = httpClient(await t.app.listen({ port: 0, host: '127.0.0.1' }));
}, 120_000);
afterAll(async () => {
  await t?.close();
});

async function orgWith(name: string) {
  const org = await t.org({ name, fund: 100_000 });
  const people: Record<'owner' | 'developer' | 'viewer', PortalUser> = {
    owner: await portalUser(t.database.db),
    developer: await portalUser(t.database.db),
    viewer: await portalUser(t.database.db),
  };
  for (const [role, person] of Object.entries(people)) await addMember(t.database.db, org.id, person.personId, role as 'owner');
  return { org, ...people };
}

const cancelUrl = (orgId: string, id: string, mode = 'test') => `/api/orgs/${orgId}/sessions/${id}/cancel?mode=${mode}`;
const cancel = (user: PortalUser | undefined, orgId: string, id: string, mode = 'test', headers: Record<string, string> = {}) =>
  portal(t.app, user, { method: 'POST', url: cancelUrl(orgId, id, mode), headers });
const get = (user: PortalUser | undefined, url: string) => portal(t.app, user, { method: 'GET', url });

const auditOf = (orgId: string) =>
  t.database.db.selectFrom('audit_events').select(['action', 'actor_kind', 'actor_id', 'target', 'before', 'after']).where('org_id', '=', orgId).where('action', '=', 'session.cancelled').orderBy('id').execute();

describe('cancelling a session from the portal', () => {
  it('ends an open session cancelled as the API does: the link stops, nothing charged, no webhook, audited; the page says it can no longer be cancelled', async () => {
    const { org, owner } = await orgWith('Kano Credit');
    const session = await createSession(http, org.testSecret, { reference: 'cancel-me' });
    const before = await get(owner, `/api/orgs/${org.id}/sessions/${session.id}?mode=test`);
    expect(before.json()).toMatchObject({ status: 'created', cancellable: true });

    const res = await cancel(owner, org.id, session.id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ ok: true });

    const after = await get(owner, `/api/orgs/${org.id}/sessions/${session.id}?mode=test`);
    expect(after.json()).toMatchObject({ status: 'cancelled', cancellable: false, endedAt: expect.any(String), reasons: [{ code: 'CANCELLED' }] });
    expect(after.json().steps.at(-1)).toMatchObject({ step: 'cancelled', title: 'Cancelled' });
    const fetched = await http.get(`/v1/verifications/sessions/${session.id}`, org.testSecret);
    expect(fetched.json().data.status.status).toBe('CANCELLED');
    // The person's link no longer leads anywhere to continue.
    const view = await http.get(`/verify/api/${session.token}`);
    expect(view.json().step).toBe('done');
    expect(await sessionEvents(t.database.db, org.id)).toEqual([]);
    expect(await sessionUsage(t.database.db, org.id)).toEqual([]);
    expect(await auditOf(org.id)).toEqual([
      { action: 'session.cancelled', actor_kind: 'member', actor_id: owner.personId, target: `test session ${session.id}`, before: { status: 'created' }, after: { status: 'cancelled' } },
    ]);

    // Twice: 409 in the portal's style, nothing more audited.
    const again = await cancel(owner, org.id, session.id);
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ status: 'error', code: 'CONFLICT', message: expect.stringContaining('already ended (cancelled)') });
    expect(await auditOf(org.id)).toHaveLength(1);
  });

  it('cancels a live session under way without charging; a verified or failed one is 409 and stays as it was', async () => {
    const { org, developer } = await orgWith('Aba Traders');
    const live = await createSession(http, org.liveSecret, { reference: 'live-under-way' });
    expect((await http.post(`/verify/api/${live.token}/consent`, undefined, { accepted: true })).status).toBe(200);
    const balance = await balanceOf(t.database.db, org.id);
    const res = await cancel(developer, org.id, live.id, 'live');
    expect(res.statusCode, res.body).toBe(200);
    expect((await auditOf(org.id))[0]).toMatchObject({ actor_id: developer.personId, target: `live session ${live.id}`, before: { status: 'in_progress' } });
    expect(await balanceOf(t.database.db, org.id)).toBe(balance);
    expect(await sessionUsage(t.database.db, org.id)).toEqual([]);

    for (const outcome of ['verified', 'failed'] as const) {
      const ended = await createSession(http, org.testSecret, { reference: `ended-${outcome}` });
      await completeWithHelper(http, org.testSecret, ended, outcome, outcome === 'failed' ? 'FACE_MISMATCH' : undefined);
      const refused = await cancel(developer, org.id, ended.id);
      expect(refused.statusCode).toBe(409);
      expect(refused.json()).toMatchObject({ status: 'error', code: 'CONFLICT', message: `This verification session has already ended (${outcome}) and cannot be cancelled` });
      expect((await get(developer, `/api/orgs/${org.id}/sessions/${ended.id}?mode=test`)).json()).toMatchObject({ status: outcome, cancellable: false });
    }
    expect(await auditOf(org.id)).toHaveLength(1);
  });

  it('viewers may not; another organization, the other mode, a malformed id and a foreign Origin change nothing', async () => {
    const { org, owner, viewer } = await orgWith('Jos Savings');
    const other = await orgWith('Ilorin Loans');
    const session = await createSession(http, org.testSecret, { reference: 'kept' });

    expect((await get(viewer, `/api/orgs/${org.id}/sessions/${session.id}?mode=test`)).json().cancellable).toBe(true);
    const forbidden = await cancel(viewer, org.id, session.id);
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json()).toMatchObject({ status: 'error', code: 'FORBIDDEN' });
    expect((await cancel(undefined, org.id, session.id)).statusCode).toBe(401);
    for (const res of [
      await cancel(other.owner, org.id, session.id),
      await cancel(other.owner, other.org.id, session.id),
      await cancel(owner, org.id, session.id, 'live'),
      await cancel(owner, org.id, 'ses_nonsense'),
      await cancel(owner, org.id, `ses_${'0'.repeat(20)}`),
    ]) {
      expect(res.statusCode, res.body).toBe(404);
      expect(res.json()).toMatchObject({ status: 'error', code: 'NOT_FOUND_ERROR' });
    }
    expect((await cancel(owner, org.id, session.id, 'sandbox')).statusCode).toBe(400);
    const foreign = await cancel(owner, org.id, session.id, 'test', { origin: 'https://evil.example' });
    expect(foreign.statusCode).toBe(403);

    const fetched = await http.get(`/v1/verifications/sessions/${session.id}`, org.testSecret);
    expect(fetched.json().data.status.status).toBe('CREATED');
    expect(await auditOf(org.id)).toEqual([]);
    expect(await auditOf(other.org.id)).toEqual([]);
  });
});

describe('frames limited per signed-in person', () => {
  it(`after ${FRAMES_PER_PERSON_PER_MINUTE} frames in a minute a person gets 429 from any address; other people are not held`, { timeout: 120_000 }, async () => {
    const { org, owner, viewer } = await orgWith('Warri Finance');
    const session = await createSession(http, org.testSecret, { reference: 'frames' });
    const frameUrl = (position: number) => `/api/orgs/${org.id}/sessions/${session.id}/attempts/1/frames/${position}?mode=test`;
    // On PostgreSQL the counts are kept per clock minute: start early in one so every request falls in it.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 40_000) await new Promise((resolve) => setTimeout(resolve, 60_500 - intoMinute));
    // portal() sends each request from an address of its own: the per-address limit never trips.
    for (let i = 0; i < FRAMES_PER_PERSON_PER_MINUTE; i++) {
      const res = await get(owner, frameUrl(i));
      expect(res.statusCode).toBe(404);
    }
    const limited = await get(owner, frameUrl(0));
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toMatch(/^\d+$/);
    expect(limited.json()).toMatchObject({ status: 'error', code: 'RATE_LIMITED', message: expect.stringContaining(`at most ${FRAMES_PER_PERSON_PER_MINUTE} frames a minute for each person`) });
    expect((await get(owner, `${frameUrl(1)}&view=full`)).statusCode).toBe(429);
    // The rest of the portal still answers them, and another member still gets frames.
    expect((await get(owner, `/api/orgs/${org.id}/sessions/${session.id}?mode=test`)).statusCode).toBe(200);
    expect((await get(viewer, frameUrl(0))).statusCode).toBe(404);
  });
});
