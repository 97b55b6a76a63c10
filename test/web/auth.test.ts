import { generate } from 'otplib';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listMail } from '../../src/portal/mail.js';
import { buildWebContext, screenshot, watchErrors, type WebContext } from '../helpers/browser.js';
import { freshCode } from '../helpers/portal.js';

/**
 * Accounts and the team as people click them: sign up, confirm the email from the mail, sign out
 * and in, turn on two-factor and sign in with a code, revoke another device, invite a viewer who
 * joins with a new account and sees the team without the invite form, remove them, and reset a
 * forgotten password. With VOUCH_SCREENSHOTS=1, screenshots land in docs/images/ (auth-*, account-*, team-*).
 */
let web: WebContext;
beforeAll(async () => {
  web = await buildWebContext();
}, 90_000);
afterAll(() => web?.close());

const OWNER = `amaka-${Date.now()}@kudi.example`;
const VIEWER = `sola-${Date.now()}@kudi.example`;
const PASSWORD = 'owner passphrase 2024';
const NEW_PASSWORD = 'a fresh passphrase 99';
let totpSecret = '';
/** The recovery codes shown when two-factor was turned on; each works once. */
let recoveryCodes: string[] = [];

/**
 * A code of the owner's app the server has not seen yet (a code works once). Used once after the
 * code that turns two-factor on, so it never waits for the next 30-second step; the later steps
 * sign in with recovery codes.
 */
async function ownerCode(): Promise<string> {
  const { id } = await web.database.db.selectFrom('people').select('id').where('email', '=', OWNER).executeTakeFirstOrThrow();
  return freshCode(web.database.db, id, totpSecret);
}

/** The newest link to `path` mailed to `to` (some mails are prepared just after the answer). */
async function mailedLink(to: string, path: string): Promise<string> {
  const pattern = new RegExp(`https?://\\S+${path}\\?token=[A-Za-z0-9_-]+`);
  for (let end = Date.now() + 5_000; ; await new Promise((resolve) => setTimeout(resolve, 25))) {
    const [mail] = await listMail(web.database.db, { to, limit: 1 });
    const link = pattern.exec(mail?.text ?? '')?.[0];
    if (link) return link;
    if (Date.now() > end) throw new Error(`no ${path} link mailed to ${to}`);
  }
}


const visible = (page: Page, text: string | RegExp) => () => page.getByText(text).first().isVisible();

/** Console errors other than the browser's own note of an expected 4xx answer. */
const unexpected = (errors: string[]) => errors.filter((e) => !/Failed to load resource: the server responded with a status of 4\d\d/.test(e));

async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.goto('/login');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel(/^Password/).fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

async function signOut(page: Page, name: string): Promise<void> {
  await page.getByRole('button', { name: `Account menu for ${name}` }).click();
  await page.getByRole('menuitem', { name: 'Sign out' }).click();
  await page.waitForURL('**/login');
}

