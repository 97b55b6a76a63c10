import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listMail } from '../../src/portal/mail.js';
import { buildTestContext, type TestContext } from '../helpers/app.js';
import { addMember, portal, portalOrg, portalUser } from '../helpers/portal.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await buildTestContext();
});
afterAll(() => ctx.close());

let n = 0;
const newEmail = () => `member${++n}-${Date.now()}@example.com`;

async function invitationToken(to: string): Promise<string> {
  const [mail] = await listMail(ctx.database.db, { to, limit: 1 });
  return /invitations\/accept\?token=([A-Za-z0-9_-]+)/.exec(mail?.text ?? '')![1]!;
}

describe('team', () => {
  it('invites by email; the invited person makes an account from the link and joins with the role', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    const email = newEmail();
    const invite = await portal(ctx.app, owner, { method: 'POST', url: `/api/orgs/${org.id}/invitations`, payload: { email, role: 'viewer' } });
    expect(invite.statusCode).toBe(201);
    const dup = await portal(ctx.app, owner, { method: 'POST', url: `/api/orgs/${org.id}/invitations`, payload: { email, role: 'admin' } });
    expect(dup.statusCode).toBe(409);
    expect((await portal(ctx.app, owner, { method: 'GET', url: `/api/orgs/${org.id}/invitations` })).json().data).toEqual([expect.objectContaining({ email, role: 'viewer' })]);

    const token = await invitationToken(email);
    const info = await portal(ctx.app, undefined, { method: 'GET', url: `/api/invitations/${token}` });
    expect(info.json()).toEqual({ orgName: org.name, email, role: 'viewer', hasAccount: false });
    const weak = await portal(ctx.app, undefined, { method: 'POST', url: '/api/invitations/accept', payload: { token, name: 'Vee', password: 'short' } });
    expect(weak.statusCode).toBe(400);
    const accept = await portal(ctx.app, undefined, { method: 'POST', url: '/api/invitations/accept', payload: { token, name: 'Vee Viewer', password: 'viewer password 1' } });
    expect(accept.statusCode).toBe(200);
    const cookie = /vouch_session=([^;]+)/.exec(String(accept.headers['set-cookie']))![0];
    const me = (await portal(ctx.app, { cookie }, { method: 'GET', url: '/api/me' })).json();
    expect(me.person).toMatchObject({ email, emailVerified: true });
    expect(me.memberships).toEqual([expect.objectContaining({ orgId: org.id, role: 'viewer' })]);
    expect((await portal(ctx.app, undefined, { method: 'POST', url: '/api/invitations/accept', payload: { token, name: 'X', password: 'viewer password 1' } })).statusCode).toBe(404);

    const members = (await portal(ctx.app, owner, { method: 'GET', url: `/api/orgs/${org.id}/members` })).json().data;
    expect(members.map((m: { role: string }) => m.role)).toEqual(['owner', 'viewer']);
    // A viewer cannot invite.
    expect((await portal(ctx.app, { cookie }, { method: 'POST', url: `/api/orgs/${org.id}/invitations`, payload: { email: newEmail(), role: 'viewer' } })).statusCode).toBe(403);
  });

  it('an existing person accepts while signed in as the invited email only', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    const existing = await portalUser(ctx.database.db);
    const stranger = await portalUser(ctx.database.db);
    await portal(ctx.app, owner, { method: 'POST', url: `/api/orgs/${org.id}/invitations`, payload: { email: existing.email, role: 'developer' } });
    const token = await invitationToken(existing.email);
    expect((await portal(ctx.app, undefined, { method: 'GET', url: `/api/invitations/${token}` })).json().hasAccount).toBe(true);
    expect((await portal(ctx.app, undefined, { method: 'POST', url: '/api/invitations/accept', payload: { token } })).statusCode).toBe(401);
    expect((await portal(ctx.app, stranger, { method: 'POST', url: '/api/invitations/accept', payload: { token } })).statusCode).toBe(403);
    expect((await portal(ctx.app, existing, { method: 'POST', url: '/api/invitations/accept', payload: { token } })).statusCode).toBe(200);
    const me = (await portal(ctx.app, existing, { method: 'GET', url: '/api/me' })).json();
    expect(me.memberships).toEqual([expect.objectContaining({ orgId: org.id, role: 'developer' })]);
  });

  it('revokes an invitation: its link stops working', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    const email = newEmail();
    const { id } = (await portal(ctx.app, owner, { method: 'POST', url: `/api/orgs/${org.id}/invitations`, payload: { email, role: 'admin' } })).json();
    const token = await invitationToken(email);
    expect((await portal(ctx.app, owner, { method: 'DELETE', url: `/api/orgs/${org.id}/invitations/${id}` })).statusCode).toBe(200);
    expect((await portal(ctx.app, undefined, { method: 'GET', url: `/api/invitations/${token}` })).statusCode).toBe(404);
  });

  it('enforces the owner rules: admins cannot touch owners, the last owner stays', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    const admin = await portalUser(ctx.database.db);
    const dev = await portalUser(ctx.database.db);
    await addMember(ctx.database.db, org.id, admin.personId, 'admin');
    await addMember(ctx.database.db, org.id, dev.personId, 'developer');
    const patch = (user: typeof owner, personId: string, role: string) =>
      portal(ctx.app, user, { method: 'PATCH', url: `/api/orgs/${org.id}/members/${personId}`, payload: { role } });
    expect((await patch(admin, dev.personId, 'viewer')).statusCode).toBe(200);
    expect((await patch(admin, dev.personId, 'owner')).statusCode).toBe(403);
    expect((await patch(admin, owner.personId, 'admin')).statusCode).toBe(403);
    expect((await portal(ctx.app, admin, { method: 'POST', url: `/api/orgs/${org.id}/invitations`, payload: { email: newEmail(), role: 'owner' } })).statusCode).toBe(403);
    expect((await patch(owner, owner.personId, 'admin')).statusCode).toBe(409);
    expect((await portal(ctx.app, owner, { method: 'DELETE', url: `/api/orgs/${org.id}/members/${owner.personId}` })).statusCode).toBe(409);
    expect((await patch(owner, dev.personId, 'superuser')).statusCode).toBe(400);
    expect((await patch(owner, '00000000-0000-0000-0000-000000000000', 'viewer')).statusCode).toBe(404);
    const audit = await ctx.database.db.selectFrom('audit_events').select(['action', 'before', 'after']).where('org_id', '=', org.id).execute();
    expect(audit).toEqual([expect.objectContaining({ action: 'member.role_changed', before: { role: 'developer' }, after: { role: 'viewer' } })]);
  });

  it('a removed member loses access at once; other organizations answer 404', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    const dev = await portalUser(ctx.database.db);
    await addMember(ctx.database.db, org.id, dev.personId, 'developer');
    expect((await portal(ctx.app, dev, { method: 'GET', url: `/api/orgs/${org.id}/keys` })).statusCode).toBe(200);
    expect((await portal(ctx.app, owner, { method: 'DELETE', url: `/api/orgs/${org.id}/members/${dev.personId}` })).statusCode).toBe(200);
    expect((await portal(ctx.app, dev, { method: 'GET', url: `/api/orgs/${org.id}/keys` })).statusCode).toBe(404);
    expect((await portal(ctx.app, dev, { method: 'GET', url: `/api/orgs/${org.id}/members` })).statusCode).toBe(404);
    const other = await portalOrg(ctx.database.db);
    expect((await portal(ctx.app, other.owner, { method: 'GET', url: `/api/orgs/${org.id}/members` })).statusCode).toBe(404);
    expect((await portal(ctx.app, other.owner, { method: 'DELETE', url: `/api/orgs/${org.id}/members/${owner.personId}` })).statusCode).toBe(404);
  });

  it('a member may leave', async () => {
    const { org } = await portalOrg(ctx.database.db);
    const viewer = await portalUser(ctx.database.db);
    await addMember(ctx.database.db, org.id, viewer.personId, 'viewer');
    expect((await portal(ctx.app, viewer, { method: 'DELETE', url: `/api/orgs/${org.id}/members/${viewer.personId}` })).statusCode).toBe(200);
    expect((await portal(ctx.app, viewer, { method: 'GET', url: '/api/me' })).json().memberships).toEqual([]);
  });

  it('refuses bad invitations in style A, naming the field', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    const member = await portalUser(ctx.database.db);
    await addMember(ctx.database.db, org.id, member.personId, 'developer');
    const invite = (user: typeof owner | undefined, payload: Record<string, string>) => portal(ctx.app, user, { method: 'POST', url: `/api/orgs/${org.id}/invitations`, payload });
    const cases = [
      [owner, { email: 'not an email', role: 'viewer' }, 400, /^email must be an email address/],
      [owner, { email: newEmail(), role: 'superuser' }, 400, /^role/],
      [owner, { email: newEmail() }, 400, /^role is required/],
      [owner, { email: member.email.toUpperCase(), role: 'viewer' }, 409, /is already a member/],
      [member, { email: newEmail(), role: 'viewer' }, 403, /Your role \(developer\) does not allow this/],
      [undefined, { email: newEmail(), role: 'viewer' }, 401, /Sign in/],
    ] as const;
    for (const [user, payload, status, message] of cases) {
      const res = await invite(user, payload);
      expect([res.statusCode, res.json()]).toEqual([status, { status: 'error', code: expect.any(String), message: expect.stringMatching(message) }]);
    }
  });

  it("another organization's members, invitations and ids answer 404", async () => {
    const a = await portalOrg(ctx.database.db);
    const b = await portalOrg(ctx.database.db);
    const { id } = (await portal(ctx.app, a.owner, { method: 'POST', url: `/api/orgs/${a.org.id}/invitations`, payload: { email: newEmail(), role: 'viewer' } })).json();
    const calls = [
      ['GET', `/api/orgs/${a.org.id}/invitations`, undefined],
      ['POST', `/api/orgs/${a.org.id}/invitations`, { email: newEmail(), role: 'viewer' }],
      ['DELETE', `/api/orgs/${a.org.id}/invitations/${id}`, undefined],
      ['PATCH', `/api/orgs/${a.org.id}/members/${a.owner.personId}`, { role: 'viewer' }],
      ['DELETE', `/api/orgs/${b.org.id}/invitations/${id}`, undefined],
      ['DELETE', `/api/orgs/${b.org.id}/invitations/not-a-uuid`, undefined],
      ['PATCH', `/api/orgs/${b.org.id}/members/${a.owner.personId}`, { role: 'viewer' }],
      ['GET', `/api/orgs/not-a-uuid/members`, undefined],
    ] as const;
    for (const [method, url, payload] of calls) {
      const res = await portal(ctx.app, b.owner, { method, url, ...(payload ? { payload } : {}) });
      expect([method, url, res.statusCode]).toEqual([method, url, 404]);
    }
    // The invitation is still open in its own organization.
    expect((await portal(ctx.app, a.owner, { method: 'GET', url: `/api/orgs/${a.org.id}/invitations` })).json().data).toHaveLength(1);
  });

  it('an expired invitation is gone: the link answers 404 with what to do', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    const email = newEmail();
    await portal(ctx.app, owner, { method: 'POST', url: `/api/orgs/${org.id}/invitations`, payload: { email, role: 'viewer' } });
    const token = await invitationToken(email);
    await ctx.database.db.updateTable('invitations').set({ expires_at: new Date(Date.now() - 1000) }).where('email', '=', email).execute();
    const info = await portal(ctx.app, undefined, { method: 'GET', url: `/api/invitations/${token}` });
    expect([info.statusCode, info.json().message]).toEqual([404, expect.stringMatching(/expired: ask for a new one/)]);
    expect((await portal(ctx.app, undefined, { method: 'POST', url: '/api/invitations/accept', payload: { token, name: 'Late', password: 'late password 1' } })).statusCode).toBe(404);
    expect((await portal(ctx.app, owner, { method: 'GET', url: `/api/orgs/${org.id}/invitations` })).json().data).toEqual([]);
    // A new invitation to the same address can be sent.
    expect((await portal(ctx.app, owner, { method: 'POST', url: `/api/orgs/${org.id}/invitations`, payload: { email, role: 'viewer' } })).statusCode).toBe(201);
  });

  it('owners hand the owner role on; admins manage everyone but owners; viewers only leave', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    const [admin, dev, viewer, next] = await Promise.all([1, 2, 3, 4].map(() => portalUser(ctx.database.db)));
    await addMember(ctx.database.db, org.id, admin!.personId, 'admin');
    await addMember(ctx.database.db, org.id, dev!.personId, 'developer');
    await addMember(ctx.database.db, org.id, viewer!.personId, 'viewer');
    await addMember(ctx.database.db, org.id, next!.personId, 'developer');
    const remove = (user: typeof owner, personId: string) => portal(ctx.app, user, { method: 'DELETE', url: `/api/orgs/${org.id}/members/${personId}` });
    const patch = (user: typeof owner, personId: string, role: string) => portal(ctx.app, user, { method: 'PATCH', url: `/api/orgs/${org.id}/members/${personId}`, payload: { role } });

    expect((await remove(viewer!, dev!.personId)).statusCode).toBe(403);
    expect((await patch(viewer!, dev!.personId, 'viewer')).statusCode).toBe(403);
    expect((await remove(admin!, owner.personId)).statusCode).toBe(403);
    expect((await remove(admin!, dev!.personId)).statusCode).toBe(200);
    expect((await patch(owner, next!.personId, 'owner')).statusCode).toBe(200);
    // Two owners: either may now step down or be removed by the other.
    expect((await patch(next!, owner.personId, 'admin')).statusCode).toBe(200);
    expect((await remove(next!, next!.personId)).statusCode).toBe(409);
    const members = (await portal(ctx.app, next!, { method: 'GET', url: `/api/orgs/${org.id}/members` })).json().data;
    // Members added in the same instant come in either order.
    const byId = (a: unknown[], b: unknown[]) => String(a[0]).localeCompare(String(b[0]));
    expect(members.map((m: { personId: string; role: string; you: boolean }) => [m.personId, m.role, m.you]).sort(byId)).toEqual(
      [
        [owner.personId, 'admin', false],
        [admin!.personId, 'admin', false],
        [viewer!.personId, 'viewer', false],
        [next!.personId, 'owner', true],
      ].sort(byId),
    );
  });

  it('writes who did what, before and after, for every change', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    const email = newEmail();
    const { id } = (await portal(ctx.app, owner, { method: 'POST', url: `/api/orgs/${org.id}/invitations`, payload: { email, role: 'viewer' } })).json();
    await portal(ctx.app, owner, { method: 'DELETE', url: `/api/orgs/${org.id}/invitations/${id}` });
    await portal(ctx.app, owner, { method: 'POST', url: `/api/orgs/${org.id}/invitations`, payload: { email, role: 'developer' } });
    const token = await invitationToken(email);
    const accepted = await portal(ctx.app, undefined, { method: 'POST', url: '/api/invitations/accept', payload: { token, name: 'Dev', password: 'developer password' } });
    const cookie = /vouch_session=[^;]+/.exec(String(accepted.headers['set-cookie']))![0];
    const { personId } = (await portal(ctx.app, owner, { method: 'GET', url: `/api/orgs/${org.id}/members` })).json().data.find((m: { email: string }) => m.email === email);
    await portal(ctx.app, owner, { method: 'PATCH', url: `/api/orgs/${org.id}/members/${personId}`, payload: { role: 'admin' } });
    await portal(ctx.app, { cookie }, { method: 'DELETE', url: `/api/orgs/${org.id}/members/${personId}` });
    const rows = await ctx.database.db.selectFrom('audit_events').select(['actor_id', 'actor_kind', 'action', 'target', 'before', 'after']).where('org_id', '=', org.id).orderBy('id').execute();
    expect(rows).toEqual([
      { actor_id: owner.personId, actor_kind: 'member', action: 'member.invited', target: email, before: null, after: { role: 'viewer' } },
      { actor_id: owner.personId, actor_kind: 'member', action: 'invitation.revoked', target: email, before: { role: 'viewer' }, after: null },
      { actor_id: owner.personId, actor_kind: 'member', action: 'member.invited', target: email, before: null, after: { role: 'developer' } },
      { actor_id: personId, actor_kind: 'member', action: 'member.joined', target: email, before: null, after: { role: 'developer' } },
      { actor_id: owner.personId, actor_kind: 'member', action: 'member.role_changed', target: personId, before: { role: 'developer' }, after: { role: 'admin' } },
      { actor_id: personId, actor_kind: 'member', action: 'member.left', target: personId, before: { role: 'admin' }, after: null },
    ]);
  });
});
