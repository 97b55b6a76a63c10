import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, type TestContext } from '../helpers/app.js';
import { operatorUser, portal, portalOrg, type PortalUser } from '../helpers/portal.js';

/**
 * An organization's verification-flow branding in the console, read-only: what the owners set in
 * the portal (display name, colour, logo, default redirect, allowed origins), for operators only,
 * one organization's and never another's.
 */
let ctx: TestContext;
let operator: PortalUser;

beforeAll(async () => {
  ctx = await buildTestContext();
  operator = await operatorUser(ctx.app, ctx.database.db);
});
afterAll(() => ctx.close());

const brandingOf = (orgId: string, user: PortalUser | undefined = operator) => portal(ctx.app, user, { method: 'GET', url: `/api/console/organizations/${orgId}/branding` });

describe("an organization's branding in the console", () => {
  it('answers the defaults before anything is set', async () => {
    const { org } = await portalOrg(ctx.database.db);
    const res = await brandingOf(org.id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ displayName: org.name, displayNameSet: false, organizationName: org.name, colour: null, logo: null, defaultRedirectUrl: null, allowedOrigins: [], updatedAt: null });
  });

  it('shows what the owners set, the logo where the hosted flow loads it, and changes nothing', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    const other = await portalOrg(ctx.database.db);
    const saved = await portal(ctx.app, owner, {
      method: 'PUT',
      url: `/api/orgs/${org.id}/branding`,
      payload: { displayName: 'Kolo Pay', colour: '#0b5cad', defaultRedirectUrl: 'https://kolo.example.com/done', allowedOrigins: ['https://kolo.example.com'] },
    });
    expect(saved.statusCode, saved.body).toBe(200);
    const png = await sharp({ create: { width: 64, height: 32, channels: 3, background: '#0b5cad' } }).png().toBuffer();
    expect((await portal(ctx.app, owner, { method: 'PUT', url: `/api/orgs/${org.id}/branding/logo`, payload: { image: png.toString('base64') } })).statusCode).toBe(200);
    const events = () => ctx.database.db.selectFrom('audit_events').select('action').where('org_id', '=', org.id).execute();
    const auditedBefore = (await events()).length;

    const res = await brandingOf(org.id);
    expect(res.statusCode, res.body).toBe(200);
    const branding = res.json();
    expect(branding).toMatchObject({
      displayName: 'Kolo Pay',
      displayNameSet: true,
      colour: '#0b5cad',
      defaultRedirectUrl: 'https://kolo.example.com/done',
      allowedOrigins: ['https://kolo.example.com'],
      logo: { url: expect.stringMatching(/\/verify\/logos\/[^/]+$/), contentType: 'image/png', width: 64, height: 32 },
      updatedAt: expect.any(String),
    });
    // The logo is served as the hosted flow loads it: an image, no script.
    const logo = await ctx.app.inject({ method: 'GET', url: new URL(branding.logo.url).pathname });
    expect(logo.statusCode).toBe(200);
    expect(logo.headers['content-type']).toBe('image/png');
    expect(logo.headers['x-content-type-options']).toBe('nosniff');
    // The portal reads the same; the other organization's is its own.
    expect((await portal(ctx.app, owner, { method: 'GET', url: `/api/orgs/${org.id}/branding` })).json()).toEqual(branding);
    expect((await brandingOf(other.org.id)).json()).toMatchObject({ displayName: other.org.name, logo: null, colour: null });
    expect(await events()).toHaveLength(auditedBefore);
  });

  it('is for operators only; an unknown organization is 404', async () => {
    const { org, owner } = await portalOrg(ctx.database.db);
    const refused = await brandingOf(org.id, owner);
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ status: 'error', code: 'FORBIDDEN' });
    expect((await portal(ctx.app, undefined, { method: 'GET', url: `/api/console/organizations/${org.id}/branding` })).statusCode).toBe(401);
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-an-id']) {
      const res = await brandingOf(id);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ status: 'error', code: 'NOT_FOUND_ERROR' });
    }
  });
});
