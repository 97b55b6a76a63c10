import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listMail } from '../../src/portal/mail.js';
import { buildTestContext, type TestContext } from '../helpers/app.js';
import { addMember, portal, portalOrg, portalUser, type PortalUser } from '../helpers/portal.js';
import { sansRequestId } from '../helpers/app.js';

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
    // The name is mailed when this person invites others: one line.
    const twoLines = await portal(ctx.app, undefined, { method: 'POST', url: '/api/invitations/accept', payload: { token, name: 'Vee\nhttps://x.example', password: 'viewer password 1' } });
    expect([twoLines.statusCode, twoLines.json().message]).toEqual([400, 'name must be on one line (no line breaks)']);
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
      expect([res.statusCode, sansRequestId(res.json())]).toEqual([status, { status: 'error', code: expect.any(String), message: expect.stringMatching(message) }]);
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

describe("an inviter's standing", () => {
  const invite = (user: PortalUser, orgId: string, email: string, role: string) => portal(ctx.app, user, { method: 'POST', url: `/api/orgs/${orgId}/invitations`, payload: { email, role } });
  const openInvitations = async (user: PortalUser, orgId: string) =>
    (await portal(ctx.app, user, { method: 'GET', url: `/api/orgs/${orgId}/invitations` })).json().data.map((i: { email: string; role: string }) => [i.email, i.role]);
  /** What the link answers when viewed and when accepted as a new person: [status, body] of each. */
  const follow = async (token: string) => {
    const viewed = await portal(ctx.app, undefined, { method: 'GET', url: `/api/invitations/${token}` });
    const accepted = await portal(ctx.app, undefined, { method: 'POST', url: '/api/invitations/accept', payload: { token, name: 'Alt', password: 'alt password 12' } });
    // Alike but for each answer's own request id.
    return [viewed.statusCode, sansRequestId(viewed.json()), accepted.statusCode, sansRequestId(accepted.json())];
  };
  // One change revokes its invitations in no particular order: the rows by address.
  const byTarget = <T extends { target: string | null }>(rows: T[]) => [...rows].sort((a, b) => String(a.target).localeCompare(String(b.target)));
  const revokedAudit = async (orgId: string) =>
    byTarget(await ctx.database.db.selectFrom('audit_events').select(['actor_id', 'target', 'before', 'after']).where('org_id', '=', orgId).where('action', '=', 'invitation.revoked').execute());

  /** An organization with a second owner, promoted by the first, who sent an owner and a viewer invitation. */
  async function promotedInviter() {
    const { org, owner } = await portalOrg(ctx.database.db);
    const inviter = await portalUser(ctx.database.db);
    await addMember(ctx.database.db, org.id, inviter.personId, 'admin');
    expect((await portal(ctx.app, owner, { method: 'PATCH', url: `/api/orgs/${org.id}/members/${inviter.personId}`, payload: { role: 'owner' } })).statusCode).toBe(200);
    const [alt, viewer] = [newEmail(), newEmail()];
    expect((await invite(inviter, org.id, alt, 'owner')).statusCode).toBe(201);
    expect((await invite(inviter, org.id, viewer, 'viewer')).statusCode).toBe(201);
    return { org, owner, inviter, alt, viewer, altToken: await invitationToken(alt), viewerToken: await invitationToken(viewer) };
  }

  it("removing a member revokes the invitations they sent: an owner's invitation no longer makes an owner", async () => {
    const { org, owner, inviter, alt, viewer, altToken, viewerToken } = await promotedInviter();
    // The owner's own invitation stays.
    const kept = newEmail();
    await invite(owner, org.id, kept, 'developer');
    expect((await portal(ctx.app, owner, { method: 'DELETE', url: `/api/orgs/${org.id}/members/${inviter.personId}` })).statusCode).toBe(200);
    expect(await openInvitations(owner, org.id)).toEqual([[kept, 'developer']]);
    const gone = [404, { status: 'error', code: 'NOT_FOUND_ERROR', message: 'This invitation is invalid, already used, revoked or expired: ask for a new one' }];
    expect(await follow(altToken)).toEqual([...gone, ...gone]);
    expect(await follow(viewerToken)).toEqual([...gone, ...gone]);
    const members = (await portal(ctx.app, owner, { method: 'GET', url: `/api/orgs/${org.id}/members` })).json().data;
    expect(members.map((m: { personId: string; role: string }) => [m.personId, m.role])).toEqual([[owner.personId, 'owner']]);
    expect(await revokedAudit(org.id)).toEqual(
      byTarget([
        { actor_id: owner.personId, target: alt, before: { role: 'owner' }, after: { reason: 'member.removed' } },
        { actor_id: owner.personId, target: viewer, before: { role: 'viewer' }, after: { reason: 'member.removed' } },
      ]),
    );
  });

  it('a member who leaves takes their open invitations with them', async () => {
    const { org, owner, inviter, alt, viewer, altToken } = await promotedInviter();
    expect((await portal(ctx.app, inviter, { method: 'DELETE', url: `/api/orgs/${org.id}/members/${inviter.personId}` })).statusCode).toBe(200);
    expect(await openInvitations(owner, org.id)).toEqual([]);
    expect((await follow(altToken))[2]).toBe(404);
    expect(await revokedAudit(org.id)).toEqual(
      byTarget([
        { actor_id: inviter.personId, target: alt, before: { role: 'owner' }, after: { reason: 'member.left' } },
        { actor_id: inviter.personId, target: viewer, before: { role: 'viewer' }, after: { reason: 'member.left' } },
      ]),
    );
  });

  it('a demoted member keeps only the invitations their new role could send', async () => {
    const { org, owner, inviter, alt, viewer, altToken, viewerToken } = await promotedInviter();
    const patch = (role: string) => portal(ctx.app, owner, { method: 'PATCH', url: `/api/orgs/${org.id}/members/${inviter.personId}`, payload: { role } });
    const admins = newEmail();
    await invite(inviter, org.id, admins, 'admin');
    expect((await patch('admin')).statusCode).toBe(200);
    expect((await openInvitations(owner, org.id)).sort()).toEqual([[admins, 'admin'], [viewer, 'viewer']].sort());
    expect((await follow(altToken))[0]).toBe(404);
    // An admin still invites viewers: that link works.
    expect((await portal(ctx.app, undefined, { method: 'POST', url: '/api/invitations/accept', payload: { token: viewerToken, name: 'Vee', password: 'viewer password 1' } })).statusCode).toBe(200);
    // Promoted again, nothing comes back; demoted below team.manage, nothing is left.
    expect((await patch('owner')).statusCode).toBe(200);
    expect((await follow(altToken))[0]).toBe(404);
    expect((await patch('developer')).statusCode).toBe(200);
    expect(await openInvitations(owner, org.id)).toEqual([]);
    expect(await revokedAudit(org.id)).toEqual(
      byTarget([
        { actor_id: owner.personId, target: alt, before: { role: 'owner' }, after: { reason: 'member.role_changed' } },
        { actor_id: owner.personId, target: admins, before: { role: 'admin' }, after: { reason: 'member.role_changed' } },
      ]),
    );
  });

  it('an invitation left open by an inviter who may no longer grant its role answers as a revoked one', async () => {
    // As a change made outside these routes would leave it: the second guard is at the link.
    const { org, inviter, viewer, altToken, viewerToken } = await promotedInviter();
    const revoked = await promotedInviter();
    await portal(ctx.app, revoked.owner, { method: 'DELETE', url: `/api/orgs/${revoked.org.id}/members/${revoked.inviter.personId}` });
    const answer = await follow(revoked.altToken);
    expect([answer[0], answer[2]]).toEqual([404, 404]);

    await ctx.database.db.updateTable('memberships').set({ role: 'admin' }).where('org_id', '=', org.id).where('person_id', '=', inviter.personId).execute();
    expect(await follow(altToken)).toEqual(answer);
    expect((await portal(ctx.app, undefined, { method: 'GET', url: `/api/invitations/${viewerToken}` })).json()).toMatchObject({ email: viewer, role: 'viewer' });
    await ctx.database.db.deleteFrom('memberships').where('org_id', '=', org.id).where('person_id', '=', inviter.personId).execute();
    expect(await follow(viewerToken)).toEqual(answer);
  });
});

