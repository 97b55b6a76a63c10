import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOperator, OperatorInputError } from '../../src/console/operators.js';
import { listMail } from '../../src/portal/mail.js';
import { bearer, buildTestContext, type TestContext } from '../helpers/app.js';
import { operatorUser, portal, portalOrg, portalUser, type PortalUser } from '../helpers/portal.js';

const PUBLIC_URL = 'http://127.0.0.1:8080';
let ctx: TestContext;
let operator: PortalUser;

beforeAll(async () => {
  ctx = await buildTestContext();
  operator = await operatorUser(ctx.app, ctx.database.db);
});
afterAll(() => ctx.close());

const pending = async (user: PortalUser | undefined) => portal(ctx.app, user, { method: 'GET', url: '/api/console/access-requests?status=pending' });

describe('operators', () => {
  it('are made with a one-time sign-in link that sets their password; the link works once', async () => {
    const email = `ops-link-${Date.now()}@vouch.example`;
    const created = await createOperator(ctx.database.db, { email }, PUBLIC_URL);
    expect(created).toMatchObject({ email, name: email.split('@')[0] });
    expect(created.signInLink).toMatch(/^http:\/\/127\.0\.0\.1:8080\/reset-password\?token=[\w-]{40,}$/);
    const token = new URL(created.signInLink).searchParams.get('token')!;
    const set = (password: string) => portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/reset-password', payload: { token, password } });
    expect((await set('first operator password')).statusCode).toBe(200);
    expect((await set('second operator password')).statusCode).toBe(400);
    const me = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-in', payload: { email, password: 'first operator password' } });
    expect(me.statusCode).toBe(200);
    const audit = await ctx.database.db.selectFrom('audit_events').selectAll().where('action', '=', 'operator.created').where('target', '=', email).execute();
    expect(audit).toHaveLength(1);
    expect(audit[0]!.actor_kind).toBe('cli');
  });

  it('are never made from a customer account or twice, nor from a bad address', async () => {
    const customer = await portalUser(ctx.database.db);
    await expect(createOperator(ctx.database.db, { email: customer.email }, PUBLIC_URL)).rejects.toThrow(/already has a customer account/);
    await expect(createOperator(ctx.database.db, { email: operator.email.toUpperCase() }, PUBLIC_URL)).rejects.toThrow(/is already an operator/);
    await expect(createOperator(ctx.database.db, { email: 'not-an-address' }, PUBLIC_URL)).rejects.toThrow(OperatorInputError);
    const person = await ctx.database.db.selectFrom('people').select('operator_role').where('id', '=', customer.personId).executeTakeFirstOrThrow();
    expect(person.operator_role).toBeNull();
  });
});

