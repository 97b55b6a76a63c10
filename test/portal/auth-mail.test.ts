import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { migrate } from '../../src/platform/db/migrate.js';
import { openConfiguredDatabase } from '../../src/platform/db/open.js';
import { listMail } from '../../src/portal/mail.js';
import { buildTestContext, testConfig, type TestContext } from '../helpers/app.js';
import { cliJson, runCli, throwawayEnv, type ThrowawayEnv } from '../helpers/cli.js';
import { portal } from '../helpers/portal.js';

/** A loopback SMTP server that keeps what it receives and refuses `bounce@` recipients. */
async function startSmtpServer() {
  const received: { to: string[]; raw: string }[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo(address, _session, callback) {
      if (address.address.startsWith('bounce')) callback(Object.assign(new Error('No such user'), { responseCode: 550 }));
      else callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        received.push({ to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return { url: `smtp://127.0.0.1:${port}`, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** Waits for what the app does after its answer: mails go out after the commit. */
async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 5_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const readable = (raw: string) => raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
const signUp = (ctx: TestContext, email: string) =>
  portal(ctx.app, undefined, { method: 'POST', url: '/api/auth/sign-up', payload: { name: 'Ada Obi', email, organizationName: 'Obi Lending' } });

describe('mail to people through SMTP (SMTP_URL set)', () => {
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  let ctx: TestContext;
  beforeAll(async () => {
    smtp = await startSmtpServer();
    ctx = await buildTestContext({ config: { smtpUrl: smtp.url, mailFrom: 'Vouch <no-reply@vouch.test>' } });
  });
  afterAll(async () => {
    await ctx.close();
    await smtp.close();
  });

  it('sends the sign-up link and marks the mail sent', async () => {
    const email = `ada-${Date.now()}@example.com`;
    const started = await signUp(ctx, email);
    expect(started.statusCode).toBe(202);
    // With a mail server the answer says the message is emailed.
    expect(started.json()).toEqual({ ok: true, delivery: 'email' });
    const stored = await until('the stored mail', async () => (await listMail(ctx.database.db, { to: email }))[0]);
    const link = /http:\/\/127\.0\.0\.1:8080\/complete-sign-up\?token=[A-Za-z0-9_-]{43}/.exec(stored.text)![0];
    const received = await until('the mail', async () => smtp.received.find((m) => m.to.includes(email)));
    expect(received.raw).toMatch(/^Subject: Finish creating your Vouch account/m);
    expect(readable(received.raw)).toContain(link);
    const sent = await until('sent_at', async () => (await listMail(ctx.database.db, { to: email }))[0]?.sentAt ?? undefined);
    expect(Date.parse(sent)).not.toBeNaN();
    expect(ctx.logs.filter((line) => line.includes('mail waiting'))).toEqual([]);
  });

  it('answers at once when the server refuses the mail, and keeps the error on the row', async () => {
    const email = `bounce-${Date.now()}@example.com`;
    expect((await signUp(ctx, email)).statusCode).toBe(202);
    const error = await until('the error', async () => (await listMail(ctx.database.db, { to: email }))[0]?.error ?? undefined);
    expect(error).toMatch(/No such user/);
    expect((await listMail(ctx.database.db, { to: email }))[0]!.sentAt).toBeNull();
    const line = await until('the log line', async () => ctx.logs.find((l) => l.includes('mail could not be sent')));
    expect(line).not.toContain(email);
  });
});

// Each CLI run starts `vouch` as built for the run (test/global-setup.ts): a few seconds each.
const SLOW = 60_000;

describe('vouch mail list', () => {
  let throwaway: ThrowawayEnv;
  const email = 'grace@example.com';

  beforeAll(async () => {
    throwaway = await throwawayEnv();
    // A sign-up through the API of an app on the CLI's database, then closed.
    const database = await openConfiguredDatabase(loadConfig(throwaway.env));
    try {
      await migrate(database.db);
      const app = await buildApp({ config: testConfig({ publicUrl: 'https://vouch.example.com', logLevel: 'silent' }), database });
      const res = await portal(app, undefined, {
        method: 'POST',
        url: '/api/auth/sign-up',
        payload: { name: 'Grace', email, organizationName: 'Grace Ltd' },
        headers: { origin: 'https://vouch.example.com' },
      });
      expect(res.statusCode).toBe(202);
      // Closing waits for the mail prepared after the answer.
      await app.close();
    } finally {
      await database.close();
    }
  }, SLOW);
  afterAll(() => throwaway.cleanup());

  it('prints the mails with their links, as JSON or for people, filtered by recipient', async () => {
    const mails = await cliJson<Record<string, unknown>[]>(['mail', 'list', '--json', '--to', 'GRACE@example.com'], throwaway.env);
    expect(mails).toEqual([
      expect.objectContaining({ kind: 'complete_sign_up', to: email, subject: 'Finish creating your Vouch account', sentAt: null, error: null, createdAt: expect.any(String) }),
    ]);
    expect(mails[0]!.text).toMatch(/https:\/\/vouch\.example\.com\/complete-sign-up\?token=[A-Za-z0-9_-]{43}/);
    expect(await cliJson(['mail', 'list', '--json', '--to', 'nobody@example.com'], throwaway.env)).toEqual([]);
    const human = await runCli(['mail', 'list'], throwaway.env);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^#1 {2}complete_sign_up {2}\S+ {2}to grace@example\.com {2}not sent$/m);
    expect(human.stdout).toContain('https://vouch.example.com/complete-sign-up?token=');
  }, SLOW);
});
