import { generate } from 'otplib';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOperator } from '../../src/console/operators.js';
import { Funding } from '../../src/portal/billing/service.js';
import { buildWebContext, screenshot, watchErrors, type WebContext } from '../helpers/browser.js';
import { enrolTotp, operatorUser, portal, portalOrg } from '../helpers/portal.js';

/**
 * The operator console as an operator uses it: made by `vouch operator create`, they set a password
 * through the one-time link, sign in, find a customer's pending access request, change the risk
 * level and approve it, and the customer's live secret starts working; a customer who opens
 * /console is told it is not for them. With VOUCH_SCREENSHOTS=1, screenshots: docs/images/console-*.
 */
let web: WebContext;

beforeAll(async () => {
  web = await buildWebContext();
}, 90_000);
afterAll(async () => {
  await web?.close();
});

const seen = (page: Page, text: string | RegExp) => () => page.getByText(text).first().isVisible();

async function choose(page: Page, label: string, option: RegExp): Promise<void> {
  await page.getByRole('dialog').getByLabel(label, { exact: true }).click();
  await page.getByRole('option', { name: option }).click();
}

/** A state-changing /api call as the web app at this server's address sends it. */
function post(url: string, payload: object) {
  return web.app.inject({ method: 'POST', url, headers: { origin: web.baseUrl, 'content-type': 'application/json' }, payload, remoteAddress: '127.0.0.9' });
}

async function liveStatus(secret: string): Promise<number> {
  return (await fetch(`${web.baseUrl}/v1/verifications/identities/tin/23456789-0001`, { headers: { authorization: `Bearer ${secret}` } })).status;
}

