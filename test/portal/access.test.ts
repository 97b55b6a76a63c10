import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccessRequests } from '../../src/portal/access/service.js';
import { listMail, PeopleMail } from '../../src/portal/mail.js';
import { bearer, buildTestContext, type TestContext } from '../helpers/app.js';
import { addMember, portal, portalOrg, portalUser, type PortalUser } from '../helpers/portal.js';

let ctx: TestContext;
let mail: PeopleMail;
/** The service as the CLI and the console use it: decisions mailed (kept in mail_messages: no SMTP here). */
let requests: AccessRequests;
beforeAll(async () => {
  ctx = await buildTestContext();
  mail = new PeopleMail(ctx.database.db, { smtpUrl: undefined, mailFrom: 'vouch@example.com' }, pino({ level: 'silent' }));
  requests = new AccessRequests(ctx.database.db, { mail, publicUrl: 'http://127.0.0.1:8080' });
});
afterAll(() => ctx.close());

const CLI = { kind: 'cli' } as const;

function ask(user: PortalUser | undefined, orgId: string, payload: object) {
  return portal(ctx.app, user, { method: 'POST', url: `/api/orgs/${orgId}/access-requests`, payload });
}

async function accessOf(user: PortalUser, orgId: string) {
  const res = await portal(ctx.app, user, { method: 'GET', url: `/api/orgs/${orgId}/access` });
  expect(res.statusCode).toBe(200);
  return res.json();
}

async function auditOf(orgId: string) {
  return ctx.database.db.selectFrom('audit_events').select(['action', 'actor_kind', 'actor_id', 'before', 'after']).where('org_id', '=', orgId).orderBy('id').execute();
}

async function member(orgId: string, role: 'admin' | 'developer' | 'viewer'): Promise<PortalUser> {
  const user = await portalUser(ctx.database.db);
  await addMember(ctx.database.db, orgId, user.personId, role);
  return user;
}

