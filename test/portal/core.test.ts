import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, type TestContext } from '../helpers/app.js';
import { addMember, portal, portalOrg, portalUser } from '../helpers/portal.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await buildTestContext();
});
afterAll(() => ctx.close());

describe('portal sessions and CSRF', () => {
  it('answers /api/me with the person and their memberships', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    const res = await portal(ctx.app, owner, { method: 'GET', url: '/api/me' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.person.email).toBe(owner.email);
    expect(body.memberships).toEqual([
      expect.objectContaining({ orgId: org.id, orgName: org.name, role: 'owner', enabled: true }),
    ]);
    expect(body.memberships[0].permissions).toContain('team.manage');
  });

  it('answers 401 in style A without a session or with an unknown cookie', async () => {
    for (const cookie of [undefined, 'vouch_session=nope', `vouch_session=${'a'.repeat(43)}`]) {
      const res = await ctx.app.inject({ method: 'GET', url: '/api/me', headers: cookie ? { cookie } : {} });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ status: 'error', code: 'ACCESS_DENIED', message: expect.stringContaining('Sign in') , requestId: expect.stringMatching(/^req_/) });
    }
  });

  it('refuses state-changing calls from a foreign Origin or without JSON', async () => {
    const user = await portalUser(ctx.database.db);
    const foreign = await ctx.app.inject({
      method: 'POST',
      url: '/api/me',
      headers: { cookie: user.cookie, origin: 'https://evil.example', 'content-type': 'application/json' },
      payload: '{}',
    });
    expect(foreign.statusCode).toBe(403);
    expect(foreign.json().code).toBe('FORBIDDEN');
    const missing = await ctx.app.inject({ method: 'POST', url: '/api/me', headers: { cookie: user.cookie, 'content-type': 'application/json' }, payload: '{}' });
    expect(missing.statusCode).toBe(403);
    // The Origin is compared whole: the same host with the other scheme, or another port, is another site.
    for (const origin of ['https://portal.example:8443', 'https://127.0.0.1:8080', 'http://127.0.0.1:8081']) {
      const near = await ctx.app.inject({ method: 'POST', url: '/api/me', headers: { cookie: user.cookie, origin, host: 'portal.example:8443', 'content-type': 'application/json' }, payload: '{}' });
      expect(near.statusCode, origin).toBe(403);
    }
    const reachedAt = await ctx.app.inject({ method: 'POST', url: '/api/me', headers: { cookie: user.cookie, origin: 'http://portal.example:8443', host: 'portal.example:8443', 'content-type': 'application/json' }, payload: '{}' });
    expect(reachedAt.statusCode).not.toBe(403);
    const form = await ctx.app.inject({
      method: 'POST',
      url: '/api/me',
      headers: { cookie: user.cookie, origin: 'http://127.0.0.1:8080', 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'a=b',
    });
    expect(form.statusCode).toBe(415);
    expect(form.json().status).toBe('error');
  });

  it('lists only the memberships of the signed-in person', async () => {
    const a = await portalOrg(ctx.database.db);
    const b = await portalOrg(ctx.database.db);
    await addMember(ctx.database.db, b.org.id, a.owner.personId, 'viewer');
    const res = await portal(ctx.app, a.owner, { method: 'GET', url: '/api/me' });
    const roles = Object.fromEntries(res.json().memberships.map((m: { orgId: string; role: string }) => [m.orgId, m.role]));
    expect(roles).toEqual({ [a.org.id]: 'owner', [b.org.id]: 'viewer' });
  });
});
