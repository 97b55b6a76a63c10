import sharp from 'sharp';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inviteAgentAccount } from '../../src/agents/accounts.js';
import { createAgent } from '../../src/agents/service.js';
import type { Worker } from '../../src/worker.js';
import { ADDRESS_BODY } from '../agents/fixtures.js';
import { buildWebContext, screenshot, watchErrors, type WebContext } from '../helpers/browser.js';
import { connectReceiver, startTestWorker, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * The field app as an agent uses it on a phone: invited from the console (a one-time link), they
 * set a password, sign in and land on /field; with the phone's position (emulated geolocation) and
 * its camera (a file chooser fed JPEGs) they complete a visit and the customer's webhook arrives
 * with the report. Then the same without a connection: the report waits on the phone, visibly
 * queued, and lands once when the connection returns. With VOUCH_SCREENSHOTS=1: docs/images/field-*.
 */
let web: WebContext;
let receiver: WebhookReceiver;
let worker: Worker;
let org: Awaited<ReturnType<WebContext['org']>>;
let context: BrowserContext;
let page: Page;
let errors: string[];
let photoA: Buffer;
let photoB: Buffer;
const LEKKI = { latitude: 6.4474, longitude: 3.4723, accuracy: 12 };
const PASSWORD = 'field agent password';

beforeAll(async () => {
  web = await buildWebContext();
  receiver = await startWebhookReceiver();
  worker = await startTestWorker(web.database);
  org = await web.org({ riskLevel: 'LOW', fund: 10_000_000 });
  await connectReceiver(web.database, receiver, org.id, 'live');
  // A phone camera's 4:3 photo, larger than the 1600 px the app sends.
  photoA = await sharp({ create: { width: 2400, height: 1800, channels: 3, background: '#7a5' } }).jpeg({ quality: 80 }).toBuffer();
  photoB = await sharp({ create: { width: 1200, height: 900, channels: 3, background: '#57a' } }).jpeg({ quality: 80 }).toBuffer();
}, 90_000);
afterAll(async () => {
  await worker?.stop();
  await receiver?.close();
  await web?.close();
});

const seen = (text: string | RegExp) => () => page.getByText(text).first().isVisible();

async function createAddress(reference: string): Promise<number> {
  const res = await fetch(`${web.baseUrl}/v1/verifications/addresses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${org.liveSecret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...ADDRESS_BODY, reference, landmark: 'Opposite the filling station' }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { data: { id: number } }).data.id;
}

async function fillReport(neighbour: string): Promise<void> {
  await page.getByRole('button', { name: 'Use my location' }).click();
  await expect.poll(seen('6.44740, 3.47230 (± 12 m)'), { timeout: 15_000 }).toBe(true);
  const chooser = page.waitForEvent('filechooser');
  await page.getByRole('button', { name: 'Take photos' }).click();
  await (await chooser).setFiles([
    { name: 'front.jpg', mimeType: 'image/jpeg', buffer: photoA },
    { name: 'street.jpg', mimeType: 'image/jpeg', buffer: photoB },
  ]);
  await expect.poll(() => page.getByRole('img', { name: 'Photo 2' }).isVisible(), { timeout: 15_000 }).toBe(true);
  await page.getByLabel("Neighbour's name").fill(neighbour);
  await page.getByLabel('What the neighbour said').fill('She has lived here five years');
  await page.getByLabel("Neighbour's phone").fill('0803 111 2222');
}

async function openReport(reference: string): Promise<void> {
  await page.goto('/field');
  await page.getByRole('link', { name: `Open 12 Admiralty Way · ${reference}` }).click({ timeout: 15_000 });
  await expect.poll(seen('What to capture'), { timeout: 15_000 }).toBe(true);
  await page.getByRole('link', { name: 'Write the report' }).click();
  await expect.poll(seen('Visit report'), { timeout: 15_000 }).toBe(true);
}

const reportsFiled = (id: number) =>
  web.database.db.selectFrom('field_report_keys').select('key').where('kind', '=', 'address').where('verification_id', '=', id).execute();
const webhooksFor = (id: number) => receiver.requests.filter((request) => request.body?.type === 'address.completed' && request.body.data.id === id);

describe('the field app', () => {
  it('an invited agent sets a password, lands on /field and completes a visit with GPS and camera photos; the webhook carries the report', { timeout: 180_000 }, async () => {
    const created = await createAgent(web.database.db, { name: 'Ngozi Field', email: 'ngozi@agents.example', phone: '08031230000', states: ['Lagos'] });
    const invitation = await web.database.db.transaction().execute((trx) => inviteAgentAccount(trx, created.agent.id, web.baseUrl));
    const id = await createAddress('field-visit-1');

    ({ context, page } = await web.newPage({ phone: true }));
    errors = watchErrors(page);
    await context.grantPermissions(['geolocation'], { origin: web.baseUrl });
    await context.setGeolocation(LEKKI);

    const link = new URL(invitation.signInLink);
    await page.goto(link.pathname + link.search);
    await page.getByLabel('New password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set the new password' }).click();
    await expect.poll(seen('Password changed'), { timeout: 15_000 }).toBe(true);
    await page.getByRole('link', { name: 'Sign in', exact: true }).click();
    await expect.poll(() => page.url(), { timeout: 15_000 }).toContain('/login?next=%2Ffield');
    await page.getByLabel('Email').fill('ngozi@agents.example');
    await page.getByLabel(/^Password/).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => new URL(page.url()).pathname, { timeout: 15_000 }).toBe('/field');
    await expect.poll(seen('Your visits'), { timeout: 15_000 }).toBe(true);
    // The portal's home is not for an agent: it sends them to their app.
    await page.goto('/');
    await expect.poll(() => new URL(page.url()).pathname, { timeout: 15_000 }).toBe('/field');
    await expect.poll(seen('Your visits'), { timeout: 15_000 }).toBe(true);
    // The position was shared: nearest first, with its accuracy.
    await expect.poll(seen(/Nearest first, from your position \(± 12 m\)/), { timeout: 15_000 }).toBe(true);
    await expect.poll(seen('Landmark: Opposite the filling station'), { timeout: 15_000 }).toBe(true);
    const maps = page.getByRole('link', { name: /^Open in maps: 12 Admiralty Way/ }).first();
    expect(await maps.getAttribute('href')).toBe(`https://www.google.com/maps/search/?api=1&query=${encodeURIComponent('12 Admiralty Way, Eti-Osa, Lagos, Nigeria')}`);
    // The app is installable: its manifest, and the worker that keeps its shell.
    expect(await page.locator('link[rel="manifest"]').getAttribute('href')).toBe('/field.webmanifest');
    await expect.poll(() => page.evaluate(async () => (await navigator.serviceWorker.getRegistration('/field'))?.active?.state ?? 'none'), { timeout: 15_000 }).toBe('activated');
    await screenshot(page, 'field-tasks');

    await page.getByRole('link', { name: /^Open 12 Admiralty Way/ }).first().click();
    await expect.poll(seen('What to capture'), { timeout: 15_000 }).toBe(true);
    expect(await page.getByText('Adaeze Okonkwo').isVisible()).toBe(true);
    await page.getByRole('button', { name: 'Start visit' }).click();
    await expect.poll(seen(/^Visit started at/), { timeout: 15_000 }).toBe(true);
    await page.getByRole('link', { name: 'Write the report' }).click();
    await expect.poll(seen('Visit report'), { timeout: 15_000 }).toBe(true);
    await fillReport('Iya Basira');
    await screenshot(page, 'field-report');
    await page.getByRole('button', { name: 'Send report' }).click();
    await expect.poll(seen('Report sent'), { timeout: 20_000 }).toBe(true);
    await expect.poll(seen('No visits assigned to you'), { timeout: 15_000 }).toBe(true);

    const hook = await receiver.waitFor((request) => request.body?.type === 'address.completed' && request.body.data.id === id, 30_000);
    expect(hook.verified).toBe(true);
    expect(hook.body!.data).toMatchObject({
      reference: 'field-visit-1',
      status: { status: 'Verified', subStatus: 'verified', state: 'complete' },
      lattitude: '6.4474',
      longitude: '3.4723',
      neighbor: { name: 'Iya Basira', comment: 'She has lived here five years', phone: '+2348031112222' },
      flaggedForReview: false,
    });
    const photos = hook.body!.data.photos as string[];
    expect(photos).toHaveLength(2);
    // Downscaled in the browser before upload: the 2400 px photo arrives 1600 px wide, as JPEG.
    const first = await sharp(Buffer.from(await (await fetch(photos[0]!)).arrayBuffer())).metadata();
    expect(first).toMatchObject({ format: 'jpeg', width: 1600, height: 1200 });
    const second = await sharp(Buffer.from(await (await fetch(photos[1]!)).arrayBuffer())).metadata();
    expect(second).toMatchObject({ width: 1200, height: 900 });
    expect(await reportsFiled(id)).toHaveLength(1);
  });

  it("shows the server's refusal at its field, keeps nothing queued, and sends the corrected report", { timeout: 120_000 }, async () => {
    const id = await createAddress('field-visit-refused');
    await openReport('field-visit-refused');
    await fillReport('Mr Typo');
    await page.getByLabel("Neighbour's phone").fill('123');
    await page.getByRole('button', { name: 'Send report' }).click();
    await expect.poll(seen('neighborPhone must be a valid Nigerian phone number'), { timeout: 15_000 }).toBe(true);
    expect(await page.getByLabel("Neighbour's phone").getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByText(/queued/i).count()).toBe(0);
    expect(await reportsFiled(id)).toHaveLength(0);
    await page.getByLabel("Neighbour's phone").fill('08031112222');
    await page.getByRole('button', { name: 'Send report' }).click();
    await expect.poll(seen('Report sent'), { timeout: 20_000 }).toBe(true);
    expect(await reportsFiled(id)).toHaveLength(1);
  });

  it('without a connection the report waits on the phone, visibly queued, and lands once when the connection returns', { timeout: 180_000 }, async () => {
    const id = await createAddress('field-visit-offline');
    await openReport('field-visit-offline');
    await fillReport('Mr Offline');

    await context.setOffline(true);
    await page.getByRole('button', { name: 'Send report' }).click();
    await expect.poll(seen('Queued — will send when online'), { timeout: 15_000 }).toBe(true);
    await expect.poll(seen('1 queued'), { timeout: 5_000 }).toBe(true);
    // The app opens again without a connection (its worker keeps the shell): the report is still there.
    await page.reload();
    await expect.poll(seen('Queued — will send when online'), { timeout: 15_000 }).toBe(true);
    await expect.poll(seen(/^No connection: this is the list as it was/), { timeout: 15_000 }).toBe(true);
    // Still offline: nothing reached the server, the verification is open.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await reportsFiled(id)).toHaveLength(0);
    const record = await web.database.db.selectFrom('address_verifications').select('status').where('id', '=', id).executeTakeFirstOrThrow();
    expect(record.status).not.toBe('verified');

    await context.setOffline(false);
    const hook = await receiver.waitFor((request) => request.body?.type === 'address.completed' && request.body.data.id === id, 30_000);
    expect(hook.body!.data).toMatchObject({ status: { status: 'Verified' }, neighbor: { name: 'Mr Offline' } });
    await expect.poll(() => page.getByText('Queued — will send when online').count(), { timeout: 15_000 }).toBe(0);
    await expect.poll(seen('No visits assigned to you'), { timeout: 15_000 }).toBe(true);

    // Exactly once: one report filed, one webhook, even after the app starts again and looks at its outbox.
    await page.reload();
    await expect.poll(seen('Your visits'), { timeout: 15_000 }).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(await reportsFiled(id)).toHaveLength(1);
    expect(webhooksFor(id)).toHaveLength(1);
    const deliveries = await web.database.db.selectFrom('webhook_deliveries').select('id').where('org_id', '=', org.id).where('event_type', '=', 'address.completed').execute();
    expect(deliveries).toHaveLength(3);
    // Offline, the browser notes the failed loads; nothing else went wrong.
    expect(errors.filter((e) => !/Failed to load resource|net::ERR_INTERNET_DISCONNECTED/.test(e))).toEqual([]);
  });
});