describe('asking for live API access', () => {
  it('shows a new organization not enabled with no requests', async () => {
    const { org, owner } = await portalOrg(ctx.database.db, { enabled: false });
    expect(await accessOf(owner, org.id)).toEqual({ enabled: false, riskLevel: 'NONE', payloadType: 'FULL', requests: [] });
  });

  it('records a request as pending, refuses a second one while it waits, and keeps live secrets off', async () => {
    const { org, owner } = await portalOrg(ctx.database.db, { enabled: false });
    const asked = await ask(owner, org.id, { riskLevel: 'MEDIUM', payloadType: 'HALF', useCase: '  Loan onboarding  ' });
    expect(asked.statusCode).toBe(201);
    expect(asked.json()).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/) });

    const twice = await ask(owner, org.id, { riskLevel: 'LOW', payloadType: 'FULL' });
    expect(twice.statusCode).toBe(409);
    expect(twice.json()).toEqual({ status: 'error', code: 'CONFLICT', message: expect.stringMatching(/already pending/) , requestId: expect.stringMatching(/^req_/) });

    const access = await accessOf(owner, org.id);
    expect(access).toEqual({
      enabled: false,
      riskLevel: 'NONE',
      payloadType: 'FULL',
      requests: [
        {
          id: asked.json().id,
          status: 'pending',
          riskLevel: 'MEDIUM',
          payloadType: 'HALF',
          useCase: 'Loan onboarding',
          decidedRiskLevel: null,
          decidedPayloadType: null,
          declineReason: null,
          createdAt: expect.any(String),
          decidedAt: null,
        },
      ],
    });
    expect((await ctx.app.inject({ method: 'GET', url: '/v1/verifications/addresses', headers: bearer(org.liveSecret) })).statusCode).toBe(403);
    const audit = await auditOf(org.id);
    expect(audit).toEqual([expect.objectContaining({ action: 'access.requested', actor_kind: 'member', actor_id: owner.personId })]);
  });

  it('lets two requests sent at once make one pending request', async () => {
    const { org, owner } = await portalOrg(ctx.database.db, { enabled: false });
    const answers = await Promise.all([1, 2, 3].map(() => ask(owner, org.id, { riskLevel: 'LOW', payloadType: 'FULL' })));
    expect(answers.map((a) => a.statusCode).sort()).toEqual([201, 409, 409]);
    expect((await accessOf(owner, org.id)).requests).toHaveLength(1);
  });

  it('is approved by the account manager with the values in force, mailed to the member who asked', async () => {
    const { org, owner } = await portalOrg(ctx.database.db, { enabled: false });
    const admin = await member(org.id, 'admin');
    const { id } = (await ask(admin, org.id, { riskLevel: 'HIGH', payloadType: 'FULL' })).json();

    // The account manager changes the level and approves (the code path of `vouch org enable`).
    expect(await requests.approve(org.id, { riskLevel: 'MEDIUM', payloadType: 'HALF' }, CLI)).toBe(id);
    await requests.flush();

    const access = await accessOf(owner, org.id);
    expect(access).toMatchObject({ enabled: true, riskLevel: 'MEDIUM', payloadType: 'HALF' });
    expect(access.requests).toEqual([
      expect.objectContaining({ id, status: 'approved', riskLevel: 'HIGH', payloadType: 'FULL', decidedRiskLevel: 'MEDIUM', decidedPayloadType: 'HALF', decidedAt: expect.any(String) }),
    ]);
    const row = await ctx.database.db.selectFrom('access_requests').select(['decided_by', 'requested_by']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(row).toEqual({ decided_by: null, requested_by: admin.personId });
    expect((await ctx.app.inject({ method: 'GET', url: '/v1/verifications/addresses', headers: bearer(org.liveSecret) })).statusCode).toBe(200);

    const audit = await auditOf(org.id);
    expect(audit.map((a) => [a.action, a.actor_kind])).toEqual([
      ['access.requested', 'member'],
      ['access.approved', 'cli'],
    ]);
    expect(audit[1]).toMatchObject({
      actor_id: null,
      before: { enabled: false, riskLevel: 'NONE', payloadType: 'FULL' },
      after: { enabled: true, riskLevel: 'MEDIUM', payloadType: 'HALF' },
    });

    const [mailed] = await listMail(ctx.database.db, { to: admin.email });
    expect(mailed).toMatchObject({ kind: 'access_approved', subject: expect.stringContaining('live Vouch API') });
    expect(mailed!.text).toContain('risk level MEDIUM and identity payload type HALF');
    expect(mailed!.text).toContain('http://127.0.0.1:8080/api-access');
    expect(await listMail(ctx.database.db, { to: owner.email })).toEqual([]);

    // Enabled, the organization may ask again, to change its level.
    const again = await ask(owner, org.id, { riskLevel: 'HIGH', payloadType: 'HALF' });
    expect(again.statusCode).toBe(201);
    expect((await accessOf(owner, org.id)).requests.map((r: { status: string }) => r.status)).toEqual(['pending', 'approved']);
  });

  it('is declined with a reason the customer sees, and may be asked again', async () => {
    const { org, owner } = await portalOrg(ctx.database.db, { enabled: false });
    await ask(owner, org.id, { riskLevel: 'NONE', payloadType: 'FULL' });
    await requests.decline(org.id, '  Tell us your CBN licence number  ', CLI);
    await requests.flush();

    const access = await accessOf(owner, org.id);
    expect(access.enabled).toBe(false);
    expect(access.requests[0]).toMatchObject({ status: 'declined', declineReason: 'Tell us your CBN licence number', decidedRiskLevel: null, decidedAt: expect.any(String) });
    const [mailed] = await listMail(ctx.database.db, { to: owner.email });
    expect(mailed).toMatchObject({ kind: 'access_declined' });
    expect(mailed!.text).toContain('Reason: Tell us your CBN licence number');
    expect((await auditOf(org.id)).at(-1)).toMatchObject({ action: 'access.declined', actor_kind: 'cli', after: { status: 'declined', reason: 'Tell us your CBN licence number' } });

    expect((await ask(owner, org.id, { riskLevel: 'LOW', payloadType: 'FULL' })).statusCode).toBe(201);
  });

  it('mails the owners when the member who asked has left', async () => {
    const { org, owner } = await portalOrg(ctx.database.db, { enabled: false });
    const admin = await member(org.id, 'admin');
    await ask(admin, org.id, { riskLevel: 'LOW', payloadType: 'FULL' });
    await ctx.database.db.deleteFrom('memberships').where('org_id', '=', org.id).where('person_id', '=', admin.personId).execute();
    await requests.decline(org.id, 'Incomplete company details', CLI);
    await requests.flush();
    expect(await listMail(ctx.database.db, { to: admin.email })).toEqual([]);
    expect((await listMail(ctx.database.db, { to: owner.email }))[0]).toMatchObject({ kind: 'access_declined' });
  });

  it('enables an organization that never asked (the command line alone) and mails nobody', async () => {
    const { org, owner } = await portalOrg(ctx.database.db, { enabled: false });
    expect(await requests.approve(org.id, { riskLevel: 'LOW', payloadType: 'FULL' }, CLI)).toBeUndefined();
    expect(await accessOf(owner, org.id)).toMatchObject({ enabled: true, riskLevel: 'LOW', requests: [] });
    expect((await auditOf(org.id)).map((a) => a.action)).toEqual(['access.approved']);
    expect(await listMail(ctx.database.db, { to: owner.email })).toEqual([]);
  });

  it('refuses to decline without a pending request or without a reason', async () => {
    const { org, owner } = await portalOrg(ctx.database.db, { enabled: false });
    await expect(requests.decline(org.id, 'no', CLI)).rejects.toMatchObject({ code: 'NOT_FOUND_ERROR', message: expect.stringMatching(/no pending access request/) });
    await ask(owner, org.id, { riskLevel: 'LOW', payloadType: 'FULL' });
    await expect(requests.decline(org.id, '   ', CLI)).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    await expect(requests.decline(org.id, 'x'.repeat(1001), CLI)).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    expect((await accessOf(owner, org.id)).requests[0].status).toBe('pending');
  });

  it("lists every organization's requests for operators, filtered by status", async () => {
    const { org, owner } = await portalOrg(ctx.database.db, { enabled: false });
    const { id } = (await ask(owner, org.id, { riskLevel: 'LOW', payloadType: 'HALF', useCase: 'Payroll' })).json();
    const pending = await requests.listAll({ status: 'pending', limit: 1000 });
    expect(pending).toContainEqual(expect.objectContaining({ id, orgId: org.id, orgName: org.name, status: 'pending', useCase: 'Payroll' }));
    expect(pending.every((r) => r.status === 'pending')).toBe(true);
    expect(await requests.listAll({ status: 'approved', limit: 1000 })).not.toContainEqual(expect.objectContaining({ id }));
  });
});