describe('the operator console', () => {
  it('an operator sets a password from the link, signs in, and approves a request with a changed risk level; the live secret starts working', { timeout: 120_000 }, async () => {
    const { org, owner } = await portalOrg(web.database.db, { enabled: false });
    const asked = await web.app.inject({
      method: 'POST',
      url: `/api/orgs/${org.id}/access-requests`,
      headers: { origin: web.baseUrl, cookie: owner.cookie, 'content-type': 'application/json' },
      payload: { riskLevel: 'LOW', payloadType: 'FULL', useCase: 'Salary advance onboarding' },
    });
    expect(asked.statusCode).toBe(201);
    expect(await liveStatus(org.liveSecret)).toBe(403);

    const email = `ops-${Date.now()}@vouch.example`;
    const created = await createOperator(web.database.db, { email, name: 'Ada Ops' }, web.baseUrl);
    const { page } = await web.newPage();
    const errors = watchErrors(page);

    await page.goto(new URL(created.signInLink).pathname + new URL(created.signInLink).search);
    await page.getByLabel('New password').fill('operator password 1');
    await page.getByRole('button', { name: 'Set the new password' }).click();
    await expect.poll(seen(page, 'Password changed'), { timeout: 15_000 }).toBe(true);

    await page.goto('/console');
    await expect.poll(() => page.url(), { timeout: 15_000 }).toContain('/login');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel(/^Password/).fill('operator password 1');
    await page.getByRole('button', { name: 'Sign in' }).click();
    // The console acts only with two-factor on: it is the first thing asked.
    await expect.poll(seen(page, 'Set up two-factor authentication first'), { timeout: 15_000 }).toBe(true);
    await page.getByRole('button', { name: 'Set up two-factor' }).click();
    const secret = await page.getByRole('textbox', { name: 'Key for typing into the app' }).inputValue();
    await page.getByLabel('Code from the app').fill(await generate({ secret }));
    await page.getByLabel('Your password').fill('operator password 1');
    await page.getByRole('button', { name: 'Turn on two-factor' }).click();
    await expect.poll(seen(page, 'Your recovery codes'), { timeout: 15_000 }).toBe(true);
    await page.getByRole('button', { name: 'I have kept them' }).click();
    await expect.poll(seen(page, 'Vouch console'), { timeout: 15_000 }).toBe(true);
    await expect.poll(seen(page, org.name), { timeout: 15_000 }).toBe(true);
    expect(await page.getByRole('table', { name: 'Access requests' }).getByText('LOW · FULL').first().isVisible()).toBe(true);
    await screenshot(page, 'console-access-requests');

    await page.getByRole('button', { name: `Review the request of ${org.name}` }).click();
    await expect.poll(seen(page, 'Salary advance onboarding'), { timeout: 10_000 }).toBe(true);
    await choose(page, 'Risk level', /^MEDIUM/);
    await screenshot(page, 'console-review');
    await page.getByRole('dialog').getByRole('button', { name: 'Approve' }).click();
    await expect.poll(seen(page, `${org.name} can now use the live API (MEDIUM · FULL)`), { timeout: 15_000 }).toBe(true);
    await expect.poll(seen(page, 'No requests waiting'), { timeout: 15_000 }).toBe(true);

    expect(await liveStatus(org.liveSecret)).not.toBe(403);
    const access = (await portal(web.app, owner, { method: 'GET', url: `/api/orgs/${org.id}/access` })).json();
    expect(access).toMatchObject({ enabled: true, riskLevel: 'MEDIUM', payloadType: 'FULL' });
    const audit = await web.database.db.selectFrom('audit_events').selectAll().where('org_id', '=', org.id).where('action', '=', 'access.approved').executeTakeFirstOrThrow();
    expect(audit).toMatchObject({ actor_kind: 'operator', actor_id: created.id });

    await page.getByText('Approved', { exact: true }).click();
    await expect.poll(seen(page, 'Approved MEDIUM · FULL'), { timeout: 15_000 }).toBe(true);
    // Opening /console signed out answers 401 (then the sign-in page): the browser notes it; nothing else.
    expect(errors.filter((e) => !/Failed to load resource: the server responded with a status of 401/.test(e))).toEqual([]);
  });

  it('tells a customer who opens /console that it is not for them, and asks for a reason before declining', { timeout: 120_000 }, async () => {
    const { org, owner } = await portalOrg(web.database.db, { enabled: false });
    const [name, value] = owner.cookie.split('=') as [string, string];
    const customer = await web.newPage({ phone: true });
    await customer.context.addCookies([{ name, value, url: web.baseUrl }]);
    await customer.page.goto('/console');
    await expect.poll(seen(customer.page, 'This is the operator console'), { timeout: 15_000 }).toBe(true);
    expect(await customer.page.getByRole('button', { name: /Review/ }).count()).toBe(0);

    await web.app.inject({
      method: 'POST',
      url: `/api/orgs/${org.id}/access-requests`,
      headers: { origin: web.baseUrl, cookie: owner.cookie, 'content-type': 'application/json' },
      payload: { riskLevel: 'HIGH', payloadType: 'HALF' },
    });
    const email = `ops-decline-${Date.now()}@vouch.example`;
    const created = await createOperator(web.database.db, { email }, web.baseUrl);
    const token = new URL(created.signInLink).searchParams.get('token')!;
    expect((await post('/api/auth/reset-password', { token, password: 'operator password 2' })).statusCode).toBe(200);
    const signIn = await post('/api/auth/sign-in', { email, password: 'operator password 2' });
    expect(signIn.statusCode).toBe(200);
    const session = signIn.cookies.find((c) => c.name === name)!;
    await enrolTotp(web.app, { personId: created.id, email, password: 'operator password 2', cookie: `${name}=${session.value}` }, { origin: web.baseUrl });
    const operator = await web.newPage({ phone: true });
    await operator.context.addCookies([{ name, value: session.value, url: web.baseUrl }]);
    await operator.page.goto('/console');
    await operator.page.getByRole('button', { name: `Review the request of ${org.name}` }).click();
    const dialog = operator.page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Decline' }).click();
    await expect.poll(seen(operator.page, /Say why, for the customer/), { timeout: 10_000 }).toBe(true);
    await dialog.getByLabel('Reason for the customer').fill('Send your CBN licence to ops@vouch.example first');
    await dialog.getByRole('button', { name: 'Decline' }).click();
    await expect.poll(seen(operator.page, `Declined the request of ${org.name}`), { timeout: 15_000 }).toBe(true);
    const access = (await portal(web.app, owner, { method: 'GET', url: `/api/orgs/${org.id}/access` })).json();
    expect(access.requests[0]).toMatchObject({ status: 'declined', declineReason: 'Send your CBN licence to ops@vouch.example first' });
  });

  it('an operator confirms an announced transfer and the balance moves; a rejection needs a reason', { timeout: 120_000 }, async () => {
    const { org, owner } = await portalOrg(web.database.db, { fund: 0 });
    const funding = new Funding(web.database.db);
    const arrived = await funding.request(org.id, { amount: 5_000_000, reference: 'ACME MARCH' }, { kind: 'member', personId: owner.personId });
    const bogus = await funding.request(org.id, { amount: 100_000, reference: 'ACME TYPO' }, { kind: 'member', personId: owner.personId });
    // Another organization announced the same words: references are unique per organization only.
    const copycat = await portalOrg(web.database.db, { fund: 0 });
    const copied = await funding.request(copycat.org.id, { amount: 5_000_000, reference: 'ACME MARCH' }, { kind: 'member', personId: copycat.owner.personId });
    const operator = await operatorUser(web.app, web.database.db, { origin: web.baseUrl });
    const [name, value] = operator.cookie.split('=') as [string, string];
    const { context, page } = await web.newPage();
    await context.addCookies([{ name, value, url: web.baseUrl }]);
    const errors = watchErrors(page);

    await page.goto('/console');
    await page.getByRole('link', { name: 'Fundings' }).click();
    await expect.poll(seen(page, 'ACME MARCH'), { timeout: 15_000 }).toBe(true);
    await screenshot(page, 'console-fundings');
    expect(await page.getByText(`Also announced by ${copycat.org.name}`).isVisible()).toBe(true);
    await page.getByRole('button', { name: `Confirm ACME MARCH of ${org.name}` }).click();
    const warning = page.getByRole('dialog').getByRole('alert');
    await expect.poll(() => warning.textContent(), { timeout: 10_000 }).toContain(`The same reference was announced by ${copycat.org.name} (pending, ₦50,000.00). Match the transfer by its sender's name`);
    await page.getByRole('dialog').getByRole('button', { name: /^Credit ₦50,000/ }).click();
    await expect.poll(seen(page, `Credited ₦50,000.00 to ${org.name}`), { timeout: 15_000 }).toBe(true);
    await funding.withdraw(copycat.org.id, copied.id, { kind: 'member', personId: copycat.owner.personId });
    const billing = async () => (await portal(web.app, owner, { method: 'GET', url: `/api/orgs/${org.id}/billing` })).json();
    expect((await billing()).balance).toBe(5_000_000);

    await page.getByRole('button', { name: `Reject ACME TYPO of ${org.name}` }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Reject' }).click();
    await expect.poll(seen(page, /Say why, for the customer/), { timeout: 10_000 }).toBe(true);
    await dialog.getByLabel('Reason for the customer').fill('No transfer with this reference reached our account');
    await dialog.getByRole('button', { name: 'Reject' }).click();
    await expect.poll(seen(page, `Rejected ACME TYPO of ${org.name}`), { timeout: 15_000 }).toBe(true);
    await expect.poll(seen(page, 'No transfers waiting'), { timeout: 15_000 }).toBe(true);
    expect((await billing()).balance).toBe(5_000_000);
    expect((await funding.get(org.id, arrived.id)).status).toBe('confirmed');
    expect((await funding.get(org.id, bogus.id)).status).toBe('rejected');
    expect(errors).toEqual([]);
  });

  it('an operator finds an organization by name and turns its live API access off with a reason, then on again', { timeout: 120_000 }, async () => {
    const { org } = await portalOrg(web.database.db, { fund: 300_000 });
    await web.database.db.updateTable('organizations').set({ name: 'Kano Kwik Loans' }).where('id', '=', org.id).execute();
    const operator = await operatorUser(web.app, web.database.db, { origin: web.baseUrl });
    const [name, value] = operator.cookie.split('=') as [string, string];
    const { context, page } = await web.newPage({ phone: true });
    await context.addCookies([{ name, value, url: web.baseUrl }]);
    const errors = watchErrors(page);

    await page.goto('/console/organizations');
    await page.getByLabel('Search organizations').fill('kwik');
    const table = page.getByRole('table', { name: 'Organizations' });
    await expect.poll(() => table.getByText('Kano Kwik Loans').isVisible(), { timeout: 15_000 }).toBe(true);
    // The header row and the one match, once the search has settled.
    await expect.poll(() => table.getByRole('row').count(), { timeout: 15_000 }).toBe(2);
    expect(await table.getByText('₦3,000.00').isVisible()).toBe(true);
    // At phone width the table is wider than the screen, and says it scrolls sideways.
    expect(await page.getByText('Scroll sideways to see every column').isVisible()).toBe(true);
    await screenshot(page, 'console-organizations-phone');

    await page.getByRole('button', { name: 'Turn off live API access of Kano Kwik Loans' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Turn off live access' }).click();
    await expect.poll(seen(page, 'Say why, for the audit log'), { timeout: 10_000 }).toBe(true);
    await dialog.getByLabel('Reason').fill('Suspected misuse, per compliance');
    await dialog.getByRole('button', { name: 'Turn off live access' }).click();
    await expect.poll(seen(page, 'Live API access of Kano Kwik Loans is off'), { timeout: 15_000 }).toBe(true);
    expect(await liveStatus(org.liveSecret)).toBe(403);

    await page.getByRole('button', { name: 'Turn on live API access of Kano Kwik Loans' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Turn on live access' }).click();
    await expect.poll(seen(page, 'Live API access of Kano Kwik Loans is on'), { timeout: 15_000 }).toBe(true);
    expect(await liveStatus(org.liveSecret)).not.toBe(403);
    expect(errors).toEqual([]);
  });
});
