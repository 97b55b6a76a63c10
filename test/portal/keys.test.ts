import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountsService } from '../../src/accounts/service.js';
import { invalidateAuthCache } from '../../src/platform/auth.js';
import type { Mode } from '../../src/platform/db/schema.js';
import { AccessRequests } from '../../src/portal/access/service.js';
import { bearer, buildTestContext, type TestContext } from '../helpers/app.js';
import { addMember, portal, portalOrg, portalUser, type PortalUser } from '../helpers/portal.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await buildTestContext();
});
afterAll(() => ctx.close());

const TEST_BVN = '/v1/verifications/identities/bvn/22345678901';

const hint = (secret: string) => `${secret.slice(0, 8)}…${secret.slice(-4)}`;

interface KeyView {
  mode: Mode;
  hint: string;
  createdAt: string;
  lastUsedAt: string | null;
  value: string | null;
  previous: { hint: string; expiresAt: string; lastUsedAt: string | null } | null;
}

async function keysOf(user: PortalUser, orgId: string): Promise<Record<Mode, KeyView>> {
  const res = await portal(ctx.app, user, { method: 'GET', url: `/api/orgs/${orgId}/keys` });
  expect(res.statusCode).toBe(200);
  const data = res.json().data as KeyView[];
  expect(data.map((k) => k.mode)).toEqual(['test', 'live']);
  return { test: data[0]!, live: data[1]! };
}

function roll(user: PortalUser | undefined, orgId: string, mode: string, payload: object) {
  return portal(ctx.app, user, { method: 'POST', url: `/api/orgs/${orgId}/keys/${mode}/roll`, payload });
}

/** A /v1 call with the secret, past the auth cache (so a revoked secret is looked up again). */
async function statusWith(secret: string): Promise<number> {
  invalidateAuthCache();
  return (await ctx.app.inject({ method: 'GET', url: '/v1/verifications/addresses', headers: bearer(secret) })).statusCode;
}

/** Ends every overlap of the organization's mode now, as if the hours had passed. */
async function endOverlap(orgId: string, mode: Mode): Promise<void> {
  await ctx.database.db
    .updateTable('api_secrets')
    .set({ revoked_at: new Date(Date.now() - 1000) })
    .where('org_id', '=', orgId)
    .where('mode', '=', mode)
    .where('revoked_at', 'is not', null)
    .execute();
}

async function member(orgId: string, role: 'admin' | 'developer' | 'viewer'): Promise<PortalUser> {
  const user = await portalUser(ctx.database.db);
  await addMember(ctx.database.db, orgId, user.personId, role);
  return user;
}

describe('showing the keys', () => {
  it('shows the test secret to owners, admins and developers; the live one only as a hint', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    for (const user of [owner, await member(org.id, 'admin'), await member(org.id, 'developer')]) {
      const keys = await keysOf(user, org.id);
      expect(keys.test).toEqual({ mode: 'test', hint: hint(org.testSecret), createdAt: expect.any(String), lastUsedAt: null, value: org.testSecret, previous: null });
      expect(keys.live).toEqual({ mode: 'live', hint: hint(org.liveSecret), createdAt: expect.any(String), lastUsedAt: null, value: null, previous: null });
    }
  });

  it('shows a viewer hints only', async () => {
    const { org } = await portalOrg(ctx.database.db);
    const viewer = await member(org.id, 'viewer');
    const res = await portal(ctx.app, viewer, { method: 'GET', url: `/api/orgs/${org.id}/keys` });
    expect(res.statusCode).toBe(200);
    expect(res.body).not.toContain(org.testSecret);
    expect(res.body).not.toContain(org.liveSecret);
    expect(res.json().data.map((k: KeyView) => [k.hint, k.value])).toEqual([
      [hint(org.testSecret), null],
      [hint(org.liveSecret), null],
    ]);
  });

  it('moves "last used" after a /v1 call with the secret', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    invalidateAuthCache();
    const before = Date.now();
    expect((await ctx.app.inject({ method: 'POST', url: TEST_BVN, headers: bearer(org.testSecret), payload: { lastname: 'Okonkwo' } })).statusCode).toBe(200);
    // Written off the request's path: it lands a moment later.
    await expect.poll(async () => (await keysOf(owner, org.id)).test.lastUsedAt, { timeout: 5_000 }).not.toBeNull();
    const keys = await keysOf(owner, org.id);
    expect(new Date(keys.test.lastUsedAt!).getTime()).toBeGreaterThanOrEqual(before - 1000);
    expect(keys.live.lastUsedAt).toBeNull();

    invalidateAuthCache();
    await ctx.app.inject({ method: 'GET', url: '/v1/verifications/addresses', headers: bearer(org.liveSecret) });
    await expect.poll(async () => (await keysOf(owner, org.id)).live.lastUsedAt, { timeout: 5_000 }).not.toBeNull();
  });

  it("answers 404 for another organization's keys and 401 without a session", async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    const other = await portalOrg(ctx.database.db);
    const foreign = await portal(ctx.app, other.owner, { method: 'GET', url: `/api/orgs/${org.id}/keys` });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.body).not.toContain(org.testSecret);
    expect((await portal(ctx.app, undefined, { method: 'GET', url: `/api/orgs/${org.id}/keys` })).statusCode).toBe(401);
    expect((await portal(ctx.app, owner, { method: 'GET', url: `/api/orgs/${org.id.toUpperCase()}x/keys` })).statusCode).toBe(404);
  });
});

