import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, type TestContext } from '../helpers/app.js';
import { addMember, portal, portalOrg, portalUser, type PortalOrg } from '../helpers/portal.js';

/**
 * The verification flow's branding and session defaults (docs/sessions.md "Branding"): the portal
 * API (validation, roles, tenant isolation, audit, the logo's re-encoding and refusals), the
 * hosted flow's view and logo, the default redirect in the create answer, and the embedding
 * allow-list on the flow's page.
 */

let ctx: TestContext;
let dataDir: string;

beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'vouch-branding-'));
  ctx = await buildTestContext({ config: { dataDir } });
});
afterAll(async () => {
  await ctx?.close();
  await fs.rm(dataDir, { recursive: true, force: true });
});

const brandingUrl = (orgId: string) => `/api/orgs/${orgId}/branding`;

async function put(setup: PortalOrg, body: unknown, user = setup.owner) {
  return portal(ctx.app, user, { method: 'PUT', url: brandingUrl(setup.org.id), payload: body as Record<string, unknown> });
}

async function uploadLogo(setup: PortalOrg, bytes: Buffer, user = setup.owner) {
  return portal(ctx.app, user, { method: 'PUT', url: `${brandingUrl(setup.org.id)}/logo`, payload: { image: bytes.toString('base64') } });
}

async function auditRows(orgId: string) {
  return ctx.database.db.selectFrom('audit_events').select(['action', 'target', 'before', 'after', 'actor_id']).where('org_id', '=', orgId).where('action', 'like', 'branding.%').orderBy('id').execute();
}

