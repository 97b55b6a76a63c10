import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWebContext, screenshot, watchErrors, type WebContext } from '../helpers/browser.js';
import { addMember, portalOrg, portalUser, type PortalOrg, type PortalUser } from '../helpers/portal.js';
import { noOverflow } from './verify-helpers.js';

/**
 * Verification links in a browser at phone width: an owner creates a link in the portal (after
 * the form has shown the server's field error), sees its QR code and link, and a person who opens
 * the link presses Start verification and reaches the hosted flow's first screen; the portal then
 * counts the session and lists it; turned off, the link shows its plain page. A live link's form
 * and card say what a public link exposes and take a spend cap. A viewer only looks.
 * With VOUCH_SCREENSHOTS=1, screenshots land in docs/images/links-*.png.
 */
let web: WebContext;
let made: PortalOrg;

beforeAll(async () => {
  web = await buildWebContext();
  made = await portalOrg(web.database.db);
}, 90_000);
afterAll(async () => {
  await web?.close();
});

async function signedIn(user: PortalUser): Promise<{ context: BrowserContext; page: Page }> {
  const opened = await web.newPage({ phone: true });
  const [name, value] = user.cookie.split('=') as [string, string];
  await opened.context.addCookies([{ name, value, url: web.baseUrl, httpOnly: true, sameSite: 'Lax' }]);
  return opened;
}

