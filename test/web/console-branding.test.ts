import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWebContext, screenshot, watchErrors, type WebContext } from '../helpers/browser.js';
import { operatorUser, portal, portalOrg } from '../helpers/portal.js';
import { noOverflow } from './verify-helpers.js';

/**
 * An organization's verification-flow branding on its console page, in Chromium at phone width:
 * the operator reads the display name, colour, logo (the image itself), default redirect and
 * allowed origins, with nothing to change. With VOUCH_SCREENSHOTS=1: docs/images/console-branding.png.
 */
let web: WebContext;

beforeAll(async () => {
  web = await buildWebContext();
}, 90_000);
afterAll(async () => {
  await web?.close();
});

describe("an organization's branding in the console (phone width)", () => {
  it('shows what the owners set, the logo loaded, read-only', { timeout: 90_000 }, async () => {
    const { org, owner } = await portalOrg(web.database.db);
    const headers = { origin: web.baseUrl };
    const saved = await portal(web.app, owner, {
      method: 'PUT',
      url: `/api/orgs/${org.id}/branding`,
      headers,
      payload: { displayName: 'Kolo Pay', colour: '#0b5cad', defaultRedirectUrl: 'https://kolo.example.com/done', allowedOrigins: ['https://kolo.example.com'] },
    });
    expect(saved.statusCode, saved.body).toBe(200);
    const png = await sharp({ create: { width: 96, height: 32, channels: 3, background: '#0b5cad' } }).png().toBuffer();
    expect((await portal(web.app, owner, { method: 'PUT', url: `/api/orgs/${org.id}/branding/logo`, headers, payload: { image: png.toString('base64') } })).statusCode).toBe(200);
    const bare = await portalOrg(web.database.db);

    const operator = await operatorUser(web.app, web.database.db, { origin: web.baseUrl });
    const [name, value] = operator.cookie.split('=') as [string, string];
    const { context, page } = await web.newPage({ phone: true });
    await context.addCookies([{ name, value, url: web.baseUrl }]);
    const errors = watchErrors(page);

    await page.goto(`/console/organizations/${org.id}`);
    const section = page.getByRole('region', { name: 'Verification flow branding' });
    const table = section.getByRole('table', { name: 'Branding' });
    await table.getByRole('cell', { name: 'Kolo Pay' }).waitFor();
    await table.getByText('#0b5cad').waitFor();
    await table.getByRole('cell', { name: 'Set (96×32, 1 KB)' }).waitFor();
    await table.getByRole('cell', { name: 'https://kolo.example.com/done' }).waitFor();
    await table.getByRole('cell', { name: 'https://kolo.example.com', exact: true }).waitFor();
    const logo = section.getByRole('img', { name: 'Logo of Kolo Pay' });
    await logo.waitFor();
    await expect.poll(() => logo.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth === 96)).toBe(true);
    // Read-only: nothing to press or type in the section.
    expect(await section.getByRole('button').count()).toBe(0);
    expect(await section.getByRole('textbox').count()).toBe(0);
    await section.scrollIntoViewIfNeeded();
    await noOverflow(page);
    await screenshot(page, 'console-branding');

    await page.goto(`/console/organizations/${bare.org.id}`);
    const defaults = page.getByRole('region', { name: 'Verification flow branding' }).getByRole('table', { name: 'Branding' });
    await defaults.getByText("(the organization's name)").waitFor();
    await defaults.getByRole('cell', { name: "Vouch's own" }).waitFor();
    await defaults.getByRole('cell', { name: 'Any origin the SDK names' }).waitFor();
    expect(await page.getByRole('img', { name: /^Logo of / }).count()).toBe(0);
    expect(errors).toEqual([]);
  });
});