describe('rolling a secret', () => {
  it('rolls the live secret with an overlap: the new one is shown once, both work until the overlap ends', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    const res = await roll(owner, org.id, 'live', { overlapHours: 1 });
    expect(res.statusCode).toBe(200);
    const rolled = res.json();
    expect(rolled).toEqual({
      mode: 'live',
      secret: expect.stringMatching(/^sk_live_[A-Za-z0-9_-]{43}$/),
      hint: hint(rolled.secret),
      previousHint: hint(org.liveSecret),
      previousExpiresAt: expect.any(String),
    });
    const hourLeft = new Date(rolled.previousExpiresAt).getTime() - Date.now();
    expect(hourLeft).toBeGreaterThan(3_590_000);
    expect(hourLeft).toBeLessThanOrEqual(3_600_000);

    const list = await portal(ctx.app, owner, { method: 'GET', url: `/api/orgs/${org.id}/keys` });
    expect(list.body).not.toContain(rolled.secret);
    const { live } = await keysOf(owner, org.id);
    expect(live).toMatchObject({ hint: hint(rolled.secret), value: null, previous: { hint: hint(org.liveSecret), expiresAt: rolled.previousExpiresAt, lastUsedAt: null } });

    expect(await statusWith(org.liveSecret)).toBe(200);
    expect(await statusWith(rolled.secret)).toBe(200);
    // The old secret's use during the overlap shows on its line.
    await expect.poll(async () => (await keysOf(owner, org.id)).live.previous?.lastUsedAt, { timeout: 5_000 }).not.toBeNull();

    await endOverlap(org.id, 'live');
    expect(await statusWith(org.liveSecret)).toBe(401);
    expect(await statusWith(rolled.secret)).toBe(200);
    expect((await keysOf(owner, org.id)).live.previous).toBeNull();
  });

  it('rolls the test secret at once: the old one stops, the new one is the value shown', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    const rolled = (await roll(owner, org.id, 'test', { overlapHours: 0 })).json();
    expect(rolled.secret).toMatch(/^sk_test_/);
    expect(new Date(rolled.previousExpiresAt).getTime()).toBeLessThanOrEqual(Date.now());
    invalidateAuthCache();
    expect((await ctx.app.inject({ method: 'POST', url: TEST_BVN, headers: bearer(org.testSecret), payload: { lastname: 'Okonkwo' } })).statusCode).toBe(401);
    expect((await ctx.app.inject({ method: 'POST', url: TEST_BVN, headers: bearer(rolled.secret), payload: { lastname: 'Okonkwo' } })).statusCode).toBe(200);
    const { test } = await keysOf(owner, org.id);
    expect(test).toMatchObject({ value: rolled.secret, hint: hint(rolled.secret), previous: null });
    // The old value is not kept readable.
    const kept = await ctx.database.db.selectFrom('api_secrets').select('test_value').where('org_id', '=', org.id).where('mode', '=', 'test').execute();
    expect(kept.map((row) => row.test_value).filter(Boolean)).toEqual([rolled.secret]);
  });

  it('defaults to no overlap', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    expect((await roll(owner, org.id, 'live', {})).statusCode).toBe(200);
    expect(await statusWith(org.liveSecret)).toBe(401);
  });

  it('keeps one old secret at a time: a second roll ends the first overlap at once', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    const first = (await roll(owner, org.id, 'live', { overlapHours: 24 })).json();
    const second = (await roll(owner, org.id, 'live', { overlapHours: 12 })).json();
    expect(await statusWith(org.liveSecret)).toBe(401);
    expect(await statusWith(first.secret)).toBe(200);
    expect(await statusWith(second.secret)).toBe(200);
    expect((await keysOf(owner, org.id)).live.previous).toMatchObject({ hint: hint(first.secret), expiresAt: second.previousExpiresAt });
  });

  it('rolls the live secret of an organization not yet enabled; it works once access is approved', async () => {
    const { org, owner } = await portalOrg(ctx.database.db, { enabled: false });
    const rolled = (await roll(owner, org.id, 'live', { overlapHours: 0 })).json();
    expect(await statusWith(rolled.secret)).toBe(403);
    await new AccessRequests(ctx.database.db).approve(org.id, { riskLevel: 'LOW', payloadType: 'FULL' }, { kind: 'cli' });
    expect(await statusWith(rolled.secret)).toBe(200);
  });

  it('writes who rolled it to the secret and the audit log, never the secret itself', async () => {
    const { org } = await portalOrg(ctx.database.db);
    const developer = await member(org.id, 'developer');
    const rolled = (await roll(developer, org.id, 'live', { overlapHours: 1 })).json();
    const row = await ctx.database.db.selectFrom('api_secrets').select(['created_by', 'test_value']).where('org_id', '=', org.id).where('mode', '=', 'live').where('revoked_at', 'is', null).executeTakeFirstOrThrow();
    expect(row).toEqual({ created_by: developer.personId, test_value: null });
    const audit = await ctx.database.db.selectFrom('audit_events').selectAll().where('org_id', '=', org.id).execute();
    expect(audit).toEqual([
      expect.objectContaining({
        action: 'secret.rolled',
        actor_kind: 'member',
        actor_id: developer.personId,
        target: 'live secret',
        before: { hint: hint(org.liveSecret) },
        after: { hint: hint(rolled.secret), previousExpiresAt: rolled.previousExpiresAt },
      }),
    ]);
    expect(JSON.stringify(audit)).not.toContain(rolled.secret);
    expect(JSON.stringify(audit)).not.toContain(org.liveSecret);
  });

  it('refuses overlaps outside 0 to 24 whole hours and unknown modes, changing nothing', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    for (const payload of [{ overlapHours: 25 }, { overlapHours: -1 }, { overlapHours: 1.5 }, { overlapHours: 'soon' }]) {
      const res = await roll(owner, org.id, 'live', payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json()).toMatchObject({ status: 'error', code: 'VALIDATION_ERROR' });
    }
    expect((await roll(owner, org.id, 'prod', { overlapHours: 0 })).statusCode).toBe(400);
    expect(await statusWith(org.liveSecret)).toBe(200);
    expect((await keysOf(owner, org.id)).live.hint).toBe(hint(org.liveSecret));
  });

  it('refuses a viewer (before judging the body), other organizations and callers without a session', async () => {
    const { org } = await portalOrg(ctx.database.db);
    const viewer = await member(org.id, 'viewer');
    for (const mode of ['test', 'live']) {
      const res = await roll(viewer, org.id, mode, { overlapHours: 0 });
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ status: 'error', code: 'FORBIDDEN' });
    }
    expect((await roll(viewer, org.id, 'live', { overlapHours: 99 })).statusCode).toBe(403);
    const other = await portalOrg(ctx.database.db);
    expect((await roll(other.owner, org.id, 'live', { overlapHours: 0 })).statusCode).toBe(404);
    expect((await roll(undefined, org.id, 'live', { overlapHours: 0 })).statusCode).toBe(401);
    expect(await statusWith(org.liveSecret)).toBe(200);
    expect(await statusWith(org.testSecret)).toBe(200);
  });
});

describe('the accounts service behind it', () => {
  it('keeps the command line rotate-secret immediate', async () => {
    const org = await ctx.org();
    const fresh = await ctx.accounts.rotateSecret(org.id, 'live');
    expect(await statusWith(org.liveSecret)).toBe(401);
    expect(await statusWith(fresh)).toBe(200);
  });

  it('measures the overlap from its clock', async () => {
    const org = await ctx.org();
    // A roll two hours ago with a one-hour overlap: the old secret stopped an hour ago.
    const past = new AccountsService(ctx.database.db, { now: () => new Date(Date.now() - 2 * 3_600_000) });
    const rolled = await past.rollSecret(org.id, 'live', { overlapHours: 1 });
    expect(rolled.previousExpiresAt.getTime()).toBeLessThan(Date.now() - 3_500_000);
    expect(await statusWith(org.liveSecret)).toBe(401);
    expect(await statusWith(rolled.secret)).toBe(200);
    await expect(ctx.accounts.rollSecret(org.id, 'live', { overlapHours: 25 })).rejects.toThrow(/0 to 24/);
  });
});
