import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOWHERE_WEBHOOK_URL } from '../helpers/app.js';
import { buildWebContext, screenshot, watchErrors, type WebContext } from '../helpers/browser.js';
import { addMember, operatorUser, portalUser, type PortalUser } from '../helpers/portal.js';
import { completeWithHelper, createSession, livenessAttempt, stillPhoto, toLiveness } from '../portal/session-fixtures.js';
import { httpClient } from '../sessions/fixtures.js';

/**
 * The console's Sessions page as an operator uses it, in Chromium at phone width: test-mode
 * sessions of two organizations, one of them hit by replayed frames; the page shows the counts,
 * the pass rate, the reasons ranked with their change, and the attacked organization's replays;
 * narrowing to the other organization leaves them out. A customer is refused.
 * With VOUCH_SCREENSHOTS=1: docs/images/console-sessions.png.
 */
let web: WebContext;
let operator: PortalUser;

beforeAll(async () => {
  web = await buildWebContext({ webhookUrl: NOWHERE_WEBHOOK_URL });
  operator = await operatorUser(web.app, web.database.db, { origin: web.baseUrl });
  const http = httpClient(web.baseUrl);
  const quiet = await web.org({ name: 'Quiet Savings' });
  await completeWithHelper(http, quiet.testSecret, await createSession(http, quiet.testSecret), 'verified');
  await completeWithHelper(http, quiet.testSecret, await createSession(http, quiet.testSecret), 'failed', 'FACE_MISMATCH');
  const attacked = await web.org({ name: 'Attacked Microfinance' });
  const frames = await stillPhoto(87);
  const first = await createSession(http, attacked.testSecret);
  await toLiveness(http, first);
  await livenessAttempt(http, first, frames);
  for (let i = 0; i < 2; i++) {
    const replay = await createSession(http, attacked.testSecret);
    await toLiveness(http, replay);
    await livenessAttempt(http, replay, frames);
  }
}, 180_000);
afterAll(async () => {
  await web?.close();
});

async function signedIn(user: PortalUser): Promise<Page> {
  const { context, page } = await web.newPage({ phone: true });
  const [name, value] = user.cookie.split('=') as [string, string];
  await context.addCookies([{ name, value, url: web.baseUrl }]);
  return page;
}

describe('the console Sessions page (phone width)', () => {
  it('shows outcomes, the pass rate and the reasons, and the organization hit by replayed frames', { timeout: 120_000 }, async () => {
    const page = await signedIn(operator);
    const errors = watchErrors(page);
    await page.goto('/console');
    await page.getByRole('button', { name: 'Open navigation' }).click();
    await page.getByRole('link', { name: 'Sessions' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Sessions', level: 2 }).isVisible(), { timeout: 15_000 }).toBe(true);
    // Live by default: nothing there yet.
    await expect.poll(() => page.getByText('No sessions in this window').isVisible(), { timeout: 15_000 }).toBe(true);
    await page.getByRole('combobox', { name: 'Mode' }).click();
    await page.getByRole('option', { name: 'Test', exact: true }).click();

    const reasons = page.getByRole('table', { name: 'Failure reasons, most frequent first' });
    await expect.poll(() => reasons.isVisible(), { timeout: 15_000 }).toBe(true);
    const first = reasons.getByRole('row').nth(1);
    expect(await first.getByText('REPLAYED_FRAMES').isVisible()).toBe(true);
    expect(await first.getByText('Frames were replayed from another attempt or session').isVisible()).toBe(true);
    expect(await first.getByText('new').isVisible()).toBe(true);
    expect(await page.getByText('Pass rate', { exact: true }).isVisible()).toBe(true);
    const attacked = page.getByRole('article', { name: 'Attacked Microfinance' });
    expect(await attacked.getByRole('table', { name: 'Failure reasons at Attacked Microfinance' }).getByText('REPLAYED_FRAMES').isVisible()).toBe(true);
    expect(await attacked.getByText('3 of 3 liveness attempts failed').isVisible()).toBe(true);
    const quiet = page.getByRole('article', { name: 'Quiet Savings' });
    expect(await quiet.getByText('Pass rate 50%').isVisible()).toBe(true);
    await screenshot(page, 'console-sessions');

    // One organization: the other's replays are gone.
    await page.getByRole('combobox', { name: 'Organization' }).fill('Quiet');
    await page.getByRole('option', { name: 'Quiet Savings' }).click();
    await expect.poll(() => page.getByRole('article', { name: 'Attacked Microfinance' }).count(), { timeout: 15_000 }).toBe(0);
    expect(await reasons.getByText('REPLAYED_FRAMES').count()).toBe(0);
    expect(await reasons.getByText('FACE_MISMATCH').isVisible()).toBe(true);
    // A longer window counts the same sessions.
    await page.getByText('30 days').click();
    await expect.poll(() => quiet.getByText('Pass rate 50%').isVisible()).toBe(true);
    expect(errors).toEqual([]);
  });

  it('refuses a customer', { timeout: 60_000 }, async () => {
    const org = await web.org({ name: 'Curious Bank' });
    const customer = await portalUser(web.database.db);
    await addMember(web.database.db, org.id, customer.personId, 'owner');
    const page = await signedIn(customer);
    await page.goto('/console/sessions');
    await expect.poll(() => page.getByText(/operator/i).first().isVisible(), { timeout: 15_000 }).toBe(true);
    expect(await page.getByRole('table', { name: 'Failure reasons, most frequent first' }).count()).toBe(0);
  });
});