describe('the console API', () => {
  it('answers 401 without a session and 403 to customers, owners included', async () => {
    expect((await pending(undefined)).statusCode).toBe(401);
    const { org, owner } = await portalOrg(ctx.database.db, { enabled: false });
    for (const [method, url, payload] of [
      ['GET', '/api/console/access-requests', undefined],
      ['POST', `/api/console/access-requests/${org.id}/approve`, { riskLevel: 'HIGH', payloadType: 'FULL' }],
      ['POST', `/api/console/access-requests/${org.id}/decline`, { reason: 'no' }],
    ] as const) {
      const res = await portal(ctx.app, owner, { method, url, payload });
      expect(res.statusCode, url).toBe(403);
      expect(res.json()).toMatchObject({ status: 'error', code: 'FORBIDDEN' });
    }
    const org2 = await ctx.database.db.selectFrom('organizations').select('enabled').where('id', '=', org.id).executeTakeFirstOrThrow();
    expect(org2.enabled).toBe(false);
  });

  it('lists a pending request; approving it with a changed risk level turns the live secret on, mails the customer and names the operator', async () => {
    const { org, owner } = await portalOrg(ctx.database.db, { enabled: false });
    const live = () => ctx.app.inject({ method: 'GET', url: '/v1/verifications/identities/tin/23456789-0001', headers: bearer(org.liveSecret) });
    expect((await live()).statusCode).toBe(403);
    const asked = await portal(ctx.app, owner, { method: 'POST', url: `/api/orgs/${org.id}/access-requests`, payload: { riskLevel: 'LOW', payloadType: 'FULL', useCase: 'Loans' } });
    expect(asked.statusCode).toBe(201);

    const listed = await pending(operator);
    expect(listed.statusCode).toBe(200);
    const entry = listed.json().data.find((row: { orgId: string }) => row.orgId === org.id);
    expect(entry).toMatchObject({ id: asked.json().id, orgName: org.name, status: 'pending', riskLevel: 'LOW', payloadType: 'FULL', useCase: 'Loans' });

    const approved = await portal(ctx.app, operator, { method: 'POST', url: `/api/console/access-requests/${org.id}/approve`, payload: { riskLevel: 'MEDIUM', payloadType: 'HALF' } });
    expect(approved.statusCode).toBe(200);
    expect(approved.json()).toEqual({ ok: true, requestId: asked.json().id });
    expect((await live()).statusCode).not.toBe(403);

    const access = (await portal(ctx.app, owner, { method: 'GET', url: `/api/orgs/${org.id}/access` })).json();
    expect(access).toMatchObject({ enabled: true, riskLevel: 'MEDIUM', payloadType: 'HALF' });
    expect(access.requests[0]).toMatchObject({ status: 'approved', decidedRiskLevel: 'MEDIUM', decidedPayloadType: 'HALF' });
    expect((await pending(operator)).json().data.some((row: { orgId: string }) => row.orgId === org.id)).toBe(false);

    const audit = await ctx.database.db.selectFrom('audit_events').selectAll().where('org_id', '=', org.id).where('action', '=', 'access.approved').execute();
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor_kind: 'operator', actor_id: operator.personId });
    expect(audit[0]!.after).toMatchObject({ enabled: true, riskLevel: 'MEDIUM', payloadType: 'HALF' });
    const mails = await listMail(ctx.database.db, { to: owner.email });
    expect(mails.map((m) => m.subject)).toContain(`${org.name} can now use the live Vouch API`);
  });

  it('declines with a reason the customer sees; no pending request, a bad id or a bad body is refused in style A', async () => {
    const { org, owner } = await portalOrg(ctx.database.db, { enabled: false });
    await portal(ctx.app, owner, { method: 'POST', url: `/api/orgs/${org.id}/access-requests`, payload: { riskLevel: 'HIGH', payloadType: 'FULL' } });
    const decline = (orgId: string, payload: object) => portal(ctx.app, operator, { method: 'POST', url: `/api/console/access-requests/${orgId}/decline`, payload });

    expect((await decline(org.id, { reason: '' })).statusCode).toBe(400);
    expect((await decline(org.id, { reason: 'x'.repeat(1001) })).statusCode).toBe(400);
    const declined = await decline(org.id, { reason: 'Send your CBN licence first' });
    expect(declined.statusCode).toBe(200);
    const access = (await portal(ctx.app, owner, { method: 'GET', url: `/api/orgs/${org.id}/access` })).json();
    expect(access).toMatchObject({ enabled: false });
    expect(access.requests[0]).toMatchObject({ status: 'declined', declineReason: 'Send your CBN licence first' });
    const audit = await ctx.database.db.selectFrom('audit_events').selectAll().where('org_id', '=', org.id).where('action', '=', 'access.declined').execute();
    expect(audit[0]).toMatchObject({ actor_kind: 'operator', actor_id: operator.personId });

    const again = await decline(org.id, { reason: 'twice' });
    expect(again.statusCode).toBe(404);
    expect(again.json()).toMatchObject({ status: 'error', code: 'NOT_FOUND_ERROR' });
    expect((await decline('not-a-uuid', { reason: 'x' })).statusCode).toBe(404);
    const approveBad = await portal(ctx.app, operator, { method: 'POST', url: `/api/console/access-requests/${org.id}/approve`, payload: { riskLevel: 'EXTREME', payloadType: 'FULL' } });
    expect(approveBad.statusCode).toBe(400);
    expect(approveBad.json()).toMatchObject({ status: 'error' });
    const unknown = await portal(ctx.app, operator, { method: 'POST', url: '/api/console/access-requests/00000000-0000-4000-8000-000000000000/approve', payload: { riskLevel: 'LOW', payloadType: 'FULL' } });
    expect(unknown.statusCode).toBe(404);
  });
});