async function createSession(secret: string, body: Record<string, unknown> = {}) {
  const res = await ctx.app.inject({ method: 'POST', url: '/v1/verifications/sessions', headers: { authorization: `Bearer ${secret}` }, payload: body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data as { id: string; url: string; clientSecret: string; redirectUrl: string | null };
}

function csp(headers: Record<string, unknown>): Record<string, string> {
  const directives: Record<string, string> = {};
  for (const part of String(headers['content-security-policy']).split(';')) {
    const [name, ...values] = part.trim().split(/\s+/);
    if (name) directives[name] = values.join(' ');
  }
  return directives;
}

/** A photo-like image: noise, so it does not compress to nothing. */
async function noisyImage(width: number, height: number, format: 'png' | 'jpeg' | 'webp', withExif = false): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  for (let i = 0; i < raw.length; i++) raw[i] = (i * 7919 + (i >> 5) * 104729) % 251;
  let image = sharp(raw, { raw: { width, height, channels: 3 } });
  if (withExif) image = image.withExif({ IFD0: { Copyright: 'Secret Maker', ImageDescription: 'office at 6.4531N 3.3958E' } });
  return image.toFormat(format).toBuffer();
}

describe('the branding settings API', () => {
  it('answers the defaults before anything is set: the organization name, no logo, no colour, no redirect, no origins', async () => {
    const setup = await portalOrg(ctx.database.db);
    const res = await portal(ctx.app, setup.owner, { method: 'GET', url: brandingUrl(setup.org.id) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      displayName: setup.org.name,
      displayNameSet: false,
      organizationName: setup.org.name,
      colour: null,
      textColour: null,
      contrast: null,
      logo: null,
      defaultRedirectUrl: null,
      allowedOrigins: [],
      updatedAt: null,
    });
  });

  it('saves the settings with the accessible text colour, audits what changed, and clears a field with null', async () => {
    const setup = await portalOrg(ctx.database.db);
    const res = await put(setup, {
      displayName: '  Kolo   Microfinance ',
      colour: '#0A3D91',
      defaultRedirectUrl: 'https://kolo.example.com/kyc/done?from=vouch',
      // Written as browsers write them (lower case), each once.
      allowedOrigins: ['https://kolo.example.com', 'https://app.kolo.example.com:8443', 'HTTPS://Kolo.Example.com', ' '],
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      displayName: 'Kolo Microfinance',
      displayNameSet: true,
      colour: '#0a3d91',
      textColour: '#ffffff',
      defaultRedirectUrl: 'https://kolo.example.com/kyc/done?from=vouch',
      allowedOrigins: ['https://kolo.example.com', 'https://app.kolo.example.com:8443'],
    });
    expect(res.json().contrast).toBeGreaterThanOrEqual(4.5);
    // A light colour gets dark text.
    const light = await put(setup, { colour: '#f5c400' });
    expect(light.json()).toMatchObject({ colour: '#f5c400', textColour: '#111418' });

    const rows = await auditRows(setup.org.id);
    expect(rows.map((row) => row.action)).toEqual(['branding.updated', 'branding.updated']);
    expect(rows[0]).toMatchObject({
      actor_id: setup.owner.personId,
      target: 'verification flow',
      before: { displayName: null, colour: null, defaultRedirectUrl: null, allowedOrigins: [] },
      after: { displayName: 'Kolo Microfinance', colour: '#0a3d91', defaultRedirectUrl: 'https://kolo.example.com/kyc/done?from=vouch', allowedOrigins: ['https://kolo.example.com', 'https://app.kolo.example.com:8443'] },
    });
    expect(rows[1]).toMatchObject({ before: { colour: '#0a3d91' }, after: { colour: '#f5c400' } });

    // Saving the same values again changes nothing and writes no audit row.
    expect((await put(setup, { colour: '#F5C400' })).statusCode).toBe(200);
    expect(await auditRows(setup.org.id)).toHaveLength(2);

    const cleared = await put(setup, { displayName: null, colour: '', defaultRedirectUrl: null, allowedOrigins: [] });
    expect(cleared.json()).toMatchObject({ displayName: setup.org.name, displayNameSet: false, colour: null, textColour: null, defaultRedirectUrl: null, allowedOrigins: [] });
  });

  it('names every bad field in one 400 (style A) and saves nothing', async () => {
    const setup = await portalOrg(ctx.database.db);
    const res = await put(setup, {
      displayName: 'x'.repeat(81),
      colour: '#777777',
      defaultRedirectUrl: 'http://kolo.example.com/back',
      allowedOrigins: ['https://kolo.example.com/pay', 'https://*.kolo.example.com', 'http://kolo.example.com'],
    });
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body).toMatchObject({ status: 'error', code: 'VALIDATION_ERROR' });
    const parts = (body.message as string).split('; ');
    expect(parts.find((p) => p.startsWith('displayName '))).toContain('at most 80 characters');
    expect(parts.find((p) => p.startsWith('colour '))).toMatch(/4\.5:1/);
    expect(parts.find((p) => p.startsWith('defaultRedirectUrl '))).toContain('https');
    const origins = parts.find((p) => p.startsWith('allowedOrigins '))!;
    for (const bad of ['https://kolo.example.com/pay', 'https://*.kolo.example.com', 'http://kolo.example.com']) expect(origins).toContain(bad);

    for (const [body, field] of [
      [{ colour: 'blue' }, 'colour'],
      [{ colour: '#12345' }, 'colour'],
      [{ defaultRedirectUrl: 'https://user:pw@kolo.example.com/' }, 'defaultRedirectUrl'],
      [{ defaultRedirectUrl: 'javascript:alert(1)' }, 'defaultRedirectUrl'],
      [{ defaultRedirectUrl: '/relative' }, 'defaultRedirectUrl'],
      [{ allowedOrigins: ['https://kolo.example.com/'] }, 'allowedOrigins'],
      [{ allowedOrigins: ["https://a.example; script-src 'unsafe-inline'"] }, 'allowedOrigins'],
      [{ allowedOrigins: Array.from({ length: 21 }, (_, i) => `https://s${i}.example.com`) }, 'allowedOrigins'],
    ] as const) {
      const one = await put(setup, body);
      expect(one.statusCode, JSON.stringify(body)).toBe(400);
      expect(one.json().message, JSON.stringify(body)).toMatch(new RegExp(`^${field} `));
    }
    // An unknown field is dropped, as on every route: a logo cannot be set by URL.
    const unknown = await put(setup, { logoUrl: 'https://evil.example/x.png' });
    expect(unknown.statusCode).toBe(200);
    expect(unknown.json().logo).toBeNull();

    const after = await portal(ctx.app, setup.owner, { method: 'GET', url: brandingUrl(setup.org.id) });
    expect(after.json()).toMatchObject({ displayNameSet: false, colour: null, defaultRedirectUrl: null, allowedOrigins: [] });
    expect(await auditRows(setup.org.id)).toHaveLength(0);
  });

  it('refuses a display name that hides or reorders characters, naming the code point, and one that shows nothing; names in any script pass', async () => {
    const setup = await portalOrg(ctx.database.db);
    const hidden = [
      ['Kolo \u202Eknab', 'U+202E'],
      ['Ko\u200Blo Microfinance', 'U+200B'],
      ['\u200D\u200D\u200D', 'U+200D'],
      ['\uFEFFKolo', 'U+FEFF'],
      ['Kolo\u00ADbank', 'U+00AD'],
      ['\u2067Kolo\u2069', 'U+2067'],
      ['Kolo\u{E0041}', 'U+E0041'],
    ] as const;
    for (const [displayName, codePoint] of hidden) {
      const res = await put(setup, { displayName });
      expect(res.statusCode, JSON.stringify(displayName)).toBe(400);
      expect(res.json()).toMatchObject({ status: 'error', code: 'VALIDATION_ERROR', message: `displayName must not contain invisible or direction-changing characters (${codePoint})` });
    }
    for (const displayName of ['\u3164', '\u2800', '\u2800 \u2800', '\u115F\u1160', '\uFFA0', '\u0301\u0301', '\uFE0F']) {
      const res = await put(setup, { displayName });
      expect(res.statusCode, JSON.stringify(displayName)).toBe(400);
      expect(res.json().message, JSON.stringify(displayName)).toBe('displayName must contain a visible character, not only blank or invisible ones');
    }
    expect(await auditRows(setup.org.id)).toHaveLength(0);

    // Letters of any script, marks on letters, emoji (a joined one too), and white space of any kind made one space.
    for (const [displayName, shown] of [
      ['Crème Brûlée Café', 'Crème Brûlée Café'],
      ['Ọlá Àdìgún', 'Ọlá Àdìgún'],
      ['شركة كولو للتمويل', 'شركة كولو للتمويل'],
      ['🏦 Kolo ❤️', '🏦 Kolo ❤️'],
      ['Kolo \u{1F469}\u{1F3FD}\u200D\u{1F4BB}', 'Kolo \u{1F469}\u{1F3FD}\u200D\u{1F4BB}'],
      ['\tKolo\u3000\u00A0 Microfinance ', 'Kolo Microfinance'],
    ] as const) {
      const res = await put(setup, { displayName });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().displayName).toBe(shown);
    }
  });

  it('lets every member read, only owners and admins change; another organization is 404; signed out is 401', async () => {
    const setup = await portalOrg(ctx.database.db);
    const roles = {} as Record<'admin' | 'developer' | 'viewer', Awaited<ReturnType<typeof portalUser>>>;
    for (const role of ['admin', 'developer', 'viewer'] as const) {
      roles[role] = await portalUser(ctx.database.db);
      await addMember(ctx.database.db, setup.org.id, roles[role].personId, role);
    }
    const png = await noisyImage(64, 64, 'png');
    for (const role of ['developer', 'viewer'] as const) {
      expect((await portal(ctx.app, roles[role], { method: 'GET', url: brandingUrl(setup.org.id) })).statusCode).toBe(200);
      const refused = await put(setup, { colour: '#0a3d91' }, roles[role]);
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toMatchObject({ status: 'error', code: 'FORBIDDEN' });
      expect((await uploadLogo(setup, png, roles[role])).statusCode).toBe(403);
      expect((await portal(ctx.app, roles[role], { method: 'DELETE', url: `${brandingUrl(setup.org.id)}/logo` })).statusCode).toBe(403);
    }
    expect((await put(setup, { colour: '#0a3d91' }, roles.admin)).statusCode).toBe(200);
    expect((await uploadLogo(setup, png, roles.admin)).statusCode).toBe(200);

    // Another organization's owner: 404 for reading and writing, and nothing changes.
    const other = await portalOrg(ctx.database.db);
    for (const request of [
      { method: 'GET' as const, url: brandingUrl(setup.org.id) },
      { method: 'PUT' as const, url: brandingUrl(setup.org.id), payload: { colour: '#000000' } },
      { method: 'PUT' as const, url: `${brandingUrl(setup.org.id)}/logo`, payload: { image: png.toString('base64') } },
      { method: 'DELETE' as const, url: `${brandingUrl(setup.org.id)}/logo` },
    ]) {
      const res = await portal(ctx.app, other.owner, request);
      expect(res.statusCode, `${request.method} ${request.url}`).toBe(404);
      expect(res.json().code).toBe('NOT_FOUND_ERROR');
    }
    expect((await portal(ctx.app, undefined, { method: 'GET', url: brandingUrl(setup.org.id) })).statusCode).toBe(401);
    const mine = await portal(ctx.app, setup.owner, { method: 'GET', url: brandingUrl(setup.org.id) });
    expect(mine.json().colour).toBe('#0a3d91');
    // A write without the app's Origin is refused before anything (CSRF).
    const foreign = await portal(ctx.app, setup.owner, { method: 'PUT', url: brandingUrl(setup.org.id), payload: { colour: '#000000' }, headers: { origin: 'https://evil.example' } });
    expect(foreign.statusCode).toBe(403);
  });
});

