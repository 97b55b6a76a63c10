import pino from 'pino';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sealStoredValues } from '../../src/platform/crypto/seal.js';
import { retentionJobTask } from '../../src/privacy/retention.js';
import { listMail, MAIL_KEEP_DAYS, PeopleMail } from '../../src/portal/mail.js';
import { buildTestContext, testConfig, type TestContext } from '../helpers/app.js';
import { portal, portalUser } from '../helpers/portal.js';

// Finding 12 of the security review (issue 18): mail_messages kept every password-reset,
// invitation and sign-in link, with the recipient, in clear in the database, for ever.

let ctx: TestContext;
beforeAll(async () => {
  ctx = await buildTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

const HOUR = 60 * 60 * 1000;

/** The mail to `to` once it is queued (forgot-password queues it after answering). */
async function mailTo(to: string) {
  for (let until = Date.now() + 10_000; Date.now() < until; await new Promise((resolve) => setTimeout(resolve, 25))) {
    const [mail] = await listMail(ctx.database.db, { to });
    if (mail) return mail;
  }
  throw new Error(`no mail to ${to}`);
}

/** The row as stored: every column as text, without the decrypting plugin. */
async function storedRow(id: number): Promise<string> {
  const { rows } = await sql<{ row: string }>`select m::text as row from mail_messages m where id = ${id}`.execute(ctx.database.db.withoutPlugins());
  return rows[0]!.row;
}

async function expiryOf(id: number): Promise<Date> {
  return (await ctx.database.db.selectFrom('mail_messages').select('expires_at').where('id', '=', id).executeTakeFirstOrThrow()).expires_at;
}

/** Runs the worker's data-retention job once, with its clock at `now`. */
async function runRetentionJob(now: Date): Promise<void> {
  const task = await retentionJobTask({ now: () => now, intervalMs: 3_600_000 }).start({ database: ctx.database, config: testConfig(), logger: pino({ level: 'silent' }) });
  await task.stop();
}

describe('mail to people at rest', () => {
  it('stores a password-reset mail with its link, recipient and subject encrypted, and deletes it once the link expired', async () => {
    const person = await portalUser(ctx.database.db, { name: 'Nkechi Obiageli-Ude' });
    const asked = await portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/forgot-password', payload: { email: person.email } });
    expect(asked.statusCode, asked.body).toBe(200);

    // `vouch mail list` (and the tests) still read it decrypted.
    const mail = await mailTo(person.email);
    const link = /https?:\/\/\S+reset-password\?token=([\w-]+)/.exec(mail.text);
    expect(link, mail.text).not.toBeNull();
    const token = link![1]!;

    const stored = await storedRow(mail.id);
    for (const value of [token, link![0], person.email, mail.subject, 'Nkechi']) expect(stored).not.toContain(value);
    expect(stored).toContain('reset_password');
    // It expires with its link (one hour).
    const expires = await expiryOf(mail.id);
    expect(Math.abs(expires.getTime() - (Date.now() + HOUR))).toBeLessThan(60_000);

    // Before the link expires, the retention job keeps it; after, the row is gone.
    await runRetentionJob(new Date(expires.getTime() - 60_000));
    expect(await listMail(ctx.database.db, { to: person.email })).toHaveLength(1);
    await runRetentionJob(new Date(expires.getTime() + 1_000));
    expect(await listMail(ctx.database.db, { to: person.email })).toEqual([]);
    const { rows } = await sql`select id from mail_messages where id = ${mail.id}`.execute(ctx.database.db.withoutPlugins());
    expect(rows).toEqual([]);
  });

  it('keeps a mail without a link for a set time, then deletes it', async () => {
    const mailer = new PeopleMail(ctx.database.db, { smtpUrl: undefined, mailFrom: 'Vouch <noreply@vouch.test>' }, pino({ level: 'silent' }));
    const id = await mailer.queue(ctx.database.db, { kind: 'funding_confirmed', to: 'owner@kudi.example', subject: 'Your ₦2,500 transfer is confirmed', text: 'Hello Ade, your wallet holds ₦2,500.' });
    const stored = await storedRow(id);
    for (const value of ['owner@kudi.example', '2,500', 'Ade']) expect(stored).not.toContain(value);
    const keepMs = MAIL_KEEP_DAYS * 24 * HOUR;
    expect(Math.abs((await expiryOf(id)).getTime() - (Date.now() + keepMs))).toBeLessThan(60_000);
    await runRetentionJob(new Date(Date.now() + keepMs + 60_000));
    expect(await listMail(ctx.database.db, { to: 'owner@kudi.example' })).toEqual([]);
  });

  it('encrypts mails stored in clear before the upgrade, as the start of the server does', async () => {
    const raw = ctx.database.db.withoutPlugins();
    const { rows } = await sql<{ id: number }>`
      insert into mail_messages (kind, recipient, subject, text, expires_at)
      values ('invitation', 'old.invitee@example.com', 'Ada invited you to Kudi on Vouch', 'Accept: http://127.0.0.1:8080/invitations/accept?token=old-token-in-clear', now() + interval '1 day')
      returning id`.execute(raw);
    const id = Number(rows[0]!.id);
    expect(await storedRow(id)).toContain('old-token-in-clear');

    expect((await sealStoredValues(ctx.database.db, { mode: 'legacy' })).mail_messages).toBeGreaterThanOrEqual(1);
    const stored = await storedRow(id);
    for (const value of ['old-token-in-clear', 'old.invitee@example.com', 'Ada invited you']) expect(stored).not.toContain(value);
    const [mail] = await listMail(ctx.database.db, { to: 'old.invitee@example.com' });
    expect(mail).toMatchObject({ id, kind: 'invitation', subject: 'Ada invited you to Kudi on Vouch', text: expect.stringContaining('token=old-token-in-clear') });
  });
});
