import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestContext, type TestContext } from '../helpers/app.js';
import { operatorUser, portal, portalOrg, type PortalUser } from '../helpers/portal.js';

let ctx: TestContext;
let operator: PortalUser;

beforeAll(async () => {
  ctx = await buildTestContext();
  operator = await operatorUser(ctx.app, ctx.database.db);
});
afterAll(() => ctx.close());

const list = (query: string, user: PortalUser | undefined = operator) => portal(ctx.app, user, { method: 'GET', url: `/api/console/organizations${query}` });
/** A live secret at work answers the registry's 404 for the sandbox's TIN; turned off, 403. */
const tin = (secret: string) => ctx.app.inject({ method: 'GET', url: '/v1/verifications/identities/tin/23456789-0001', headers: bearer(secret) });

describe('organizations in the console', () => {
  it('lists organizations newest first with balance, members and last activity, searched by name or id', async () => {
    const quiet = await ctx.org({ name: 'Zuma Quiet Microfinance', fund: 250_000 });
    const busy = await portalOrg(ctx.database.db, { fund: 100_000 });
    expect((await tin(busy.org.testSecret)).statusCode).toBe(200);

    const all = await list('?limit=100');
    expect(all.statusCode).toBe(200);
    const rows = all.json().data as { id: string; members: number; lastActivityAt: string | null; balance: number }[];
    expect(all.json().total).toBeGreaterThanOrEqual(2);
    expect(rows.findIndex((row) => row.id === busy.org.id)).toBeLessThan(rows.findIndex((row) => row.id === quiet.id));
    expect(rows.find((row) => row.id === busy.org.id)).toMatchObject({ members: 1, balance: 100_000, lastActivityAt: expect.any(String) });
    expect(rows.find((row) => row.id === quiet.id)).toMatchObject({ name: 'Zuma Quiet Microfinance', members: 0, balance: 250_000, lastActivityAt: null, enabled: true });

    const byName = (await list('?q=zuma%20quiet')).json();
    expect(byName.data.map((row: { id: string }) => row.id)).toEqual([quiet.id]);
    expect(byName.total).toBe(1);
    expect((await list(`?q=${quiet.id}`)).json().data.map((row: { id: string }) => row.id)).toEqual([quiet.id]);
    expect((await list('?q=100%25')).json().total).toBe(0);
    expect((await list('?limit=0')).statusCode).toBe(400);
  });

  it('turns live API access off at once with a reason in the audit log; test secrets keep working; approving turns it on again', async () => {
    const org = await ctx.org({ name: 'Paused Lending' });
    expect((await tin(org.liveSecret)).statusCode).not.toBe(403);
    const disable = (payload: object) => portal(ctx.app, operator, { method: 'POST', url: `/api/console/organizations/${org.id}/disable`, payload });
    expect((await disable({ reason: '' })).statusCode).toBe(400);
    expect((await disable({ reason: 'Unpaid invoice, per finance' })).statusCode).toBe(200);
    expect((await tin(org.liveSecret)).statusCode).toBe(403);
    expect((await tin(org.testSecret)).statusCode).toBe(200);
    const again = await disable({ reason: 'twice' });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ status: 'error', code: 'CONFLICT' });
    const audit = await ctx.database.db.selectFrom('audit_events').selectAll().where('org_id', '=', org.id).where('action', '=', 'access.disabled').execute();
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor_kind: 'operator', actor_id: operator.personId, after: { enabled: false, reason: 'Unpaid invoice, per finance' } });

    const approve = await portal(ctx.app, operator, { method: 'POST', url: `/api/console/access-requests/${org.id}/approve`, payload: { riskLevel: 'NONE', payloadType: 'FULL' } });
    expect(approve.json()).toEqual({ ok: true, requestId: null });
    expect((await tin(org.liveSecret)).statusCode).not.toBe(403);
    expect((await portal(ctx.app, operator, { method: 'POST', url: '/api/console/organizations/00000000-0000-4000-8000-000000000000/disable', payload: { reason: 'x' } })).statusCode).toBe(404);
  });

  it('is closed to customers', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    expect((await list('', owner)).statusCode).toBe(403);
    const own = await portal(ctx.app, owner, { method: 'POST', url: `/api/console/organizations/${org.id}/disable`, payload: { reason: 'mine' } });
    expect(own.statusCode).toBe(403);
    expect((await tin(org.liveSecret)).statusCode).not.toBe(403);
  });
});
