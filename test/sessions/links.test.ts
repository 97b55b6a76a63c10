import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { redactUrl } from '../../src/platform/logging.js';
import { SESSION_BILLABLES } from '../../src/sessions/billing.js';
import { forgetLinkIdSteps, LINK_ID_TRIES_PER_ADDRESS, LINK_ID_TRIES_PER_LINK } from '../../src/sessions/links/id-step-limits.js';
import { LINK_STARTS_PER_ADDRESS } from '../../src/sessions/links/public-routes.js';
import { hashToken } from '../../src/sessions/tokens.js';
import { bearer, buildTestContext, testConfig, type TestContext } from '../helpers/app.js';
import { addMember, ORIGIN, portal, portalOrg, portalUser, type PortalOrg } from '../helpers/portal.js';
import { balanceOf, HeldRegistry } from './fixtures.js';

/** Verification links: the portal API and the public page (docs/sessions.md, "Verification links"). */

const inAMonth = () => new Date(Date.now() + 30 * 86_400_000).toISOString();
const LINK_KEYS = [
  'id', 'name', 'mode', 'url', 'idTypes', 'checks', 'redirectUrl', 'referencePrefix', 'metadata', 'sessionLimit', 'sessionsStarted', 'spendLimit', 'spent', 'expiresAt', 'disabledAt', 'createdAt', 'status', 'qrCode',
].sort();
const PRICE = SESSION_BILLABLES.session.defaultPrice;
/** A BVN the live registry holds (a link's session has no applicant: any record found passes). */
const TANKO = { bvn: '22045722657', firstname: 'Musa', lastname: 'Tanko', gender: 'Male', phone: '08033344455', birthdate: '17-08-1979' };

let address = 0;
/** A client address of its own, so the per-address limits of one test do not reach another's. */
const freshAddress = () => `10.${Math.floor(++address / 250) % 250}.${address % 250}.${1 + (address % 200)}`;

