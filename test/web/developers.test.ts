import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccessRequests } from '../../src/portal/access/service.js';
import type { Worker } from '../../src/worker.js';
import { buildWebContext, screenshot, watchErrors, type WebContext } from '../helpers/browser.js';
import { addMember, portalOrg, portalUser, type PortalOrg, type PortalUser } from '../helpers/portal.js';
import { startTestWorker, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * The developer pages as a person clicks them: Get started with curl examples that carry the
 * organization's own test secret, asking for live access and seeing it approved, rolling the live
 * secret with an overlap, and a webhook set to a local receiver, a test event delivered and resent;
 * then a viewer on a phone who sees no secrets and changes nothing. With VOUCH_SCREENSHOTS=1, screenshots: docs/images/developers-*.
 */
let web: WebContext;
let receiver: WebhookReceiver;
let worker: Worker;
let setup: PortalOrg;

beforeAll(async () => {
  web = await buildWebContext();
  receiver = await startWebhookReceiver();
  worker = await startTestWorker(web.database);
  setup = await portalOrg(web.database.db, { enabled: false });
}, 90_000);

afterAll(async () => {
  await worker?.stop();
  await receiver?.close();
  await web?.close();
});

/** A browser already signed in as `user` (the session cookie of the helpers), at desktop or phone width. */
async function signedIn(user: PortalUser, phone = false): Promise<{ context: BrowserContext; page: Page }> {
  const opened = await web.newPage({ phone });
  const [name, value] = user.cookie.split('=') as [string, string];
  await opened.context.addCookies([{ name, value, url: web.baseUrl }]);
  return opened;
}


const seen = (page: Page, text: string | RegExp) => () => page.getByText(text).first().isVisible();

async function choose(page: Page, label: string, option: RegExp): Promise<void> {
  await page.getByLabel(label, { exact: true }).first().click();
  await page.getByRole('option', { name: option }).click();
}

async function v1(secret: string, path = '/v1/verifications/addresses'): Promise<number> {
  return (await fetch(`${web.baseUrl}${path}`, { headers: { authorization: `Bearer ${secret}` } })).status;
}

describe('the developer pages', () => {
  it('get started, ask for access and see it approved, roll the live secret, set a webhook and watch a test event arrive', { timeout: 180_000 }, async () => {
    const { org, owner } = setup;
    const { context, page } = await signedIn(owner);
    const errors = watchErrors(page);

    // Get started: the organization's own test secret and this server's address in the examples.
    await page.goto('/get-started');
    await expect.poll(seen(page, 'Your test secret'), { timeout: 15_000 }).toBe(true);
    // The step's title shows at once; the secret, and the examples that use it, once the keys have loaded.
    await page.getByRole('textbox', { name: 'Test secret' }).waitFor({ timeout: 15_000 });
    const example = page.getByRole('textbox', { name: 'BVN lookup (curl)' });
    await example.waitFor();
    const curl = await example.inputValue();
    expect(curl).toContain(`${web.baseUrl}/v1/verifications/identities/bvn/22345678901`);
    expect(curl).toContain(`Bearer ${org.testSecret}`);
    expect(await page.getByRole('textbox', { name: 'Test secret' }).inputValue()).toBe(org.testSecret);
    // The example works as pasted.
    const looked = await fetch(`${web.baseUrl}/v1/verifications/identities/bvn/22345678901`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.testSecret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ firstname: 'Adaeze', lastname: 'Okonkwo', dob: '14-03-1990' }),
    });
    expect(looked.status).toBe(200);
    expect(await page.getByRole('link', { name: 'API reference' }).getAttribute('href')).toBe('/docs');
    await expect.poll(seen(page, 'Not requested')).toBe(true);
    await screenshot(page, 'developers-get-started');

    // Ask for live access.
    await page.getByRole('link', { name: 'Request live access' }).click();
    await expect.poll(seen(page, 'What the values mean')).toBe(true);
    await choose(page, 'Risk level', /^MEDIUM/);
    await choose(page, 'Identity payload type', /^HALF/);
    await page.getByLabel('What you will use Vouch for (optional)').fill('Onboarding loan applicants');
    await page.getByRole('button', { name: 'Send the request' }).click();
    await expect.poll(seen(page, 'Your request is with an account manager')).toBe(true);
    expect(await page.getByText('Pending approval', { exact: true }).isVisible()).toBe(true);

    // An account manager approves with other values (the code path of `vouch org enable`).
    await new AccessRequests(web.database.db).approve(org.id, { riskLevel: 'LOW', payloadType: 'HALF' }, { kind: 'cli' });
    await page.reload();
    await expect.poll(seen(page, 'Enabled'), { timeout: 10_000 }).toBe(true);
    expect(await page.getByText(/In force: risk level LOW/).isVisible()).toBe(true);
    const history = page.getByRole('table', { name: 'Access requests' });
    expect(await history.getByRole('row', { name: /MEDIUM \/ HALF.*approved.*with LOW \/ HALF/i }).count()).toBe(1);
    await screenshot(page, 'developers-api-access');

    // Roll the live secret with a one-hour overlap: shown once, both work meanwhile.
    await page.goto('/api-keys');
    await page.getByRole('button', { name: 'Reveal test secret' }).click();
    expect(await page.getByRole('textbox', { name: 'Test secret value' }).inputValue()).toBe(org.testSecret);
    expect(await page.getByLabel('live secret hint').textContent()).toBe(`${org.liveSecret.slice(0, 8)}…${org.liveSecret.slice(-4)}`);
    await page.getByRole('button', { name: 'Roll live secret' }).click();
    const dialog = page.getByRole('dialog', { name: 'Roll the live secret' });
    expect(await dialog.getByLabel('The old secret keeps working for', { exact: true }).inputValue()).toBe('1 hour');
    await dialog.getByRole('button', { name: 'Roll secret' }).click();
    await expect.poll(() => dialog.getByText('Copy it now, it will not be shown again').isVisible()).toBe(true);
    const newLive = await dialog.getByRole('textbox', { name: 'New live secret' }).inputValue();
    expect(newLive).toMatch(/^sk_live_[A-Za-z0-9_-]{43}$/);
    expect(await v1(newLive)).toBe(200);
    expect(await v1(org.liveSecret)).toBe(200);
    await screenshot(page, 'developers-api-keys-rolled');
    await dialog.getByRole('button', { name: 'I have copied it' }).click();
    await expect.poll(seen(page, 'The previous secret still works')).toBe(true);
    expect(await page.getByLabel('live secret hint').textContent()).toBe(`${newLive.slice(0, 8)}…${newLive.slice(-4)}`);
    await page.reload();
    await page.getByLabel('live secret hint').waitFor();
    expect(await page.content()).not.toContain(newLive);
    await screenshot(page, 'developers-api-keys');

    // Set the test webhook to a local receiver, send a test event, see it delivered.
    await page.goto('/webhooks');
    await expect.poll(seen(page, 'No deliveries yet'), { timeout: 10_000 }).toBe(true);
    await page.getByLabel('Endpoint URL (test)').fill('ftp://example.com/hook');
    await page.getByRole('button', { name: 'Save URL' }).click();
    await expect.poll(seen(page, 'The URL must be an http or https URL')).toBe(true);
    await page.getByLabel('Endpoint URL (test)').fill(receiver.url);
    await page.getByRole('button', { name: 'Save URL' }).click();
    await expect.poll(seen(page, 'Saved: test events now go to this URL.')).toBe(true);
    await page.getByRole('button', { name: 'Reveal secret' }).click();
    const signing = await page.getByRole('textbox', { name: 'Signing secret value' }).inputValue();
    expect(signing).toMatch(/^whsec_/);
    await page.getByRole('button', { name: 'Send test event' }).click();
    await expect.poll(seen(page, /Test event queued/)).toBe(true);
    const arrived = await receiver.waitFor((r) => r.body?.type === 'webhook.test', 15_000);
    expect(receiver.verify(arrived, signing)).toBe(true);
    const row = page.getByRole('row', { name: /webhook\.test/ });
    await expect.poll(() => row.getByText('delivered').isVisible(), { timeout: 15_000 }).toBe(true);
    await screenshot(page, 'developers-webhooks');

    await row.getByRole('button', { name: /Details of webhook\.test/ }).click();
    const drawer = page.getByRole('dialog');
    await expect.poll(() => drawer.getByRole('cell', { name: '204' }).isVisible()).toBe(true);
    expect(await drawer.getByText(/"type": "webhook.test"/).isVisible()).toBe(true);
    await drawer.getByRole('button', { name: 'Resend' }).click();
    await expect.poll(() => drawer.getByRole('button', { name: 'Queued again' }).isVisible()).toBe(true);
    await receiver.waitForCount(2, 15_000, (r) => r.id === arrived.id);
    await expect.poll(() => drawer.getByRole('cell', { name: '204' }).count(), { timeout: 15_000 }).toBe(2);
    await screenshot(page, 'developers-webhook-delivery');
    await page.keyboard.press('Escape');

    // The other mode shows its own, empty, endpoint and log.
    await page.locator('label', { hasText: /^Live$/ }).click();
    await expect.poll(() => page.getByLabel('Endpoint URL (live)').isVisible()).toBe(true);
    expect(await page.getByLabel('Endpoint URL (live)').inputValue()).toBe('');
    await expect.poll(seen(page, 'No deliveries yet')).toBe(true);

    // The one failed request is the refused ftp URL.
    expect(errors).toEqual(['Failed to load resource: the server responded with a status of 400 (Bad Request)']);
    await context.close();
  });

  it('shows a viewer on a phone no secrets and no buttons that change things', { timeout: 120_000 }, async () => {
    const { org } = setup;
    const viewer = await portalUser(web.database.db);
    await addMember(web.database.db, org.id, viewer.personId, 'viewer');
    const { context, page } = await signedIn(viewer, true);
    const errors = watchErrors(page);

    await page.goto('/');
    await expect.poll(seen(page, /Your role does not show secrets/), { timeout: 15_000 }).toBe(true);
    expect(await page.getByRole('textbox', { name: 'BVN lookup (curl)' }).inputValue()).toContain('Bearer $VOUCH_TEST_SECRET');
    expect(await page.content()).not.toContain(org.testSecret);
    await screenshot(page, 'developers-get-started-phone');

    await page.goto('/api-keys');
    await expect.poll(() => page.getByLabel('test secret hint').isVisible(), { timeout: 10_000 }).toBe(true);
    expect(await page.getByRole('button', { name: /Roll|Reveal/ }).count()).toBe(0);
    expect(await page.content()).not.toContain(org.testSecret);
    await screenshot(page, 'developers-api-keys-phone');

    await page.goto('/api-access');
    await expect.poll(seen(page, /Only owners and admins/), { timeout: 10_000 }).toBe(true);
    await screenshot(page, 'developers-api-access-phone');

    await page.goto('/webhooks');
    await expect.poll(() => page.getByRole('row', { name: /webhook\.test/ }).isVisible(), { timeout: 10_000 }).toBe(true);
    expect(await page.getByLabel('Endpoint URL (test)').getAttribute('readonly')).not.toBeNull();
    expect(await page.getByRole('button', { name: /Save URL|Send test event|Reveal secret|Rotate secret/ }).count()).toBe(0);
    await screenshot(page, 'developers-webhooks-phone');
    await page.getByRole('button', { name: /Details of webhook\.test/ }).click();
    await expect.poll(() => page.getByRole('dialog').getByRole('cell', { name: '204' }).first().isVisible()).toBe(true);
    expect(await page.getByRole('dialog').getByRole('button', { name: 'Resend' }).count()).toBe(0);

    // Nothing wider than the phone's screen.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    expect(errors).toEqual([]);
    await context.close();
  });
});
