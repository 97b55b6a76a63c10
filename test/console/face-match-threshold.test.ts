import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MEASURED_THRESHOLDS } from '../../src/identities/biometrics/measured-thresholds.js';
import { MATCH_SCORE_BOUNDS } from '../../src/identities/biometrics/score.js';
import { buildTestContext, type TestContext } from '../helpers/app.js';
import { operatorUser, portal, portalOrg, type PortalUser } from '../helpers/portal.js';

/**
 * An organization's face-match threshold in the console (issue 50): operators read it with the
 * measured error rates beside it, set it within the bounds (audited), reset it to the default,
 * and a value out of bounds or not whole is refused in the console's style (A). One
 * organization's setting is its own. What the setting does to matches is
 * test/identities/biometrics-threshold.test.ts.
 */
let ctx: TestContext;
let operator: PortalUser;

beforeAll(async () => {
  ctx = await buildTestContext();
  operator = await operatorUser(ctx.app, ctx.database.db);
});
afterAll(() => ctx.close());

const url = (orgId: string) => `/api/console/organizations/${orgId}/face-match`;
const read = (orgId: string, user: PortalUser | undefined = operator) => portal(ctx.app, user, { method: 'GET', url: url(orgId) });
const write = (orgId: string, payload: unknown, user: PortalUser | undefined = operator) => portal(ctx.app, user, { method: 'PUT', url: url(orgId), payload: payload as object });
const audited = (orgId: string) =>
  ctx.database.db
    .selectFrom('audit_events')
    .select(['actor_kind', 'actor_id', 'target', 'before', 'after'])
    .where('org_id', '=', orgId)
    .where('action', '=', 'organization.face_match_threshold_changed')
    .orderBy('id')
    .execute();