describe('verification links in the portal and on a phone', () => {
  it('creates a link with its QR code; opening it starts a session that reaches the hosted flow; the portal counts it', { timeout: 120_000 }, async () => {
    const { page } = await signedIn(made.owner);
    const errors = watchErrors(page);
    await page.goto('/links');
    await page.getByRole('heading', { name: 'Verification links' }).waitFor();
    await page.getByText('No links yet').waitFor();

    // The server's field error shows under its field.
    await page.getByLabel(/^Name/).fill('Market day, Kano');
    await page.getByLabel('Redirect URL (optional)').fill('ftp://example.com/after');
    await page.getByRole('button', { name: 'Create link' }).click();
    await page.getByText(/redirectUrl must be an absolute http\(s\) URL/).waitFor();
    expect(await page.getByRole('region', { name: /^Link / }).count()).toBe(0);

    await page.getByLabel('Redirect URL (optional)').fill('');
    await page.getByLabel(/^Session limit/).fill('2');
    await page.getByLabel('Reference prefix (optional)').fill('kano');
    await page.getByLabel('Metadata (optional)').fill('campaign=market-day\nregion = north');
    await page.getByRole('button', { name: 'Create link' }).click();
    const card = page.getByRole('region', { name: 'Link Market day, Kano' });
    await card.waitFor();
    const qr = card.getByRole('img', { name: 'QR code of the link Market day, Kano' });
    await qr.waitFor();
    expect(await qr.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
    expect(await card.getByText('0 of 2 sessions started', { exact: false }).isVisible()).toBe(true);
    const url = await card.getByRole('textbox', { name: 'Link to share' }).inputValue();
    expect(url).toMatch(new RegExp(`^${web.baseUrl}/l/[A-Za-z0-9_-]{22}$`));
    expect(await card.getByRole('link', { name: 'Download PNG' }).getAttribute('href')).toContain('/qr.png?mode=test');
    await noOverflow(page);
    await screenshot(page, 'links-portal');

    // Someone opens the link on their phone.
    const visitor = await web.newPage({ phone: true });
    const visitorErrors = watchErrors(visitor.page);
    await visitor.page.goto(url);
    await visitor.page.getByRole('heading', { name: `Verify your identity for ${made.org.name}` }).waitFor();
    await noOverflow(visitor.page);
    await screenshot(visitor.page, 'links-start');
    await visitor.page.getByRole('button', { name: 'Start verification' }).click();
    await visitor.page.waitForURL(/\/verify\/[A-Za-z0-9_-]{43}$/);
    await visitor.page.getByRole('heading', { name: /needs to confirm your identity/ }).waitFor();
    await visitor.page.getByRole('button', { name: 'I agree, continue' }).waitFor();
    expect(visitorErrors).toEqual([]);

    const sessions = await web.database.db.selectFrom('verification_sessions').select(['reference', 'link_id']).where('org_id', '=', made.org.id).execute();
    expect(sessions).toEqual([{ reference: expect.stringMatching(/^kano-[0-9a-f]{12}$/), link_id: expect.any(Number) }]);
    const stored = await web.database.db.selectFrom('verification_links').select('metadata').where('org_id', '=', made.org.id).executeTakeFirstOrThrow();
    expect(stored.metadata).toEqual({ campaign: 'market-day', region: 'north' });

    // The portal counts it and lists it.
    await page.reload();
    await card.getByText('1 of 2 sessions started', { exact: false }).waitFor();
    await card.getByRole('button', { name: 'Sessions (1)' }).click();
    const table = card.getByRole('table', { name: 'Sessions started from Market day, Kano' });
    await table.getByRole('cell', { name: sessions[0]!.reference }).waitFor();
    // Each session opens in the verifications explorer.
    const sessionId = (await web.database.db.selectFrom('verification_sessions').select('public_id').where('org_id', '=', made.org.id).executeTakeFirstOrThrow()).public_id;
    expect(await table.getByRole('link', { name: sessionId }).getAttribute('href')).toBe(`/verifications/sessions/${sessionId}`);

    // Turned off: the link says so and starts nothing.
    await card.getByRole('button', { name: 'Turn off' }).click();
    await card.getByText('turned off').waitFor();
    await visitor.page.goto(url);
    await visitor.page.getByRole('heading', { name: 'This verification link has been turned off' }).waitFor();
    expect(await visitor.page.getByRole('button', { name: 'Start verification' }).count()).toBe(0);
    await noOverflow(visitor.page);
    await screenshot(visitor.page, 'links-turned-off');
    // The one refused create (the bad redirect URL) is the only failed request.
    expect(errors).toEqual(['Failed to load resource: the server responded with a status of 400 (Bad Request)']);
  });

  it('edits a link: the server’s errors show next to their fields, then the new limit, redirect and prefix are saved and shown', { timeout: 90_000 }, async () => {
    const owner = await portalOrg(web.database.db);
    const { page } = await signedIn(owner.owner);
    const errors = watchErrors(page);
    await page.goto('/links');
    await page.getByLabel(/^Name/).fill('Branch poster');
    await page.getByLabel(/^Session limit/).fill('5');
    await page.getByRole('button', { name: 'Create link' }).click();
    const card = page.getByRole('region', { name: 'Link Branch poster' });
    await card.waitFor();
    const url = await card.getByRole('textbox', { name: 'Link to share' }).inputValue();
    // Two people start from the link.
    for (let i = 0; i < 2; i++) {
      const res = await fetch(url, { method: 'POST', headers: { origin: web.baseUrl, 'content-type': 'application/x-www-form-urlencoded' }, body: '', redirect: 'manual' });
      expect(res.status).toBe(303);
    }
    await page.reload();
    await card.getByText('2 of 5 sessions started', { exact: false }).waitFor();

    await card.getByRole('button', { name: 'Edit' }).click();
    const form = card.getByRole('form', { name: 'Edit the link Branch poster' });
    await form.getByLabel(/^Session limit/).fill('1');
    await form.getByLabel('Redirect URL (optional)').fill('javascript:alert(1)');
    await noOverflow(page);
    await form.getByRole('button', { name: 'Save changes' }).click();
    await form.getByText('sessionLimit cannot be below the 2 sessions already started from this link').waitFor();
    await form.getByText(/redirectUrl must be an absolute http\(s\) URL/).waitFor();
    // Nothing typed was lost.
    expect(await form.getByLabel('Redirect URL (optional)').inputValue()).toBe('javascript:alert(1)');
    await screenshot(page, 'links-edit-errors');

    await form.getByLabel(/^Session limit/).fill('2');
    await form.getByLabel('Redirect URL (optional)').fill('https://shop.example.com/done');
    await form.getByLabel('Reference prefix (optional)').fill('poster');
    await form.getByRole('button', { name: 'Save changes' }).click();
    await form.waitFor({ state: 'detached' });
    await card.getByText('2 of 2 sessions started', { exact: false }).waitFor();
    await card.getByText('used up').waitFor();
    await card.getByText('references poster-…', { exact: false }).waitFor();
    await card.getByText('then to https://shop.example.com/done', { exact: false }).waitFor();
    const stored = await web.database.db.selectFrom('verification_links').select(['session_limit', 'redirect_url', 'reference_prefix']).where('org_id', '=', owner.org.id).executeTakeFirstOrThrow();
    expect(stored).toEqual({ session_limit: 2, redirect_url: 'https://shop.example.com/done', reference_prefix: 'poster' });
    expect(errors).toEqual(['Failed to load resource: the server responded with a status of 400 (Bad Request)']);
  });

  it('a live link: the form says what a public link exposes and takes a spend cap (the server’s error next to it); the card shows spent of the cap and the note', { timeout: 90_000 }, async () => {
    const owner = await portalOrg(web.database.db);
    const { page } = await signedIn(owner.owner);
    const errors = watchErrors(page);
    await page.goto('/links');
    const mode = page.getByRole('radiogroup', { name: 'Mode' });
    await mode.getByText('Live').click();
    const form = page.getByRole('form', { name: 'Create a verification link' });
    await form.getByRole('heading', { name: 'Create a live link' }).waitFor();
    const note = form.getByRole('note').filter({ hasText: 'A live link is public' });
    await note.waitFor();
    for (const text of [
      'Anyone who has the link or a photo of its QR code can start a verification',
      'Each verification that reaches the ID step costs the session price (₦200.00) from your wallet',
      'The person learns whether the ID number they type is valid',
      'Set a session limit and a spend cap below, and turn the link off when you are done.',
    ]) {
      expect(await note.getByText(text, { exact: false }).isVisible(), text).toBe(true);
    }
    await form.getByLabel(/^Name/).fill('Branch poster, Ikeja');
    await form.getByLabel(/^Session limit/).fill('25');
    // The server names a cap of nothing under its field.
    await form.getByLabel(/^Spend cap/).fill('0');
    await form.getByRole('button', { name: 'Create link' }).click();
    await form.getByText(/spendLimit must be a whole number of kobo from 1/).waitFor();
    await noOverflow(page);
    await screenshot(page, 'links-live-form');

    await form.getByLabel(/^Spend cap/).fill('5000');
    await form.getByRole('button', { name: 'Create link' }).click();
    const card = page.getByRole('region', { name: 'Link Branch poster, Ikeja' });
    await card.waitFor();
    await card.getByText('₦0.00 spent of a ₦5,000.00 spend cap', { exact: false }).waitFor();
    const cardNote = card.getByRole('note').filter({ hasText: 'A live link is public' });
    await cardNote.getByText('This link may spend at most ₦5,000.00 in all', { exact: false }).waitFor();
    const stored = await web.database.db.selectFrom('verification_links').select(['mode', 'spend_limit', 'session_limit']).where('org_id', '=', owner.org.id).executeTakeFirstOrThrow();
    expect(stored).toEqual({ mode: 'live', spend_limit: 500_000, session_limit: 25 });

    // Edited: the cap cleared, and the card says there is none.
    await card.getByRole('button', { name: 'Edit' }).click();
    const edit = card.getByRole('form', { name: 'Edit the link Branch poster, Ikeja' });
    expect(await edit.getByLabel(/^Spend cap/).inputValue()).toBe('₦5,000');
    await edit.getByLabel(/^Spend cap/).fill('');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await edit.waitFor({ state: 'detached' });
    await card.getByText('no spend cap', { exact: false }).first().waitFor();
    await cardNote.getByText('This link has no spend cap', { exact: false }).waitFor();
    await noOverflow(page);
    expect((await web.database.db.selectFrom('verification_links').select('spend_limit').where('org_id', '=', owner.org.id).executeTakeFirstOrThrow()).spend_limit).toBeNull();
    expect(errors).toEqual(['Failed to load resource: the server responded with a status of 400 (Bad Request)']);
  });

  it('a viewer sees the links but no form and no Turn off button', { timeout: 60_000 }, async () => {
    const viewer = await portalUser(web.database.db);
    await addMember(web.database.db, made.org.id, viewer.personId, 'viewer');
    const { page } = await signedIn(viewer);
    await page.goto('/links');
    await page.getByText('Owners, admins and developers create and turn off links').waitFor();
    await page.getByRole('region', { name: 'Link Market day, Kano' }).waitFor();
    expect(await page.getByRole('button', { name: 'Create link' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^Turn (on|off)$/ }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Edit' }).count()).toBe(0);
  });
});
