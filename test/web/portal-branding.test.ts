import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWebContext, screenshot, watchErrors, type WebContext } from '../helpers/browser.js';
import { addMember, portalOrg, portalUser, type PortalOrg, type PortalUser } from '../helpers/portal.js';
import { createSession, customerSite, type CustomerSite } from './verify-helpers.js';

/**
 * The Verification flow page at phone width as an owner uses it: a colour too close to grey
 * refused before saving, the name, colour, default redirect and a logo saved, the preview showing
 * them; then a session created without a redirectUrl opened at its url shows the logo and the
 * colour, and returns to the default redirect. A viewer sees the settings and changes nothing.
 * The SDK on a site outside the allowed origins gets ORIGIN_NOT_ALLOWED and a page that says so.
 * With VOUCH_SCREENSHOTS=1: docs/images/portal-branding.png and verify-branded.png.
 */

let web: WebContext;
let site: CustomerSite;
let setup: PortalOrg;
let dir: string;
let logoFile: string;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'vouch-branding-web-'));
  web = await buildWebContext({ config: { dataDir: dir } });
  site = await customerSite(web.baseUrl);
  setup = await portalOrg(web.database.db);
  // A 600×600 logo: a gold disc on transparent ground, re-encoded by the server to 512 px.
  logoFile = path.join(dir, 'kolo-logo.png');
  const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="600" height="600"><circle cx="300" cy="300" r="280" fill="#e0a800"/><rect x="220" y="150" width="160" height="300" fill="#0a3d91"/></svg>';
  await sharp(Buffer.from(svg)).png().toFile(logoFile);
}, 120_000);