describe('who may ask, and bad input', () => {
  it('refuses bad values in style A, naming the field', async () => {
    const { org, owner } = await portalOrg(ctx.database.db, { enabled: false });
    for (const payload of [
      { riskLevel: 'EXTREME', payloadType: 'FULL' },
      { riskLevel: 'LOW' },
      { riskLevel: 'LOW', payloadType: 'QUARTER' },
      { riskLevel: 'LOW', payloadType: 'FULL', useCase: 'x'.repeat(1001) },
      { riskLevel: 'LOW', payloadType: 'FULL', useCase: { text: 'loans' } },
    ]) {
      const res = await ask(owner, org.id, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json()).toMatchObject({ status: 'error', code: 'VALIDATION_ERROR', message: expect.any(String) });
    }
    const notJson = await portal(ctx.app, owner, { method: 'POST', url: `/api/orgs/${org.id}/access-requests`, payload: '{"riskLevel":', headers: { 'content-type': 'application/json' } });
    expect(notJson.statusCode).toBe(400);
    expect((await accessOf(owner, org.id)).requests).toEqual([]);
  });

  it('needs a verified email', async () => {
    const { org, owner } = await portalOrg(ctx.database.db, { enabled: false });
    await ctx.database.db.updateTable('people').set({ email_verified_at: null }).where('id', '=', owner.personId).execute();
    const res = await ask(owner, org.id, { riskLevel: 'LOW', payloadType: 'FULL' });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ status: 'error', code: 'FORBIDDEN', message: expect.stringMatching(/^Verify your email first/) , requestId: expect.stringMatching(/^req_/) });
  });

  it('lets owners and admins ask; developers and viewers only see', async () => {
    const { org } = await portalOrg(ctx.database.db, { enabled: false });
    for (const role of ['developer', 'viewer'] as const) {
      const user = await member(org.id, role);
      expect((await accessOf(user, org.id)).enabled).toBe(false);
      const res = await ask(user, org.id, { riskLevel: 'LOW', payloadType: 'FULL' });
      expect(res.statusCode).toBe(403);
      expect(res.json().message).toMatch(new RegExp(`role \\(${role}\\)`));
      // The role is judged before the body.
      expect((await ask(user, org.id, { riskLevel: 'EXTREME' })).statusCode).toBe(403);
    }
  });

  it("answers 404 for another organization's access and 401 without a session", async () => {
    const { org, owner } = await portalOrg(ctx.database.db, { enabled: false });
    const other = await portalOrg(ctx.database.db);
    expect((await portal(ctx.app, other.owner, { method: 'GET', url: `/api/orgs/${org.id}/access` })).statusCode).toBe(404);
    const foreign = await ask(other.owner, org.id, { riskLevel: 'LOW', payloadType: 'FULL' });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toMatchObject({ status: 'error', code: 'NOT_FOUND_ERROR' });
    expect((await portal(ctx.app, owner, { method: 'GET', url: '/api/orgs/not-a-uuid/access' })).statusCode).toBe(404);
    expect((await portal(ctx.app, undefined, { method: 'GET', url: `/api/orgs/${org.id}/access` })).statusCode).toBe(401);
    expect((await ask(undefined, org.id, { riskLevel: 'LOW', payloadType: 'FULL' })).statusCode).toBe(401);
    expect((await accessOf(owner, org.id)).requests).toEqual([]);
  });
});
