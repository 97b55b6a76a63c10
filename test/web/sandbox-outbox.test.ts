import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWebContext, screenshot, watchErrors, type WebContext } from '../helpers/browser.js';
import { addMember, portalOrg, portalUser, type PortalOrg } from '../helpers/portal.js';
import { GUARANTOR_BODY } from '../respondents/fixtures.js';

/**
 * The sandbox outbox as a developer on a phone uses it: a test-mode guarantor request, never
 * mailed, is found in the portal by its heading and opened through its link; the respondent page
 * says TEST MODE and can be answered. A viewer is told the page is not for their role.
 * With VOUCH_SCREENSHOTS=1: docs/images/sandbox-outbox.png.
 */
let web: WebContext;
let setup: PortalOrg;

beforeAll(async () => {
  web = await buildWebContext();
  // Not enabled: a just-signed-up organization works in test mode only.
  setup = await portalOrg(web.database.db, { enabled: false });
  await web.database.db.updateTable('organizations').set({ risk_level: 'LOW' }).where('id', '=', setup.org.id).execute();
}, 90_000);

afterAll(async () => {
  await web?.close();
});

async function signedIn(cookie: string) {
  const opened = await web.newPage({ phone: true });
  const [name, value] = cookie.split('=') as [string, string];
  await opened.context.addCookies([{ name, value, url: web.baseUrl }]);
  return opened;
}

describe('the sandbox outbox', () => {
  it('shows a test request that was never mailed, and its link opens the TEST MODE respondent page', { timeout: 120_000 }, async () => {
    const created = await fetch(`${web.baseUrl}/v1/verifications/guarantors`, {
      method: 'POST',
      headers: { authorization: `Bearer ${setup.org.testSecret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...GUARANTOR_BODY, email: 'guarantor@elsewhere.example.com' }),
    });
    expect(created.status).toBe(201);

    const { context, page } = await signedIn(setup.owner.cookie);
    const errors = watchErrors(page);
    await page.goto('/');
    await page.getByRole('button', { name: 'Open navigation' }).click();
    await page.getByRole('link', { name: 'Sandbox outbox' }).click();
    const message = page.getByRole('article', { name: `${setup.org.name}: will you stand as guarantor for Adaeze Okonkwo?` });
    await message.waitFor({ timeout: 15_000 });
    expect(await message.getByText('To guarantor@elsewhere.example.com', { exact: false }).isVisible()).toBe(true);
    expect(await message.getByText('not sent (test mode)', { exact: false }).isVisible()).toBe(true);
    await screenshot(page, 'sandbox-outbox');

    const [respondent] = await Promise.all([context.waitForEvent('page'), message.getByRole('link', { name: 'Open the respondent page (test)' }).click()]);
    await respondent.waitForLoadState();
    expect(new URL(respondent.url()).pathname).toMatch(/^\/respond\/[A-Za-z0-9_-]{43}$/);
    await respondent.getByRole('heading', { name: `TEST MODE — sample request from ${setup.org.name}, not a real request` }).waitFor();
    await respondent.getByLabel('No, I decline').check();
    await respondent.getByRole('button', { name: 'Send my answer' }).click();
    await respondent.getByRole('heading', { name: 'You declined' }).waitFor();
    expect(await respondent.getByRole('heading', { name: /^TEST MODE/ }).isVisible()).toBe(true);
    expect(errors).toEqual([]);
  });

  it('tells a viewer the page is not for their role', { timeout: 60_000 }, async () => {
    const viewer = await portalUser(web.database.db);
    await addMember(web.database.db, setup.org.id, viewer.personId, 'viewer');
    const { page } = await signedIn(viewer.cookie);
    await page.goto('/sandbox-outbox');
    await page.getByRole('heading', { name: 'Not available to your role' }).waitFor({ timeout: 15_000 });
    expect(await page.getByRole('article').count()).toBe(0);
  });
});