afterAll(async () => {
  await site?.close();
  await web?.close();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

async function signedIn(user: PortalUser): Promise<Page> {
  const { context, page } = await web.newPage({ phone: true });
  const [name, value] = user.cookie.split('=') as [string, string];
  await context.addCookies([{ name, value, url: web.baseUrl }]);
  return page;
}

async function noOverflow(page: Page): Promise<void> {
  expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
}

describe('the Verification flow page', () => {
  it('an owner brands the flow on a phone; a session opened at its url shows the logo and colour, and goes to the default redirect', { timeout: 180_000 }, async () => {
    const page = await signedIn(setup.owner);
    const errors = watchErrors(page);
    await page.goto('/');
    // Reached from the navigation, as a person would on a phone.
    await page.getByRole('button', { name: 'Open navigation' }).click();
    await page.getByRole('link', { name: 'Verification flow' }).click();
    await page.getByRole('heading', { name: 'Verification flow', level: 1 }).waitFor();
    await page.getByRole('heading', { name: 'Name, colour and defaults' }).waitFor();

    const preview = page.getByRole('figure', { name: 'Preview of the verification page' });
    await expect.poll(() => preview.getByText(`${setup.org.name} needs to confirm your identity`).isVisible()).toBe(true);

    await page.getByLabel('Name shown to people').fill('Kolo Bank');
    await expect.poll(() => preview.getByText('Kolo Bank needs to confirm your identity').isVisible()).toBe(true);

    // A colour on which no text is readable is refused before it reaches the server.
    const colour = page.getByRole('textbox', { name: 'Brand colour' });
    await colour.fill('#777777');
    await page.getByText(/Too close to mid-grey/).waitFor();
    expect(await page.getByRole('button', { name: 'Save settings' }).isDisabled()).toBe(true);
    await colour.fill('#0a3d91');
    await expect.poll(() => page.getByText(/Too close to mid-grey/).count()).toBe(0);
    await page.keyboard.press('Escape');
    await expect.poll(() => preview.getByText('I agree, continue').evaluate((el) => getComputedStyle(el).backgroundColor)).toBe('rgb(10, 61, 145)');

    // The server's own check, shown at its field: an http redirect.
    await page.getByLabel('Default redirect URL').fill('http://kolo.example.com/kyc/done');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText(/defaultRedirectUrl must be an absolute https URL/).waitFor();
    await page.getByLabel('Default redirect URL').fill(`${site.origin.replace('http://localhost', 'https://localhost')}/return`);
    await page.getByLabel('Allowed embedding origins').fill('https://kolo.example.com');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Saved: new sessions and pages already open show these settings.').waitFor();

    // The logo: chosen, uploaded, shown.
    await page.getByLabel('Logo file').setInputFiles(logoFile);
    await page.getByText('Logo saved.').waitFor();
    const current = page.getByRole('img', { name: 'Current logo of Kolo Bank' });
    await current.waitFor();
    await expect.poll(() => current.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(512);
    await page.getByText('512×512 px', { exact: false }).waitFor();
    await noOverflow(page);
    await screenshot(page, 'portal-branding');
    // The only failed request is the refused save (the browser logs its 400).
    expect(errors).toEqual(['Failed to load resource: the server responded with a status of 400 (Bad Request)']);

    // Audited.
    const actions = await web.database.db.selectFrom('audit_events').select('action').where('org_id', '=', setup.org.id).where('action', 'like', 'branding.%').orderBy('id').execute();
    expect(actions.map((row) => row.action)).toEqual(['branding.updated', 'branding.logo_set']);

    // A session made without redirectUrl gets the default; its page shows the logo and colour.
    const session = await createSession(web, setup.org.testSecret, { checks: { liveness: false, faceMatch: false } });
    expect((session as unknown as { redirectUrl: string }).redirectUrl).toBe(`${site.origin.replace('http://localhost', 'https://localhost')}/return`);
    const { page: person } = await web.newPage({ phone: true });
    const personErrors = watchErrors(person);
    await person.goto(session.url);
    await person.getByRole('heading', { name: 'Kolo Bank needs to confirm your identity' }).waitFor();
    const logo = person.locator('header img.logo');
    await expect.poll(() => logo.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(512);
    const agree = person.getByRole('button', { name: 'I agree, continue' });
    expect(await agree.evaluate((el) => getComputedStyle(el).backgroundColor)).toBe('rgb(10, 61, 145)');
    expect(await agree.evaluate((el) => getComputedStyle(el).color)).toBe('rgb(255, 255, 255)');
    expect(await person.locator('meta[name="theme-color"]').getAttribute('content')).toBe('#0a3d91');
    await noOverflow(person);
    await screenshot(person, 'verify-branded');
    expect(personErrors).toEqual([]);
  });

  it('a viewer sees the settings read-only, with no upload', { timeout: 60_000 }, async () => {
    const viewer = await portalUser(web.database.db);
    await addMember(web.database.db, setup.org.id, viewer.personId, 'viewer');
    const page = await signedIn(viewer);
    await page.goto('/verification-flow');
    await page.getByText('Your role sees these settings; owners and admins change them.').waitFor();
    expect(await page.getByLabel('Name shown to people').inputValue()).toBe('Kolo Bank');
    expect(await page.getByLabel('Name shown to people').getAttribute('readonly')).not.toBeNull();
    expect(await page.getByRole('button', { name: 'Save settings' }).count()).toBe(0);
    expect(await page.getByLabel('Logo file').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Remove logo' }).count()).toBe(0);
  });

  it('the SDK on a site outside the allowed origins: onError ORIGIN_NOT_ALLOWED and a page that says so, nothing of the session', { timeout: 90_000 }, async () => {
    // The org's list holds https://kolo.example.com only; the demo site is http://localhost:N.
    const session = await createSession(web, setup.org.testSecret);
    const { page } = await web.newPage({ phone: true });
    await page.goto(`${site.origin}/sdk-demo.html`);
    await page.getByLabel('Client secret (vcs_...)').fill(session.clientSecret);
    await page.getByRole('button', { name: 'Verify my identity' }).click();
    const frame = page.frameLocator('iframe[title="Verify your identity"]');
    await frame.getByRole('heading', { name: 'Cannot be shown here' }).waitFor();
    await expect
      .poll(() => page.getByRole('list', { name: 'What happened' }).getByRole('listitem').allTextContents())
      .toEqual([expect.stringMatching(/^Error: ORIGIN_NOT_ALLOWED This website is not allowed to show this verification/)]);
    expect(await frame.getByText('Kolo Bank').count()).toBe(0);
    // Once the demo site's origin is allowed, the same session opens in the window.
    await web.database.db.updateTable('organization_branding').set({ allowed_origins: ['https://kolo.example.com', site.origin] }).where('org_id', '=', setup.org.id).execute();
    await page.getByRole('button', { name: 'Close verification' }).click();
    await page.getByRole('button', { name: 'Verify my identity' }).click();
    await frame.getByRole('heading', { name: 'Kolo Bank needs to confirm your identity' }).waitFor();
  });
});