describe('team changes at the same time', () => {
  // On PostgreSQL each request runs on its own connection: two owners stepping down together used
  // to lock their own row, then wait for the other's (40P01 deadlock, answered 500).
  const ROUNDS = 12;

  async function twoOwners() {
    const { org, owner: a } = await portalOrg(ctx.database.db);
    const b = await portalUser(ctx.database.db);
    await addMember(ctx.database.db, org.id, b.personId, 'owner');
    const owners = async () => (await ctx.database.db.selectFrom('memberships').select('person_id').where('org_id', '=', org.id).where('role', '=', 'owner').execute()).length;
    const reset = async () => {
      await ctx.database.db.deleteFrom('memberships').where('org_id', '=', org.id).execute();
      await addMember(ctx.database.db, org.id, a.personId, 'owner');
      await addMember(ctx.database.db, org.id, b.personId, 'owner');
    };
    return { org, a, b, owners, reset };
  }

  it('two owners stepping down or leaving together: one does, the other is the last owner (409), never a 500', async () => {
    const { org, a, b, owners, reset } = await twoOwners();
    const patch = (user: PortalUser, personId: string, role: string) => portal(ctx.app, user, { method: 'PATCH', url: `/api/orgs/${org.id}/members/${personId}`, payload: { role } });
    const remove = (user: PortalUser, personId: string) => portal(ctx.app, user, { method: 'DELETE', url: `/api/orgs/${org.id}/members/${personId}` });
    for (let round = 0; round < ROUNDS; round++) {
      await reset();
      const demoted = await Promise.all([patch(a, a.personId, 'admin'), patch(b, b.personId, 'admin')]);
      expect(demoted.map((res) => res.statusCode).sort()).toEqual([200, 409]);
      expect(await owners()).toBe(1);
      await reset();
      const left = await Promise.all([remove(a, a.personId), remove(b, b.personId)]);
      expect(left.map((res) => res.statusCode).sort()).toEqual([200, 409]);
      expect(await owners()).toBe(1);
    }
    expect(ctx.logs.join('')).not.toMatch(/deadlock detected/);
  });

  it('two owners demoting or removing each other together: the second finds itself no longer an owner (403)', async () => {
    const { org, a, b, owners, reset } = await twoOwners();
    const patch = (user: PortalUser, personId: string, role: string) => portal(ctx.app, user, { method: 'PATCH', url: `/api/orgs/${org.id}/members/${personId}`, payload: { role } });
    const remove = (user: PortalUser, personId: string) => portal(ctx.app, user, { method: 'DELETE', url: `/api/orgs/${org.id}/members/${personId}` });
    for (let round = 0; round < ROUNDS; round++) {
      await reset();
      const demoted = await Promise.all([patch(a, b.personId, 'admin'), patch(b, a.personId, 'admin')]);
      expect(demoted.map((res) => res.statusCode).sort()).toEqual([200, 403]);
      expect(await owners()).toBe(1);
      await reset();
      // The loser was removed meanwhile: no longer a member, 404 as for any other organization.
      const removed = await Promise.all([remove(a, b.personId), remove(b, a.personId)]);
      expect(removed.map((res) => res.statusCode).sort()).toEqual([200, 404]);
      expect(await owners()).toBe(1);
    }
    expect(ctx.logs.join('')).not.toMatch(/deadlock detected/);
  });
});