describe('the logo', () => {
  it('re-encodes a large JPEG to at most 512 px without its metadata, serves it by a random id, audits it, and replaces it', async () => {
    const setup = await portalOrg(ctx.database.db);
    const jpeg = await noisyImage(1200, 800, 'jpeg', true);
    expect((await sharp(jpeg).metadata()).exif).toBeDefined();
    const res = await uploadLogo(setup, jpeg);
    expect(res.statusCode, res.body).toBe(200);
    const { logo } = res.json();
    expect(logo).toMatchObject({ width: 512, height: 341 });
    expect(['image/png', 'image/webp']).toContain(logo.contentType);
    const logoPath = new URL(logo.url).pathname;
    expect(logoPath).toMatch(/^\/verify\/logos\/[0-9a-f-]{36}$/);
    expect(logoPath).not.toContain(setup.org.id);

    const served = await ctx.app.inject({ url: logoPath });
    expect(served.statusCode).toBe(200);
    expect(served.headers['content-type']).toBe(logo.contentType);
    expect(served.headers['x-content-type-options']).toBe('nosniff');
    const meta = await sharp(served.rawPayload).metadata();
    expect(meta).toMatchObject({ width: 512, height: 341 });
    expect(meta.exif).toBeUndefined();
    expect(served.rawPayload.includes(Buffer.from('Secret Maker'))).toBe(false);
    // Stored encrypted, like every file: the bytes on disk are not the image.
    const files = (await fs.readdir(path.join(dataDir, 'files'), { recursive: true })) as string[];
    const stored = files.find((name) => name.endsWith(logoPath.split('/').pop()!));
    expect(stored).toBeDefined();
    expect((await fs.readFile(path.join(dataDir, 'files', stored!))).equals(served.rawPayload)).toBe(false);

    // A small PNG stays PNG and keeps its size.
    const replaced = await uploadLogo(setup, await noisyImage(100, 60, 'png'));
    expect(replaced.json().logo).toMatchObject({ contentType: 'image/png', width: 100, height: 60 });
    // The replaced logo is gone from the server.
    expect((await ctx.app.inject({ url: logoPath })).statusCode).toBe(404);
    const newPath = new URL(replaced.json().logo.url).pathname;
    expect((await ctx.app.inject({ url: newPath })).statusCode).toBe(200);

    const removed = await portal(ctx.app, setup.owner, { method: 'DELETE', url: `${brandingUrl(setup.org.id)}/logo` });
    expect(removed.json()).toEqual({ ok: true });
    expect((await ctx.app.inject({ url: newPath })).statusCode).toBe(404);
    const again = await portal(ctx.app, setup.owner, { method: 'DELETE', url: `${brandingUrl(setup.org.id)}/logo` });
    expect(again.statusCode).toBe(404);

    const rows = await auditRows(setup.org.id);
    expect(rows.map((row) => row.action)).toEqual(['branding.logo_set', 'branding.logo_set', 'branding.logo_removed']);
    expect(rows[0]!.after).toMatchObject({ logo: { width: 512, height: 341 } });
  });

  it('refuses SVG, other files, damaged images, tiny and oversized ones with a clear 400', async () => {
    const setup = await portalOrg(ctx.database.db);
    const svg = Buffer.from('<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="100" height="100"><script>alert(1)</script><rect width="100" height="100"/></svg>');
    const cases: [Buffer | string, RegExp][] = [
      [svg, /SVG is refused/],
      [Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'), /SVG is refused/],
      [Buffer.from('%PDF-1.7 not a logo'), /PNG, JPEG or WebP/],
      [Buffer.from('GIF89a\x01\x00\x01\x00'), /PNG, JPEG or WebP/],
      [Buffer.concat([(await noisyImage(64, 64, 'png')).subarray(0, 40)]), /could not be read/],
      [await noisyImage(8, 8, 'png'), /at least 16×16/],
      [Buffer.concat([await noisyImage(64, 64, 'jpeg'), Buffer.alloc(2 * 1024 * 1024)]), /at most 2 MB/],
      ['not base64 at all!', /base64/],
    ];
    for (const [bytes, message] of cases) {
      const res = typeof bytes === 'string'
        ? await portal(ctx.app, setup.owner, { method: 'PUT', url: `${brandingUrl(setup.org.id)}/logo`, payload: { image: bytes } })
        : await uploadLogo(setup, bytes);
      expect(res.statusCode, String(message)).toBe(400);
      expect(res.json()).toMatchObject({ status: 'error', code: 'VALIDATION_ERROR' });
      expect(res.json().message).toMatch(message);
    }
    // A body past the route's limit (far more than 2 MB) is refused before it is read.
    const huge = await portal(ctx.app, setup.owner, { method: 'PUT', url: `${brandingUrl(setup.org.id)}/logo`, payload: { image: 'A'.repeat(4 * 1024 * 1024) } });
    expect(huge.statusCode).toBe(413);
    expect(huge.json().status).toBe('error');
    const after = await portal(ctx.app, setup.owner, { method: 'GET', url: brandingUrl(setup.org.id) });
    expect(after.json().logo).toBeNull();
    expect(await auditRows(setup.org.id)).toHaveLength(0);
  });

  it('serves only current logos: any other file id, or a malformed one, is 404', async () => {
    const setup = await portalOrg(ctx.database.db);
    await uploadLogo(setup, await noisyImage(64, 64, 'png'));
    const someFile = '00000000-0000-4000-8000-000000000000';
    for (const id of [someFile, 'not-a-uuid', '..%2F..%2Fetc%2Fpasswd']) {
      const res = await ctx.app.inject({ url: `/verify/logos/${id}` });
      expect(res.statusCode, id).toBe(404);
      expect(res.json()).toMatchObject({ status: 'error', code: 'NOT_FOUND_ERROR' });
    }
  });
});

describe('the hosted flow with branding', () => {
  it('shows the display name, logo and colour in the view; the default redirect fills a session created without one', async () => {
    const setup = await portalOrg(ctx.database.db);
    await put(setup, { displayName: 'Kolo', colour: '#0a3d91', defaultRedirectUrl: 'https://kolo.example.com/kyc/done' });
    const logo = (await uploadLogo(setup, await noisyImage(80, 80, 'png'))).json().logo;

    const plain = await createSession(setup.org.testSecret);
    expect(plain.redirectUrl).toBe('https://kolo.example.com/kyc/done');
    const own = await createSession(setup.org.testSecret, { redirectUrl: 'https://kolo.example.com/other' });
    expect(own.redirectUrl).toBe('https://kolo.example.com/other');
    // Live mode too, and the stored session says the same.
    const live = await createSession(setup.org.liveSecret);
    expect(live.redirectUrl).toBe('https://kolo.example.com/kyc/done');
    const fetched = await ctx.app.inject({ url: `/v1/verifications/sessions/${plain.id}`, headers: { authorization: `Bearer ${setup.org.testSecret}` } });
    expect(fetched.json().data.redirectUrl).toBe('https://kolo.example.com/kyc/done');

    const token = new URL(plain.url).pathname.split('/').pop()!;
    const view = (await ctx.app.inject({ url: `/verify/api/${token}` })).json();
    expect(view.organization).toEqual({ name: 'Kolo', logoUrl: new URL(logo.url).pathname, colour: '#0a3d91' });
    expect(view.redirectUrl).toBe('https://kolo.example.com/kyc/done');
    expect(view.consent.purpose).toContain('Kolo asked Vouch');

    // Another organization's sessions keep their own (no) branding and no redirect.
    const other = await portalOrg(ctx.database.db);
    const theirs = await createSession(other.org.testSecret);
    expect(theirs.redirectUrl).toBeNull();
    const theirView = (await ctx.app.inject({ url: `/verify/api/${new URL(theirs.url).pathname.split('/').pop()}` })).json();
    expect(theirView.organization).toEqual({ name: other.org.name, logoUrl: null, colour: null });
  });

  it('lets only allowed origins frame the flow once the list is set; an empty list keeps the rule of the origin the SDK names', async () => {
    const setup = await portalOrg(ctx.database.db);
    const session = await createSession(setup.org.testSecret);
    const framed = (origin: string) => ctx.app.inject({ url: `/verify/${session.clientSecret}?embed=1&origin=${encodeURIComponent(origin)}` });

    // No list: any well-formed origin the SDK names, as before.
    const before = await framed('https://anyone.example.com');
    expect(before.statusCode).toBe(200);
    expect(csp(before.headers)['frame-ancestors']).toBe('https://anyone.example.com');
    expect(before.body).not.toContain('data-refused');

    await put(setup, { allowedOrigins: ['https://kolo.example.com', 'http://localhost:5173'] });
    const allowed = await framed('https://kolo.example.com');
    expect(allowed.statusCode).toBe(200);
    expect(csp(allowed.headers)['frame-ancestors']).toBe('https://kolo.example.com');
    expect(allowed.headers['x-frame-options']).toBeUndefined();
    expect(allowed.body).not.toContain('data-refused');
    expect((await framed('http://localhost:5173')).statusCode).toBe(200);

    // Another origin gets only the page that says it may not show the flow (and tells the SDK why).
    const refused = await framed('https://anyone.example.com');
    expect(refused.statusCode).toBe(403);
    expect(csp(refused.headers)['frame-ancestors']).toBe('https://anyone.example.com');
    expect(refused.body).toContain('<main id="app" data-refused="origin">');
    expect(refused.body).not.toContain(session.clientSecret);
    // Malformed requests are still refused as before, unframed.
    const malformed = await ctx.app.inject({ url: `/verify/${session.clientSecret}?embed=1&origin=${encodeURIComponent('https://kolo.example.com/')}` });
    expect(malformed.statusCode).toBe(400);
    expect(csp(malformed.headers)['frame-ancestors']).toBe("'none'");
    // The whole page (no frame) still opens for the client secret and the url token.
    const whole = await ctx.app.inject({ url: `/verify/${session.clientSecret}` });
    expect(whole.statusCode).toBe(200);
    expect(csp(whole.headers)['frame-ancestors']).toBe("'none'");

    // Another organization's list does not apply to this one's sessions.
    const other = await portalOrg(ctx.database.db);
    const theirs = await createSession(other.org.testSecret);
    const theirFrame = await ctx.app.inject({ url: `/verify/${theirs.clientSecret}?embed=1&origin=${encodeURIComponent('https://anyone.example.com')}` });
    expect(theirFrame.statusCode).toBe(200);

    // Emptying the list restores the rule.
    await put(setup, { allowedOrigins: [] });
    expect((await framed('https://anyone.example.com')).statusCode).toBe(200);
  });
});