describe('accounts and the team in a browser', () => {
  let owner: Awaited<ReturnType<WebContext['newPage']>>;
  let ownerErrors: string[];

  it('signs up, finishes from the mailed link with field errors shown at the field, signs out and in', { timeout: 90_000 }, async () => {
    owner = await web.newPage();
    ownerErrors = watchErrors(owner.page);
    const { page } = owner;
    await page.goto('/signup');
    await screenshot(page, 'auth-signup');
    await page.getByLabel('Your name').fill('Amaka Obi');
    await page.getByLabel(/^Work email/).fill('not an email');
    await page.getByLabel('Company name').fill('Kudi Loans');
    await page.getByRole('button', { name: 'Create account' }).click();
    await expect.poll(visible(page, /^email must be an email address/)).toBe(true);
    expect(await page.getByText('Could not create the account').count()).toBe(0);
    await page.getByLabel(/^Work email/).fill(OWNER);
    await page.getByRole('button', { name: 'Create account' }).click();
    // The same answer whether or not the address has an account. This server has no mail server
    // (no SMTP_URL): the page says the message was kept, and how its operator reads it.
    await expect.poll(visible(page, 'This Vouch server sends no email'), { timeout: 15_000 }).toBe(true);
    expect(await page.getByText('npx vouch mail list').first().isVisible()).toBe(true);
    await screenshot(page, 'auth-signup-check-email');

    const link = await mailedLink(OWNER, '/complete-sign-up');
    await page.goto(link);
    await page.getByLabel(/^Choose a password/).fill('too short');
    await page.getByRole('button', { name: 'Create account' }).click();
    await expect.poll(visible(page, 'password must be at least 10 characters')).toBe(true);
    await page.getByLabel(/^Choose a password/).fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Get started' }).isVisible(), { timeout: 15_000 }).toBe(true);
    // The link proved the address; it works once.
    expect(await page.getByText('Confirm your email address').count()).toBe(0);
    await page.goto(link);
    await page.getByLabel(/^Choose a password/).fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await expect.poll(visible(page, /already used or expired/)).toBe(true);

    await page.goto('/account');
    await expect.poll(visible(page, 'email confirmed')).toBe(true);
    await signOut(page, 'Amaka Obi');
    await signIn(page, OWNER, 'not the password at all');
    await expect.poll(() => page.getByRole('alert').getByText('Wrong email or password').isVisible()).toBe(true);
    await screenshot(page, 'auth-login');
    await page.getByLabel(/^Password/).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Get started' }).isVisible(), { timeout: 15_000 }).toBe(true);
    expect(await page.getByText('Confirm your email address').count()).toBe(0);
  });

  it('turns on two-factor with the QR code, then signs in with a code from the app', { timeout: 90_000 }, async () => {
    const { page } = owner;
    await page.goto('/account');
    await page.getByRole('button', { name: 'Set up two-factor' }).click();
    await expect.poll(() => page.getByRole('img', { name: 'QR code to add Vouch to your authenticator app' }).isVisible()).toBe(true);
    totpSecret = await page.getByRole('textbox', { name: 'Key for typing into the app' }).inputValue();
    expect(totpSecret).toMatch(/^[A-Z2-7]{16,}$/);
    // Turning it on needs the password (a stolen session must not put its own app on the account).
    await page.getByLabel('Code from the app').fill(await generate({ secret: totpSecret }));
    await page.getByLabel('Your password').fill('not my password at all');
    await page.getByRole('button', { name: 'Turn on two-factor' }).click();
    await expect.poll(visible(page, 'password is not your current password')).toBe(true);
    await page.getByLabel('Your password').fill(PASSWORD);
    await page.getByLabel('Code from the app').fill('000000' === (await generate({ secret: totpSecret })) ? '111111' : '000000');
    await page.getByRole('button', { name: 'Turn on two-factor' }).click();
    await expect.poll(visible(page, /^code is not right/)).toBe(true);
    await screenshot(page, 'account-two-factor-setup');
    await page.getByLabel('Code from the app').fill(await generate({ secret: totpSecret }));
    await page.getByRole('button', { name: 'Turn on two-factor' }).click();
    const codes = page.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem');
    await expect.poll(() => codes.count()).toBe(10);
    recoveryCodes = (await codes.allInnerTexts()).map((code) => code.trim());
    for (const code of recoveryCodes) expect(code).toMatch(/^[a-z2-9]{5}-[a-z2-9]{5}$/);
    expect(new Set(recoveryCodes).size).toBe(10);
    await expect.poll(() => page.getByRole('button', { name: 'Download the codes' }).isVisible()).toBe(true);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('region', { name: 'Your recovery codes' }).scrollIntoViewIfNeeded();
    await screenshot(page, 'account-recovery-codes-phone');
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.getByRole('button', { name: 'I have kept them' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Turn off two-factor' }).isVisible()).toBe(true);
    expect(await codes.count()).toBe(0);

    await signOut(page, 'Amaka Obi');
    await signIn(page, OWNER, PASSWORD);
    await expect.poll(() => page.getByLabel('Authentication code').isVisible()).toBe(true);
    await screenshot(page, 'auth-login-code');
    await page.getByLabel('Authentication code').fill(await ownerCode());
    await page.getByRole('button', { name: 'Verify code' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Get started' }).isVisible(), { timeout: 15_000 }).toBe(true);
  });

  it('lists the devices and revokes another one, which is signed out at once', { timeout: 90_000 }, async () => {
    const phone = await web.newPage({ phone: true });
    await signIn(phone.page, OWNER, PASSWORD);
    // A recovery code, not the app's: the app's next code would mean waiting for the next 30-second step.
    await phone.page.getByLabel('Authentication code').fill(recoveryCodes[1]!);
    await phone.page.getByRole('button', { name: 'Verify code' }).click();
    await expect.poll(() => phone.page.getByRole('heading', { name: 'Get started' }).isVisible(), { timeout: 15_000 }).toBe(true);
    await phone.page.goto('/account');
    await expect.poll(() => phone.page.getByRole('heading', { name: 'Signed-in devices' }).isVisible()).toBe(true);
    await screenshot(phone.page, 'account-phone');

    const { page } = owner;
    await page.goto('/account');
    const rows = page.getByRole('table', { name: 'Signed-in devices' }).getByRole('row');
    await expect.poll(() => rows.count()).toBe(3);
    await screenshot(page, 'account');
    await page.getByRole('button', { name: /^Revoke Chrome on Linux/ }).click();
    await expect.poll(() => rows.count()).toBe(2);
    await phone.page.reload();
    await phone.page.waitForURL('**/login?next=%2Faccount');
    await phone.context.close();
  });

  it('invites a viewer who joins with a new account and sees the team but no invite form; removed, they are out at once', { timeout: 120_000 }, async () => {
    const { page } = owner;
    await page.goto('/team');
    await page.getByLabel('Email').fill('not an email');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    await expect.poll(visible(page, /^email must be an email address/)).toBe(true);
    await page.getByLabel('Email').fill(VIEWER);
    await page.getByRole('combobox', { name: 'Role', exact: true }).click();
    await page.getByRole('option', { name: 'Viewer' }).click();
    await page.getByRole('button', { name: 'Send invitation' }).click();
    await expect.poll(visible(page, `Invitation sent to ${VIEWER}.`)).toBe(true);
    await expect.poll(() => page.getByRole('table', { name: 'Pending invitations' }).getByRole('cell', { name: VIEWER, exact: true }).isVisible()).toBe(true);
    await screenshot(page, 'team');

    const viewer = await web.newPage({ phone: true });
    const viewerErrors = watchErrors(viewer.page);
    await viewer.page.goto(await mailedLink(VIEWER, '/invitations/accept'));
    await expect.poll(() => viewer.page.getByRole('heading', { name: 'Join Kudi Loans on Vouch' }).isVisible(), { timeout: 10_000 }).toBe(true);
    await screenshot(viewer.page, 'auth-invitation-phone');
    await viewer.page.getByLabel('Your name').fill('Sola Ade');
    await viewer.page.getByLabel(/^Choose a password/).fill('viewer passphrase 1');
    await viewer.page.getByRole('button', { name: 'Accept the invitation' }).click();
    await expect.poll(() => viewer.page.getByRole('heading', { name: 'Get started' }).isVisible(), { timeout: 15_000 }).toBe(true);
    // Joined from the mailed link: the address counts as confirmed.
    expect(await viewer.page.getByText('Confirm your email address').count()).toBe(0);
    await viewer.page.goto('/team');
    await expect.poll(() => viewer.page.getByRole('table', { name: 'Members' }).getByText(VIEWER, { exact: true }).isVisible(), { timeout: 10_000 }).toBe(true);
    expect(await viewer.page.getByRole('button', { name: 'Send invitation' }).count()).toBe(0);
    expect(await viewer.page.getByRole('button', { name: /^Remove / }).count()).toBe(0);
    expect(await viewer.page.getByRole('combobox', { name: /^Role of/ }).count()).toBe(0);
    await expect.poll(visible(viewer.page, 'Only owners and admins invite people or change roles')).toBe(true);
    await screenshot(viewer.page, 'team-viewer-phone');

    // The owner sees the viewer join, gives them developer, then removes them (with a confirmation).
    await page.reload();
    await page.getByRole('combobox', { name: `Role of ${VIEWER}` }).click();
    await page.getByRole('option', { name: 'Developer' }).click();
    await expect.poll(visible(page, 'Sola Ade is now developer.')).toBe(true);
    await page.getByRole('button', { name: `Remove ${VIEWER}` }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Remove' }).click();
    await expect.poll(() => page.getByRole('table', { name: 'Members' }).getByText(VIEWER, { exact: true }).count()).toBe(0);

    await viewer.page.reload();
    await expect.poll(visible(viewer.page, 'You are not in an organization'), { timeout: 10_000 }).toBe(true);
    expect(unexpected(viewerErrors)).toEqual([]);
    await viewer.context.close();
  });

  it('resets a forgotten password from the mailed link, once', { timeout: 90_000 }, async () => {
    const { context, page } = await web.newPage({ phone: true });
    await page.goto('/login');
    await screenshot(page, 'auth-login-phone');
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.getByLabel('Email').fill(OWNER);
    await page.getByRole('button', { name: 'Send the reset link' }).click();
    await expect.poll(visible(page, 'Check your email')).toBe(true);
    const link = await mailedLink(OWNER, '/reset-password');
    await page.goto(link);
    await page.getByLabel(/^New password/).fill('short');
    await page.getByRole('button', { name: 'Set the new password' }).click();
    await expect.poll(visible(page, 'password must be at least 10 characters')).toBe(true);
    await page.getByLabel(/^New password/).fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Set the new password' }).click();
    // Two-factor is on: the link alone is not enough.
    await expect.poll(visible(page, /^code is required/)).toBe(true);
    // A recovery code counts as the second factor here too (the API tests reset with the app's code).
    await page.getByLabel(/^Two-factor code/).fill(recoveryCodes[2]!);
    await page.getByRole('button', { name: 'Set the new password' }).click();
    await expect.poll(visible(page, 'Password changed')).toBe(true);
    // Every session ended, the owner's desktop one too.
    await owner.page.goto('/account');
    await owner.page.waitForURL('**/login?next=%2Faccount');

    await page.goto(link);
    await page.getByLabel(/^New password/).fill('yet another passphrase');
    await page.getByRole('button', { name: 'Set the new password' }).click();
    await expect.poll(visible(page, /already used or expired/)).toBe(true);

    // Signing in with a recovery code instead of the app's.
    await signIn(page, OWNER, NEW_PASSWORD);
    await page.getByLabel('Authentication code').fill(recoveryCodes[0]!);
    await page.getByRole('button', { name: 'Verify code' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Get started' }).isVisible(), { timeout: 15_000 }).toBe(true);
    await context.close();
    expect(unexpected(ownerErrors)).toEqual([]);
    await owner.context.close();
  });

  it('shows the sign-up page at phone width', { timeout: 30_000 }, async () => {
    const { context, page } = await web.newPage({ phone: true });
    await page.goto('/signup');
    await expect.poll(() => page.getByRole('button', { name: 'Create account' }).isVisible()).toBe(true);
    await screenshot(page, 'auth-signup-phone');
    await context.close();
  });
});