describe("an organization's face-match threshold in the console", () => {
  it('answers the default, the bounds and the measured table before anything is set', async () => {
    const { org } = await portalOrg(ctx.database.db);
    const res = await read(org.id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      orgId: org.id,
      matchingThreshold: 43,
      custom: false,
      defaultThreshold: 43,
      bounds: { min: MATCH_SCORE_BOUNDS.min, max: MATCH_SCORE_BOUNDS.max },
      updatedAt: null,
      measured: MEASURED_THRESHOLDS,
    });
    // One row per threshold an operator may set, strictest first, with the pairs behind each rate.
    const rows = res.json().measured.rows as { score: number; blackBlack: { impostorPairs: number; genuinePairs: number } }[];
    expect(rows.map((row) => row.score)).toEqual(Array.from({ length: MATCH_SCORE_BOUNDS.max - MATCH_SCORE_BOUNDS.min + 1 }, (_, i) => MATCH_SCORE_BOUNDS.max - i));
    for (const row of rows) expect(row.blackBlack.impostorPairs).toBeGreaterThan(0);
  });

  it('sets a whole score within the bounds, audited with the operator and the threshold before and after; "default" resets it', async () => {
    const { org } = await portalOrg(ctx.database.db);
    const set = await write(org.id, { matchingThreshold: 47 });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json()).toMatchObject({ orgId: org.id, matchingThreshold: 47, custom: true, defaultThreshold: 43, updatedAt: expect.any(String), measured: { model: MEASURED_THRESHOLDS.model } });
    expect((await read(org.id)).json()).toMatchObject({ matchingThreshold: 47, custom: true });
    for (const bound of [MATCH_SCORE_BOUNDS.min, MATCH_SCORE_BOUNDS.max]) {
      expect((await write(org.id, { matchingThreshold: bound })).json()).toMatchObject({ matchingThreshold: bound, custom: true });
    }

    const reset = await write(org.id, { matchingThreshold: 'default' });
    expect(reset.statusCode, reset.body).toBe(200);
    expect(reset.json()).toMatchObject({ matchingThreshold: 43, custom: false, updatedAt: expect.any(String) });
    expect((await read(org.id)).json()).toMatchObject({ matchingThreshold: 43, custom: false });

    const events = await audited(org.id);
    expect(events.map((event) => [event.before, event.after])).toEqual([
      [{ matchingThreshold: 43, default: true }, { matchingThreshold: 47, default: false }],
      [{ matchingThreshold: 47, default: false }, { matchingThreshold: MATCH_SCORE_BOUNDS.min, default: false }],
      [{ matchingThreshold: MATCH_SCORE_BOUNDS.min, default: false }, { matchingThreshold: MATCH_SCORE_BOUNDS.max, default: false }],
      [{ matchingThreshold: MATCH_SCORE_BOUNDS.max, default: false }, { matchingThreshold: 43, default: true }],
    ]);
    for (const event of events) expect(event).toMatchObject({ actor_kind: 'operator', actor_id: operator.personId, target: 'face match threshold' });
    // The console's audit log lists it under the organization.
    const log = await portal(ctx.app, operator, { method: 'GET', url: `/api/console/audit?orgId=${org.id}&action=organization.face_match_threshold_changed` });
    expect(log.statusCode, log.body).toBe(200);
    expect(log.json().data).toHaveLength(4);
  });

  it('refuses a value out of bounds, not whole or not a number with 400 in style A, changing nothing and auditing nothing', async () => {
    const { org } = await portalOrg(ctx.database.db);
    expect((await write(org.id, { matchingThreshold: 45 })).statusCode).toBe(200);
    const bad: unknown[] = [
      { matchingThreshold: MATCH_SCORE_BOUNDS.min - 1 },
      { matchingThreshold: MATCH_SCORE_BOUNDS.max + 1 },
      { matchingThreshold: 44.5 },
      { matchingThreshold: 0 },
      { matchingThreshold: -42 },
      { matchingThreshold: 100 },
      { matchingThreshold: null },
      { matchingThreshold: 'strict' },
      {},
    ];
    for (const payload of bad) {
      const res = await write(org.id, payload);
      expect(res.statusCode, `${JSON.stringify(payload)}: ${res.body}`).toBe(400);
      expect(res.json()).toMatchObject({ status: 'error', code: 'VALIDATION_ERROR', message: expect.stringMatching(/matchingThreshold/) });
    }
    const outOfBounds = (await write(org.id, { matchingThreshold: 51 })).json();
    expect(outOfBounds.message).toBe(`matchingThreshold must be a whole number from ${MATCH_SCORE_BOUNDS.min} to ${MATCH_SCORE_BOUNDS.max}, or "default" (43)`);
    expect((await write(org.id, { matchingThreshold: 44.5 })).json().message).toBe(outOfBounds.message);
    expect((await read(org.id)).json()).toMatchObject({ matchingThreshold: 45, custom: true });
    expect(await audited(org.id)).toHaveLength(1);
  });

  it('is for operators only: 401 signed out, 403 for an owner of the organization; an unknown organization is 404', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    for (const res of [await read(org.id, owner), await write(org.id, { matchingThreshold: 50 }, owner)]) {
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ status: 'error', code: 'FORBIDDEN' });
    }
    expect((await portal(ctx.app, undefined, { method: 'GET', url: url(org.id) })).statusCode).toBe(401);
    expect((await portal(ctx.app, undefined, { method: 'PUT', url: url(org.id), payload: { matchingThreshold: 50 } })).statusCode).toBe(401);
    expect((await read(org.id)).json()).toMatchObject({ matchingThreshold: 43, custom: false });
    expect(await audited(org.id)).toEqual([]);
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-an-id']) {
      for (const res of [await read(id), await write(id, { matchingThreshold: 45 })]) {
        expect(res.statusCode, res.body).toBe(404);
        expect(res.json()).toMatchObject({ status: 'error', code: 'NOT_FOUND_ERROR' });
      }
    }
  });

  it("setting one organization's threshold changes nothing for another", async () => {
    const a = await portalOrg(ctx.database.db);
    const b = await portalOrg(ctx.database.db);
    expect((await write(b.org.id, { matchingThreshold: 38 })).statusCode).toBe(200);
    expect((await write(a.org.id, { matchingThreshold: 50 })).statusCode).toBe(200);
    expect((await read(b.org.id)).json()).toMatchObject({ matchingThreshold: 38, custom: true });
    expect((await write(a.org.id, { matchingThreshold: 'default' })).statusCode).toBe(200);
    expect((await read(b.org.id)).json()).toMatchObject({ matchingThreshold: 38, custom: true });
    expect(await audited(b.org.id)).toHaveLength(1);
  });
});