describe('verification links', () => {
  let t: TestContext;
  const registry = new HeldRegistry().add('bvn', TANKO.bvn, TANKO);
  beforeAll(async () => {
    t = await buildTestContext({ liveRegistry: registry });
  });
  afterAll(() => t.close());

  const db = () => t.database.db;

  async function create(owner: PortalOrg, body: Record<string, unknown>, mode: 'test' | 'live' = 'test') {
    return portal(t.app, owner.owner, { method: 'POST', url: `/api/orgs/${owner.org.id}/links?mode=${mode}`, payload: { name: 'Onboarding', sessionLimit: 3, expiresAt: inAMonth(), ...body } });
  }

  async function makeLink(owner: PortalOrg, body: Record<string, unknown> = {}, mode: 'test' | 'live' = 'test') {
    const res = await create(owner, body, mode);
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: string; url: string; sessionsStarted: number; status: string };
  }

  const pathOf = (url: string) => new URL(url).pathname;
  const visit = (url: string, remoteAddress = freshAddress(), headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'GET', url: pathOf(url), remoteAddress, headers });
  const start = (url: string, remoteAddress = freshAddress(), headers: Record<string, string> = { origin: ORIGIN }) =>
    t.app.inject({ method: 'POST', url: pathOf(url), remoteAddress, headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, payload: '' });

  const sessionsOf = (orgId: string) => db().selectFrom('verification_sessions').select(['public_id', 'link_id', 'mode', 'reference']).where('org_id', '=', orgId).execute();
  const auditOf = (orgId: string) =>
    db().selectFrom('audit_events').select(['action', 'actor_kind', 'actor_id', 'target', 'before', 'after']).where('org_id', '=', orgId).where('action', 'like', 'link.%').orderBy('id').execute();

  describe('portal API', () => {
    it('creates a link with its public URL (128-bit code), lists it with sessions started and its limit, audited', async () => {
      const owner = await portalOrg(db());
      const res = await create(owner, {
        name: '  Agent onboarding, Kano ',
        idTypes: ['bvn', 'NIN'],
        checks: { liveness: true, faceMatch: false },
        redirectUrl: 'https://shop.example.com/after',
        sessionLimit: 50,
        referencePrefix: 'kano',
        metadata: { campaign: 'kano-2026' },
      });
      expect(res.statusCode, res.body).toBe(201);
      const link = res.json();
      expect(Object.keys(link).sort()).toEqual(LINK_KEYS);
      expect(link).toMatchObject({
        id: expect.stringMatching(/^vl_[0-9a-f]{20}$/),
        name: 'Agent onboarding, Kano',
        mode: 'test',
        url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:8080\/l\/[A-Za-z0-9_-]{22}$/),
        idTypes: ['BVN', 'NIN'],
        checks: { liveness: true, faceMatch: false },
        redirectUrl: 'https://shop.example.com/after',
        referencePrefix: 'kano',
        metadata: { campaign: 'kano-2026' },
        sessionLimit: 50,
        sessionsStarted: 0,
        disabledAt: null,
        status: 'active',
      });
      expect(link.qrCode).toMatch(/^data:image\/svg\+xml;base64,/);
      expect(Buffer.from(link.qrCode.split(',')[1], 'base64').toString()).toContain('<svg');
      const png = await portal(t.app, owner.owner, { method: 'GET', url: `/api/orgs/${owner.org.id}/links/${link.id}/qr.png` });
      expect(png.statusCode).toBe(200);
      expect(png.headers['content-type']).toBe('image/png');
      expect(png.headers['content-disposition']).toBe(`attachment; filename="verification-link-${link.id}.png"`);
      expect(png.rawPayload.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
      expect((await portal(t.app, owner.owner, { method: 'GET', url: `/api/orgs/${owner.org.id}/links/${link.id}/qr.png?mode=live` })).statusCode).toBe(404);
      const list = await portal(t.app, owner.owner, { method: 'GET', url: `/api/orgs/${owner.org.id}/links?mode=test` });
      expect(list.statusCode).toBe(200);
      expect(list.json()).toMatchObject({ total: 1, limit: 20, offset: 0, data: [{ id: link.id, url: link.url, sessionsStarted: 0, sessionLimit: 50 }] });
      const events = await auditOf(owner.org.id);
      expect(events).toEqual([
        expect.objectContaining({ action: 'link.created', actor_kind: 'member', actor_id: owner.owner.personId, target: `test link ${link.id}`, after: expect.objectContaining({ name: 'Agent onboarding, Kano', sessionLimit: 50 }) }),
      ]);
    });

    it('names every problem of a bad body in one portal-style 400 and stores nothing', async () => {
      const owner = await portalOrg(db());
      const res = await create(owner, {
        name: ' ',
        idTypes: ['PASSPORT'],
        checks: { liveness: false, faceMatch: true },
        redirectUrl: 'javascript:alert(1)',
        sessionLimit: 0,
        expiresAt: '2020-01-01T00:00:00Z',
        referencePrefix: 'has space',
        metadata: { verificationLink: 'x', n: 5 },
      });
      expect(res.statusCode).toBe(400);
      const body = res.json();
      expect(body).toMatchObject({ status: 'error', code: 'VALIDATION_ERROR' });
      for (const field of ['name is required', 'sessionLimit must be', 'expiresAt must be in the future', 'referencePrefix must be', 'metadata.verificationLink', 'idTypes: "PASSPORT"', 'checks.faceMatch needs checks.liveness', 'redirectUrl must be', 'metadata.n must be a string']) {
        expect(body.message).toContain(field);
      }
      const missing = await portal(t.app, owner.owner, { method: 'POST', url: `/api/orgs/${owner.org.id}/links`, payload: { name: 'x' } });
      expect(missing.statusCode).toBe(400);
      expect(missing.json()).toMatchObject({ status: 'error', code: 'VALIDATION_ERROR' });
      const tooFar = await create(owner, { expiresAt: new Date(Date.now() + 400 * 86_400_000).toISOString(), sessionLimit: 100_001 });
      expect(tooFar.json().message).toMatch(/expiresAt must be within 366 days.*|sessionLimit must be a whole number from 1 to 100,000/);
      expect(tooFar.json().message).toContain('sessionLimit must be a whole number from 1 to 100,000');
      expect(await db().selectFrom('verification_links').select('id').where('org_id', '=', owner.org.id).execute()).toEqual([]);
    });

    it('refuses links to an account whose risk level needs applicant details on each session', async () => {
      const owner = await portalOrg(db());
      await db().updateTable('organizations').set({ risk_level: 'LOW' }).where('id', '=', owner.org.id).execute();
      const res = await create(owner, {});
      expect(res.statusCode).toBe(400);
      expect(res.json().message).toContain("This account's risk level (LOW) needs the applicant's name");
    });

    it('disables and enables a link (audited once per change), viewers read but cannot change, developers can', async () => {
      const owner = await portalOrg(db());
      const link = await makeLink(owner);
      const viewer = await portalUser(db());
      await addMember(db(), owner.org.id, viewer.personId, 'viewer');
      const developer = await portalUser(db());
      await addMember(db(), owner.org.id, developer.personId, 'developer');

      expect((await portal(t.app, viewer, { method: 'GET', url: `/api/orgs/${owner.org.id}/links` })).json().total).toBe(1);
      const refused = await portal(t.app, viewer, { method: 'POST', url: `/api/orgs/${owner.org.id}/links/${link.id}/disable` });
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toMatchObject({ status: 'error', code: 'FORBIDDEN' });
      expect((await portal(t.app, viewer, { method: 'POST', url: `/api/orgs/${owner.org.id}/links`, payload: { name: 'x', sessionLimit: 1, expiresAt: inAMonth() } })).statusCode).toBe(403);

      const disabled = await portal(t.app, developer, { method: 'POST', url: `/api/orgs/${owner.org.id}/links/${link.id}/disable` });
      expect(disabled.statusCode, disabled.body).toBe(200);
      expect(disabled.json()).toMatchObject({ status: 'disabled', disabledAt: expect.any(String) });
      expect((await portal(t.app, developer, { method: 'POST', url: `/api/orgs/${owner.org.id}/links/${link.id}/disable` })).statusCode).toBe(200);
      const enabled = await portal(t.app, owner.owner, { method: 'POST', url: `/api/orgs/${owner.org.id}/links/${link.id}/enable` });
      expect(enabled.json()).toMatchObject({ status: 'active', disabledAt: null });
      expect((await auditOf(owner.org.id)).map((event) => [event.action, event.actor_id])).toEqual([
        ['link.created', owner.owner.personId],
        ['link.disabled', developer.personId],
        ['link.enabled', owner.owner.personId],
      ]);
    });

    it("keeps organizations and modes apart: another organization's member and the other mode see no link", async () => {
      const owner = await portalOrg(db());
      const other = await portalOrg(db());
      const link = await makeLink(owner);
      expect((await portal(t.app, other.owner, { method: 'GET', url: `/api/orgs/${owner.org.id}/links` })).statusCode).toBe(404);
      expect((await portal(t.app, other.owner, { method: 'POST', url: `/api/orgs/${other.org.id}/links/${link.id}/disable` })).statusCode).toBe(404);
      expect((await portal(t.app, other.owner, { method: 'GET', url: `/api/orgs/${other.org.id}/links/${link.id}/sessions` })).statusCode).toBe(404);
      expect((await portal(t.app, owner.owner, { method: 'GET', url: `/api/orgs/${owner.org.id}/links?mode=live` })).json().total).toBe(0);
      const live = await portal(t.app, owner.owner, { method: 'POST', url: `/api/orgs/${owner.org.id}/links/${link.id}/disable?mode=live` });
      expect(live.statusCode).toBe(404);
      expect(live.json()).toMatchObject({ status: 'error', code: 'NOT_FOUND_ERROR' });
      expect((await portal(t.app, owner.owner, { method: 'POST', url: `/api/orgs/${owner.org.id}/links/nonsense/disable` })).statusCode).toBe(404);
      expect((await portal(t.app, undefined, { method: 'GET', url: `/api/orgs/${owner.org.id}/links` })).statusCode).toBe(401);
    });
  });

  describe('editing a link', () => {
    const edit = (user: { cookie: string } | undefined, orgId: string, linkId: string, payload: Record<string, unknown>, mode = 'test') =>
      portal(t.app, user, { method: 'PATCH', url: `/api/orgs/${orgId}/links/${linkId}?mode=${mode}`, payload });
    const stored = (linkId: string) => db().selectFrom('verification_links').selectAll().where('public_id', '=', linkId).executeTakeFirstOrThrow();

    it('changes the limit, expiry, redirect URL, reference prefix, metadata and name; audited with only what changed, before and after; new sessions use them', async () => {
      const owner = await portalOrg(db());
      const link = await makeLink(owner, { sessionLimit: 3, redirectUrl: 'https://shop.example.com/old', referencePrefix: 'old', metadata: { campaign: 'a' } });
      const expiresAt = new Date(Date.now() + 60 * 86_400_000);
      expiresAt.setMilliseconds(0);
      const res = await edit(owner.owner, owner.org.id, link.id, {
        name: ' Poster, Kano ',
        sessionLimit: 10,
        expiresAt: expiresAt.toISOString(),
        redirectUrl: 'https://shop.example.com/new',
        referencePrefix: 'kano',
        metadata: { campaign: 'b', region: 'north' },
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(Object.keys(res.json()).sort()).toEqual(LINK_KEYS);
      expect(res.json()).toMatchObject({
        id: link.id,
        url: link.url,
        name: 'Poster, Kano',
        sessionLimit: 10,
        expiresAt: expiresAt.toISOString(),
        redirectUrl: 'https://shop.example.com/new',
        referencePrefix: 'kano',
        metadata: { campaign: 'b', region: 'north' },
        status: 'active',
      });
      const events = await auditOf(owner.org.id);
      expect(events.at(-1)).toMatchObject({ action: 'link.updated', actor_id: owner.owner.personId, target: `test link ${link.id}` });
      expect(events.at(-1)!.before).toEqual({ name: 'Onboarding', sessionLimit: 3, expiresAt: expect.any(String), redirectUrl: 'https://shop.example.com/old', referencePrefix: 'old', metadata: { campaign: 'a' } });
      expect(events.at(-1)!.after).toEqual({ name: 'Poster, Kano', sessionLimit: 10, expiresAt: expiresAt.toISOString(), redirectUrl: 'https://shop.example.com/new', referencePrefix: 'kano', metadata: { campaign: 'b', region: 'north' } });

      expect((await start(link.url)).statusCode).toBe(303);
      const [session] = await sessionsOf(owner.org.id);
      expect(session!.reference).toMatch(/^kano-[0-9a-f]{12}$/);
      const fetched = await t.app.inject({ method: 'GET', url: `/v1/verifications/sessions/${session!.public_id}`, headers: bearer(owner.org.testSecret) });
      expect(fetched.json().data).toMatchObject({ redirectUrl: 'https://shop.example.com/new', metadata: { campaign: 'b', region: 'north', verificationLink: link.id } });

      // null and blank clear the optional settings; a field left out keeps its value.
      const cleared = await edit(owner.owner, owner.org.id, link.id, { redirectUrl: null, referencePrefix: '  ', metadata: {} });
      expect(cleared.statusCode, cleared.body).toBe(200);
      expect(cleared.json()).toMatchObject({ redirectUrl: null, referencePrefix: null, metadata: {}, name: 'Poster, Kano', sessionLimit: 10 });
      // The same values again: 200, nothing audited.
      const count = (await auditOf(owner.org.id)).length;
      expect((await edit(owner.owner, owner.org.id, link.id, { sessionLimit: 10, name: 'Poster, Kano' })).statusCode).toBe(200);
      expect(await auditOf(owner.org.id)).toHaveLength(count);
    });

    it('names every problem in one 400 and changes nothing: a limit below the sessions started, a past expiry, a bad redirect, prefix or metadata', async () => {
      const owner = await portalOrg(db());
      const link = await makeLink(owner, { sessionLimit: 5 });
      for (let i = 0; i < 2; i++) expect((await start(link.url)).statusCode).toBe(303);
      const before = await stored(link.id);
      const res = await edit(owner.owner, owner.org.id, link.id, {
        name: '',
        sessionLimit: 1,
        expiresAt: '2020-01-01T00:00:00Z',
        redirectUrl: 'javascript:alert(1)',
        referencePrefix: 'has space',
        metadata: { verificationLink: 'x', n: 5 },
      });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ status: 'error', code: 'VALIDATION_ERROR' });
      for (const part of ['name is required', 'sessionLimit cannot be below the 2 sessions already started', 'expiresAt must be in the future', 'redirectUrl must be', 'referencePrefix must be', 'metadata.verificationLink', 'metadata.n must be a string']) {
        expect(res.json().message).toContain(part);
      }
      for (const [body, part] of [
        [{ sessionLimit: 0 }, 'sessionLimit must be a whole number from 1 to 100,000'],
        [{ sessionLimit: 100_001 }, 'sessionLimit must be a whole number from 1 to 100,000'],
        [{ expiresAt: new Date(Date.now() + 400 * 86_400_000).toISOString() }, 'expiresAt must be within 366 days'],
        [{ expiresAt: '31/12/2030' }, 'expiresAt must be an ISO 8601 date-time with a time zone'],
        [{}, 'Send at least one of name, sessionLimit, expiresAt, redirectUrl, referencePrefix, metadata'],
        [{ redirectUrl: 'https://user:pw@example.com/' }, 'redirectUrl must be'],
      ] as const) {
        const bad = await edit(owner.owner, owner.org.id, link.id, body);
        expect(bad.statusCode, JSON.stringify(body)).toBe(400);
        expect(bad.json().message).toContain(part);
      }
      expect((await edit(owner.owner, owner.org.id, link.id, { sessionLimit: 'ten' })).statusCode).toBe(400);
      expect(await stored(link.id)).toEqual(before);
      expect((await auditOf(owner.org.id)).map((event) => event.action)).toEqual(['link.created']);
    });

    it('a limit lowered to the sessions started means no more starts; raised again, the link starts again', async () => {
      const owner = await portalOrg(db());
      const link = await makeLink(owner, { sessionLimit: 10 });
      for (let i = 0; i < 2; i++) expect((await start(link.url)).statusCode).toBe(303);
      const lowered = await edit(owner.owner, owner.org.id, link.id, { sessionLimit: 2 });
      expect(lowered.statusCode, lowered.body).toBe(200);
      expect(lowered.json()).toMatchObject({ sessionLimit: 2, sessionsStarted: 2, status: 'full' });
      const refused = await start(link.url);
      expect(refused.statusCode).toBe(410);
      expect(refused.body).toContain('This verification link has been used up');
      expect(await sessionsOf(owner.org.id)).toHaveLength(2);
      expect((await edit(owner.owner, owner.org.id, link.id, { sessionLimit: 3 })).json()).toMatchObject({ status: 'active' });
      expect((await start(link.url)).statusCode).toBe(303);

      // An expired link given a new expiry starts again.
      await db().updateTable('verification_links').set({ expires_at: new Date(Date.now() - 1000), session_limit: 100 }).where('public_id', '=', link.id).execute();
      expect((await start(link.url)).statusCode).toBe(410);
      expect((await edit(owner.owner, owner.org.id, link.id, { expiresAt: inAMonth() })).json()).toMatchObject({ status: 'active' });
      expect((await start(link.url)).statusCode).toBe(303);
    });

    it('concurrent starts and a lowered limit never let the count pass the limit', async () => {
      const owner = await portalOrg(db());
      const link = await makeLink(owner, { sessionLimit: 20 });
      const answers = await Promise.all([
        ...Array.from({ length: 12 }, () => start(link.url)),
        edit(owner.owner, owner.org.id, link.id, { sessionLimit: 4 }),
      ]);
      const row = await stored(link.id);
      expect(row.sessions_started).toBeLessThanOrEqual(row.session_limit);
      expect(await sessionsOf(owner.org.id)).toHaveLength(row.sessions_started);
      const editAnswer = answers.at(-1)!;
      // Either the edit came first (limit 4, at most 4 started) or enough starts had landed that 4 was below them (400).
      if (editAnswer.statusCode === 200) expect(row).toMatchObject({ session_limit: 4 });
      else expect(editAnswer.json().message).toContain('sessionLimit cannot be below');
    });

    it('viewers may not edit; another organization, the other mode and an unknown link are 404; signed out 401; a foreign Origin 403', async () => {
      const owner = await portalOrg(db());
      const other = await portalOrg(db());
      const link = await makeLink(owner);
      const viewer = await portalUser(db());
      await addMember(db(), owner.org.id, viewer.personId, 'viewer');
      const developer = await portalUser(db());
      await addMember(db(), owner.org.id, developer.personId, 'developer');
      const before = await stored(link.id);

      const refused = await edit(viewer, owner.org.id, link.id, { sessionLimit: 9 });
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toMatchObject({ status: 'error', code: 'FORBIDDEN' });
      for (const res of [
        await edit(other.owner, owner.org.id, link.id, { sessionLimit: 9 }),
        await edit(other.owner, other.org.id, link.id, { sessionLimit: 9 }),
        await edit(owner.owner, owner.org.id, link.id, { sessionLimit: 9 }, 'live'),
        await edit(owner.owner, owner.org.id, 'vl_nonsense', { sessionLimit: 9 }),
        await edit(owner.owner, owner.org.id, `vl_${'0'.repeat(20)}`, { sessionLimit: 0 }),
      ]) {
        expect(res.statusCode, res.body).toBe(404);
        expect(res.json()).toMatchObject({ status: 'error', code: 'NOT_FOUND_ERROR' });
      }
      expect((await edit(undefined, owner.org.id, link.id, { sessionLimit: 9 })).statusCode).toBe(401);
      const foreign = await portal(t.app, owner.owner, { method: 'PATCH', url: `/api/orgs/${owner.org.id}/links/${link.id}`, payload: { sessionLimit: 9 }, headers: { origin: 'https://evil.example' } });
      expect(foreign.statusCode).toBe(403);
      expect(await stored(link.id)).toEqual(before);

      const live = await makeLink(owner, {}, 'live');
      expect((await edit(developer, owner.org.id, live.id, { sessionLimit: 9 })).statusCode).toBe(404);
      const ok = await edit(developer, owner.org.id, live.id, { sessionLimit: 9 }, 'live');
      expect(ok.statusCode, ok.body).toBe(200);
      expect((await auditOf(owner.org.id)).at(-1)).toMatchObject({ action: 'link.updated', actor_id: developer.personId, target: `live link ${live.id}`, before: { sessionLimit: 3 }, after: { sessionLimit: 9 } });
    });
  });

  describe('the public link', () => {
    it('GET and HEAD show the page with its Start button and create nothing; POST starts a session with the link settings and answers 303 to its hosted url', async () => {
      const owner = await portalOrg(db());
      const link = await makeLink(owner, {
        idTypes: ['NIN'],
        checks: { liveness: true, faceMatch: false },
        redirectUrl: 'https://shop.example.com/after',
        referencePrefix: 'promo',
        metadata: { campaign: 'market-day' },
      });
      const page = await visit(link.url, freshAddress(), { 'user-agent': 'WhatsApp/2.23 A' });
      expect(page.statusCode).toBe(200);
      expect(page.headers['content-type']).toContain('text/html');
      expect(page.headers['content-security-policy']).toContain("form-action 'self'");
      expect(page.body).toContain(`Verify your identity for ${owner.org.name}`);
      expect(page.body).toContain('<button type="submit">Start verification</button>');
      expect(page.body).toContain('method="post"');
      expect(page.body).toContain('TEST MODE');
      expect(page.body).toContain('NIN (National Identification Number)');
      expect((await t.app.inject({ method: 'HEAD', url: pathOf(link.url) })).statusCode).toBe(200);
      expect(await sessionsOf(owner.org.id)).toEqual([]);

      const res = await start(link.url);
      expect(res.statusCode, res.body).toBe(303);
      expect(res.headers.location).toMatch(/^http:\/\/127\.0\.0\.1:8080\/verify\/[A-Za-z0-9_-]{43}$/);
      const [session] = await sessionsOf(owner.org.id);
      expect(session).toMatchObject({ mode: 'test', reference: expect.stringMatching(/^promo-[0-9a-f]{12}$/) });
      const fetched = await t.app.inject({ method: 'GET', url: `/v1/verifications/sessions/${session!.public_id}`, headers: bearer(owner.org.testSecret) });
      expect(fetched.json().data).toMatchObject({
        idTypes: ['NIN'],
        requestedChecks: { idLookup: true, liveness: true, faceMatch: false },
        redirectUrl: 'https://shop.example.com/after',
        metadata: { campaign: 'market-day', verificationLink: link.id },
        status: { status: 'CREATED' },
      });
      // The hosted page of the redirect answers for that session.
      const token = res.headers.location!.split('/verify/')[1]!;
      const view = await t.app.inject({ method: 'GET', url: `/verify/api/${token}` });
      expect(view.statusCode).toBe(200);

      const sessions = await portal(t.app, owner.owner, { method: 'GET', url: `/api/orgs/${owner.org.id}/links/${link.id}/sessions` });
      expect(sessions.json()).toMatchObject({ total: 1, data: [{ id: session!.public_id, reference: session!.reference, status: 'created' }] });
      const listed = await portal(t.app, owner.owner, { method: 'GET', url: `/api/orgs/${owner.org.id}/links` });
      expect(listed.json().data[0]).toMatchObject({ sessionsStarted: 1 });
      // No code in the log.
      expect(t.logs.join('\n')).not.toContain(pathOf(link.url));
    });

    it('a link used up, expired or disabled shows a plain page (not JSON) and starts no session', async () => {
      const owner = await portalOrg(db());
      const link = await makeLink(owner, { sessionLimit: 1 });
      expect((await start(link.url)).statusCode).toBe(303);
      for (const res of [await visit(link.url), await start(link.url)]) {
        expect(res.statusCode).toBe(410);
        expect(res.headers['content-type']).toContain('text/html');
        expect(res.body).toContain('This verification link has been used up');
      }
      expect(await sessionsOf(owner.org.id)).toHaveLength(1);

      const expiring = await makeLink(owner);
      await db().updateTable('verification_links').set({ expires_at: new Date(Date.now() - 1000) }).where('public_id', '=', expiring.id).execute();
      for (const res of [await visit(expiring.url), await start(expiring.url)]) {
        expect(res.statusCode).toBe(410);
        expect(res.body).toContain('This verification link has expired');
      }

      const disabled = await makeLink(owner);
      await portal(t.app, owner.owner, { method: 'POST', url: `/api/orgs/${owner.org.id}/links/${disabled.id}/disable` });
      for (const res of [await visit(disabled.url), await start(disabled.url)]) {
        expect(res.statusCode).toBe(410);
        expect(res.body).toContain('This verification link has been turned off');
      }
      expect(await sessionsOf(owner.org.id)).toHaveLength(1);

      for (const path of ['/l/AAAAAAAAAAAAAAAAAAAAAA', '/l/short', `/l/${'x'.repeat(300)}`, '/l', '/l/']) {
        const res = await t.app.inject({ method: 'GET', url: path });
        expect(res.statusCode, path).toBe(404);
        expect(res.body).toContain('This verification link does not exist');
      }
      expect((await t.app.inject({ method: 'POST', url: '/l/AAAAAAAAAAAAAAAAAAAAAA', headers: { origin: ORIGIN } })).statusCode).toBe(404);
      // A body the button never sends is a page too, not JSON.
      const odd = await t.app.inject({ method: 'POST', url: pathOf(link.url), headers: { origin: ORIGIN, 'content-type': 'text/plain' }, payload: 'x' });
      expect(odd.statusCode).toBe(415);
      expect(odd.headers['content-type']).toContain('text/html');
      expect(odd.body).toContain('This request could not be understood');
    });

    it('a live link whose wallet cannot cover a session says so and starts none', async () => {
      const owner = await portalOrg(db(), { fund: 0 });
      const link = await makeLink(owner, {}, 'live');
      const res = await start(link.url);
      expect(res.statusCode).toBe(503);
      expect(res.body).toContain('Verification is not available right now');
      expect(res.body).not.toContain('TEST MODE');
      expect(await sessionsOf(owner.org.id)).toEqual([]);
    });

    it("a disabled organization's link says verification is not available and starts nothing", async () => {
      const owner = await portalOrg(db());
      const link = await makeLink(owner);
      await db().updateTable('organizations').set({ enabled: false }).where('id', '=', owner.org.id).execute();
      for (const res of [await visit(link.url), await start(link.url)]) {
        expect(res.statusCode).toBe(503);
        expect(res.body).toContain('Verification is not available right now');
        expect(res.body).not.toContain('Start verification');
      }
      expect(await sessionsOf(owner.org.id)).toEqual([]);
    });

    it('refuses a start posted from another site', async () => {
      const owner = await portalOrg(db());
      const link = await makeLink(owner);
      const res = await start(link.url, freshAddress(), { origin: 'https://evil.example' });
      expect(res.statusCode).toBe(403);
      expect(res.body).toContain('Open the link itself to start');
      const nullOrigin = await start(link.url, freshAddress(), { origin: 'null', 'sec-fetch-site': 'cross-site' });
      expect(nullOrigin.statusCode).toBe(403);
      expect(await sessionsOf(owner.org.id)).toEqual([]);
      expect((await start(link.url, freshAddress(), { 'sec-fetch-site': 'same-origin', origin: 'null' })).statusCode).toBe(303);
    });

    it('compares the whole origin: the same host with the other scheme or port is another site', async () => {
      const owner = await portalOrg(db());
      const link = await makeLink(owner, { sessionLimit: 10 });
      const foreign = await start(link.url, freshAddress(), { origin: 'https://evil.example' });
      expect(foreign.statusCode).toBe(403);
      // PUBLIC_URL is http://127.0.0.1:8080; the server is reached over http (app.inject).
      const otherOrigins: Record<string, string>[] = [
        { origin: 'https://127.0.0.1:8080', host: '127.0.0.1:8080' },
        { origin: 'https://vouch.example.com', host: 'vouch.example.com' },
        { origin: 'http://vouch.example.com:8443', host: 'vouch.example.com' },
        // X-Forwarded-Proto is believed only from a trusted proxy, and none is configured here.
        { origin: 'https://vouch.example.com', host: 'vouch.example.com', 'x-forwarded-proto': 'https' },
      ];
      for (const headers of otherOrigins) {
        const res = await start(link.url, freshAddress(), headers);
        expect([res.statusCode, res.body], JSON.stringify(headers)).toEqual([foreign.statusCode, foreign.body]);
      }
      expect(await sessionsOf(owner.org.id)).toEqual([]);

      // The public origin, and the origin the server is reached at, as browsers write them.
      for (const headers of [
        { origin: 'http://127.0.0.1:8080', host: '127.0.0.1:8080' },
        { origin: 'http://127.0.0.1:8080', host: 'vouch.example.com' },
        { origin: 'http://vouch.example.com', host: 'vouch.example.com' },
        { origin: 'http://vouch.example.com', host: 'Vouch.Example.com:80' },
      ]) {
        expect((await start(link.url, freshAddress(), headers)).statusCode, JSON.stringify(headers)).toBe(303);
      }
    });

    it('behind a trusted proxy, the scheme is the one the proxy names', async () => {
      // The test clients' addresses (freshAddress) are the proxy's.
      const proxied = await buildApp({ config: testConfig({ trustProxy: loadConfig({ VOUCH_TRUST_PROXY: '10.0.0.0/8' }).trustProxy }), database: t.database });
      try {
        const owner = await portalOrg(db());
        const link = await makeLink(owner);
        const startVia = (headers: Record<string, string>) =>
          proxied.inject({ method: 'POST', url: pathOf(link.url), remoteAddress: freshAddress(), headers: { 'content-type': 'application/x-www-form-urlencoded', host: 'vouch.example.com', 'x-forwarded-proto': 'https', ...headers }, payload: '' });
        const plain = await startVia({ origin: 'http://vouch.example.com' });
        expect(plain.statusCode).toBe(403);
        expect(plain.body).toContain('Open the link itself to start');
        expect(await sessionsOf(owner.org.id)).toEqual([]);
        expect((await startVia({ origin: 'https://vouch.example.com' })).statusCode).toBe(303);
      } finally {
        await proxied.close();
      }
    });

    it('limits starts per client address per link, with a page and Retry-After', async () => {
      const owner = await portalOrg(db());
      const link = await makeLink(owner, { sessionLimit: 100 });
      const other = await makeLink(owner, { sessionLimit: 100 });
      const ip = freshAddress();
      for (let i = 0; i < LINK_STARTS_PER_ADDRESS; i++) expect((await start(link.url, ip)).statusCode).toBe(303);
      const limited = await start(link.url, ip);
      expect(limited.statusCode).toBe(429);
      expect(limited.headers['retry-after']).toMatch(/^\d+$/);
      expect(limited.body).toContain('Too many tries');
      expect(await sessionsOf(owner.org.id)).toHaveLength(LINK_STARTS_PER_ADDRESS);
      // Another link from the same address, and the same link from another address, still start.
      expect((await start(other.url, ip)).statusCode).toBe(303);
      expect((await start(link.url)).statusCode).toBe(303);
    });

    it('the log redacts a link code wherever a URL or message holds one', () => {
      expect(redactUrl('/l/gA-8uxgMulRhrZJgk9jbiA')).toBe('/l/[redacted]');
      expect(redactUrl('/l/gA-8uxgMulRhrZJgk9jbiA?utm_source=poster')).toBe('/l/[redacted]?[redacted]');
      expect(redactUrl('/%6C/gA-8uxgMulRhrZJgk9jbiA')).toBe('/l/[redacted]');
    });

    it('concurrent visits never start more sessions than the limit', async () => {
      const owner = await portalOrg(db());
      const link = await makeLink(owner, { sessionLimit: 5 });
      const answers = await Promise.all(Array.from({ length: 24 }, () => start(link.url)));
      const statuses = answers.map((res) => res.statusCode);
      expect(statuses.filter((status) => status === 303)).toHaveLength(5);
      expect(statuses.filter((status) => status === 410)).toHaveLength(19);
      expect(await sessionsOf(owner.org.id)).toHaveLength(5);
      const row = await db().selectFrom('verification_links').select(['sessions_started', 'session_limit']).where('public_id', '=', link.id).executeTakeFirstOrThrow();
      expect(row).toEqual({ sessions_started: 5, session_limit: 5 });
    });
  });

  describe("the ID steps of a link's sessions", () => {
    let numbers = 0;
    /** A BVN no registry holds: its ID step answers 422, the same for every such number. */
    const unknownBvn = () => `2299${String(++numbers).padStart(7, '0')}`;
    const ID_ONLY = { idTypes: ['BVN'], checks: { liveness: false, faceMatch: false } };

    /** A visitor starts a session from the link and accepts the consent; answers the session's token. */
    async function linkSession(url: string, ip = freshAddress()) {
      const started = await start(url, ip);
      expect(started.statusCode, started.body).toBe(303);
      const token = started.headers.location!.split('/verify/')[1]!;
      const consent = await t.app.inject({ method: 'POST', url: `/verify/api/${token}/consent`, remoteAddress: ip, payload: { accepted: true } });
      expect(consent.statusCode, consent.body).toBe(200);
      return token;
    }
    const submitId = (token: string, idNumber: string, ip: string) =>
      t.app.inject({ method: 'POST', url: `/verify/api/${token}/id`, remoteAddress: ip, payload: { idType: 'BVN', idNumber } });
    const sessionOf = (token: string) =>
      db()
        .selectFrom('verification_sessions as s')
        .innerJoin('session_tokens as k', 'k.session_id', 's.id')
        .select(['s.public_id', 's.id_attempts', 's.usage_id', 's.price', 's.status'])
        .where('k.token_hash', '=', hashToken(token))
        .executeTakeFirstOrThrow();
    const charges = async (orgId: string) =>
      (await db().selectFrom('ledger_entries').select(['kind', 'amount']).where('org_id', '=', orgId).where('kind', 'in', ['charge', 'refund']).orderBy('id').execute()).map((row) => [row.kind, Number(row.amount)]);
    const stepsOf = async (linkId: string) =>
      db()
        .selectFrom('link_id_steps as s')
        .innerJoin('verification_links as l', 'l.id', 's.link_id')
        .select(['s.address_key', 's.tried_at'])
        .where('l.public_id', '=', linkId)
        .execute();
    const linkView = async (owner: PortalOrg, linkId: string, mode: 'test' | 'live') =>
      ((await portal(t.app, owner.owner, { method: 'GET', url: `/api/orgs/${owner.org.id}/links?mode=${mode}` })).json().data as Record<string, unknown>[]).find((link) => link.id === linkId)!;

    it(`one client address gets ${LINK_ID_TRIES_PER_ADDRESS} ID tries an hour through one link, whichever sessions they are in (an IPv6 client by its /64); the next is 429 with Retry-After, nothing looked up or charged`, async () => {
      const owner = await portalOrg(db(), { fund: 1_000_000 });
      const link = await makeLink(owner, { ...ID_ONLY, sessionLimit: 20 }, 'live');
      const other = await makeLink(owner, { ...ID_ONLY, sessionLimit: 20 }, 'live');
      const home = '2001:db8:7:1::10';
      const sameHome = '2001:db8:7:1:aaaa:bbbb:cccc:dddd';
      // Two sessions' tries, every one spent: two sessions paid.
      for (let session = 0; session < LINK_ID_TRIES_PER_ADDRESS / 3; session++) {
        const token = await linkSession(link.url, home);
        for (let i = 0; i < 3; i++) expect((await submitId(token, unknownBvn(), session % 2 ? sameHome : home)).statusCode).not.toBe(429);
      }
      const balance = await balanceOf(db(), owner.org.id);
      expect(balance).toBe(1_000_000 - 2 * PRICE);
      const asked = registry.asked.length;

      // A new session from another address of the same /64: refused before its lookup and its charge.
      const token = await linkSession(link.url, home);
      const refused = await submitId(token, TANKO.bvn, sameHome);
      expect(refused.statusCode, refused.body).toBe(429);
      expect(refused.json()).toMatchObject({ status: 'error', code: 'RATE_LIMITED', message: expect.stringContaining('Too many ID checks from your network') });
      const retryAfter = Number(refused.headers['retry-after']);
      expect(retryAfter).toBeGreaterThan(3500);
      expect(retryAfter).toBeLessThanOrEqual(3600);
      expect(registry.asked).toHaveLength(asked);
      expect(await balanceOf(db(), owner.org.id)).toBe(balance);
      expect(await sessionOf(token)).toMatchObject({ id_attempts: 0, usage_id: null, status: 'in_progress' });
      expect((await t.app.inject({ method: 'GET', url: `/verify/api/${token}`, remoteAddress: home })).json()).toMatchObject({ step: 'id', attemptsLeft: { id: 3 } });

      // Another address, and the same address through another link, are not held back.
      const elsewhere = await submitId(token, TANKO.bvn, freshAddress());
      expect(elsewhere.statusCode, elsewhere.body).toBe(200);
      expect(elsewhere.json()).toMatchObject({ step: 'done', result: { outcome: 'verified' } });
      const viaOther = await submitId(await linkSession(other.url, home), TANKO.bvn, home);
      expect(viaOther.statusCode, viaOther.body).toBe(200);
      expect(registry.asked.slice(asked)).toEqual([TANKO.bvn, TANKO.bvn]);

      // The tries are kept as a blind index of the link and the address, never the address.
      const steps = await stepsOf(link.id);
      expect(steps).toHaveLength(LINK_ID_TRIES_PER_ADDRESS + 1);
      for (const step of steps) expect(step.address_key).toMatch(/^[0-9a-f]{64}$/);
      expect(JSON.stringify(steps)).not.toContain('2001:db8');
      // An hour on, the address tries again; and the expiry task forgets tries past their window.
      await db().updateTable('link_id_steps').set({ tried_at: new Date(Date.now() - 3_600_001) }).execute();
      expect((await submitId(await linkSession(link.url, home), unknownBvn(), home)).statusCode).toBe(422);
      expect(await forgetLinkIdSteps(db(), new Date())).toBeGreaterThanOrEqual(LINK_ID_TRIES_PER_ADDRESS + 2);
      expect(await stepsOf(link.id)).toHaveLength(1);
    });

    it(`one link gets ${LINK_ID_TRIES_PER_LINK} ID tries a minute from all addresses together; then 429 with Retry-After to every address, in test mode too, and a cap never binds at a test price of 0`, async () => {
      const owner = await portalOrg(db());
      const link = await makeLink(owner, { ...ID_ONLY, sessionLimit: 100, spendLimit: 1 });
      const other = await makeLink(owner, { ...ID_ONLY, sessionLimit: 100 });
      for (let session = 0; session < LINK_ID_TRIES_PER_LINK / 3; session++) {
        const ip = freshAddress();
        const token = await linkSession(link.url, ip);
        for (let i = 0; i < 3; i++) expect((await submitId(token, unknownBvn(), ip)).statusCode).not.toBe(429);
      }
      const ip = freshAddress();
      const token = await linkSession(link.url, ip);
      const refused = await submitId(token, '22345678901', ip);
      expect(refused.statusCode, refused.body).toBe(429);
      expect(refused.json()).toMatchObject({ status: 'error', code: 'RATE_LIMITED', message: expect.stringContaining('This verification link is taking too many ID checks') });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
      expect(await sessionOf(token)).toMatchObject({ id_attempts: 0 });
      // Another link is not held back.
      const elsewhere = freshAddress();
      expect((await submitId(await linkSession(other.url, elsewhere), '22345678901', elsewhere)).statusCode).toBe(200);
      // A minute on, the link takes ID steps again: the sandbox identity passes.
      await db().updateTable('link_id_steps').set({ tried_at: new Date(Date.now() - 61_000) }).execute();
      const passed = await submitId(token, '22345678901', ip);
      expect(passed.statusCode, passed.body).toBe(200);
      expect(passed.json()).toMatchObject({ step: 'done', result: { outcome: 'verified' } });
      expect(await linkView(owner, link.id, 'test')).toMatchObject({ spendLimit: 1, spent: 0, status: 'active' });
    });

    it("a live link's spend cap: the ID step whose charge would pass it is 402 with an empty wallet's message, before any lookup; the portal shows spent and the cap, and the link is spent until the cap is raised", async () => {
      const owner = await portalOrg(db(), { fund: 1_000_000 });
      const link = await makeLink(owner, { ...ID_ONLY, sessionLimit: 10, spendLimit: 2 * PRICE }, 'live');
      expect(link).toMatchObject({ spendLimit: 2 * PRICE, spent: 0, status: 'active' });
      // Three visitors start while the cap still pays for one more each time.
      const first = await linkSession(link.url);
      const second = await linkSession(link.url);
      const third = await linkSession(link.url);
      expect((await submitId(first, TANKO.bvn, freshAddress())).json()).toMatchObject({ result: { outcome: 'verified' } });
      const ip = freshAddress();
      expect((await submitId(second, unknownBvn(), ip)).statusCode).toBe(422);
      const asked = registry.asked.length;

      const refused = await submitId(third, TANKO.bvn, freshAddress());
      expect(refused.statusCode, refused.body).toBe(402);
      expect(refused.json()).toEqual({
        status: 'error',
        code: 'PAYMENT_REQUIRED',
        message: 'The organization that asked for this verification cannot take it further just now. Please try again later, or contact them.',
        requestId: refused.headers['x-request-id'],
      });
      expect(registry.asked).toHaveLength(asked);
      expect(await sessionOf(third)).toMatchObject({ id_attempts: 0, usage_id: null, price: 0 });
      expect(await charges(owner.org.id)).toEqual([['charge', -PRICE], ['charge', -PRICE]]);
      expect(await balanceOf(db(), owner.org.id)).toBe(1_000_000 - 2 * PRICE);
      // A session that already paid keeps its tries: the cap is on charges.
      expect((await submitId(second, unknownBvn(), ip)).statusCode).toBe(422);
      expect(registry.asked).toHaveLength(asked + 1);

      // The portal shows it, and the link starts no session it could not pay for.
      expect(await linkView(owner, link.id, 'live')).toMatchObject({ spendLimit: 2 * PRICE, spent: 2 * PRICE, status: 'spent', sessionsStarted: 3 });
      const started = await start(link.url);
      expect(started.statusCode).toBe(410);
      expect(started.body).toContain('This verification link has been used up');
      expect(await sessionsOf(owner.org.id)).toHaveLength(3);

      // The cap cannot go below what was paid; raised, the waiting session pays and passes.
      const edit = (payload: Record<string, unknown>) => portal(t.app, owner.owner, { method: 'PATCH', url: `/api/orgs/${owner.org.id}/links/${link.id}?mode=live`, payload });
      const below = await edit({ spendLimit: PRICE });
      expect(below.statusCode).toBe(400);
      expect(below.json()).toMatchObject({ status: 'error', code: 'VALIDATION_ERROR', message: `spendLimit cannot be below the ${(2 * PRICE).toLocaleString('en')} kobo the link's sessions have already paid` });
      expect((await edit({ spendLimit: 3 * PRICE })).json()).toMatchObject({ spendLimit: 3 * PRICE, spent: 2 * PRICE, status: 'active' });
      expect((await submitId(third, TANKO.bvn, freshAddress())).json()).toMatchObject({ result: { outcome: 'verified' } });
      expect(await balanceOf(db(), owner.org.id)).toBe(1_000_000 - 3 * PRICE);
      expect((await edit({ spendLimit: null })).json()).toMatchObject({ spendLimit: null, spent: 3 * PRICE, status: 'active' });
    });

    it('concurrent first ID steps of sessions of one capped link: only as many pay as the cap allows', async () => {
      const owner = await portalOrg(db(), { fund: 1_000_000 });
      const link = await makeLink(owner, { ...ID_ONLY, sessionLimit: 10, spendLimit: PRICE }, 'live');
      const tokens = [];
      for (let i = 0; i < 6; i++) tokens.push(await linkSession(link.url));
      const asked = registry.asked.length;
      const answers = await Promise.all(tokens.map((token) => submitId(token, TANKO.bvn, freshAddress())));
      const statuses = answers.map((res) => res.statusCode).sort();
      expect(statuses).toEqual([200, 402, 402, 402, 402, 402]);
      expect(registry.asked).toHaveLength(asked + 1);
      expect(await charges(owner.org.id)).toEqual([['charge', -PRICE]]);
      expect(await balanceOf(db(), owner.org.id)).toBe(1_000_000 - PRICE);
      expect(await linkView(owner, link.id, 'live')).toMatchObject({ spent: PRICE, status: 'spent' });
    });

    it('the portal API sets, reads, changes and clears the spend cap (audited); a bad value is a portal-style 400 naming spendLimit', async () => {
      const owner = await portalOrg(db());
      const link = await makeLink(owner, { spendLimit: 500_000 }, 'live');
      expect(link).toMatchObject({ spendLimit: 500_000, spent: 0 });
      expect((await auditOf(owner.org.id)).at(-1)!.after).toMatchObject({ spendLimit: 500_000 });
      expect((await auditOf(owner.org.id)).at(-1)!.after).not.toHaveProperty('spent');
      expect(await makeLink(owner, {}, 'live')).toMatchObject({ spendLimit: null, spent: 0 });

      for (const spendLimit of [0, -20_000, 100_000_000_001]) {
        const bad = await create(owner, { spendLimit }, 'live');
        expect(bad.statusCode, String(spendLimit)).toBe(400);
        expect(bad.json()).toMatchObject({ status: 'error', code: 'VALIDATION_ERROR', message: expect.stringContaining('spendLimit must be a whole number of kobo from 1 to 100,000,000,000') });
      }
      for (const spendLimit of [1.5, 'lots']) {
        const bad = await create(owner, { spendLimit }, 'live');
        expect(bad.statusCode, String(spendLimit)).toBe(400);
        expect(bad.json()).toMatchObject({ status: 'error', code: 'VALIDATION_ERROR', message: expect.stringContaining('spendLimit') });
      }
      const edit = (payload: Record<string, unknown>) => portal(t.app, owner.owner, { method: 'PATCH', url: `/api/orgs/${owner.org.id}/links/${link.id}?mode=live`, payload });
      const zero = await edit({ spendLimit: 0 });
      expect(zero.statusCode).toBe(400);
      expect(zero.json()).toMatchObject({ status: 'error', code: 'VALIDATION_ERROR', message: expect.stringContaining('spendLimit must be a whole number of kobo') });
      const changed = await edit({ spendLimit: 60_000 });
      expect(changed.statusCode, changed.body).toBe(200);
      expect(changed.json()).toMatchObject({ spendLimit: 60_000, spent: 0, status: 'active' });
      expect((await auditOf(owner.org.id)).at(-1)).toMatchObject({ action: 'link.updated', before: { spendLimit: 500_000 }, after: { spendLimit: 60_000 } });
      expect((await edit({ spendLimit: null })).json()).toMatchObject({ spendLimit: null });
      expect((await auditOf(owner.org.id)).at(-1)).toMatchObject({ action: 'link.updated', before: { spendLimit: 60_000 }, after: { spendLimit: null } });
      // A cap below one session's price leaves a live link spent at once.
      expect((await edit({ spendLimit: PRICE - 1 })).json()).toMatchObject({ status: 'spent' });
      const page = await visit(link.url);
      expect(page.statusCode).toBe(410);
      expect(page.body).toContain('This verification link has been used up');
    });
  });
});
