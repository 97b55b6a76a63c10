import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, type TestContext } from '../helpers/app.js';
import { client, EMPLOYMENT_BODY, GUARANTOR_BODY, messagesOf } from './fixtures.js';

interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
}

/** A real SMTP server on loopback, plain text (no TLS, no auth): it keeps what it receives, and refuses `bounce@` recipients. */
async function startSmtpServer() {
  const received: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo(address, _session, callback) {
      if (address.address.startsWith('bounce@')) callback(Object.assign(new Error('No such user'), { responseCode: 550 }));
      else callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return { url: `smtp://127.0.0.1:${port}`, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** Undoes quoted-printable soft line breaks and `=3D`, enough to read a link. */
const readable = (raw: string) => raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=');

async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 5_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('respondent email through SMTP (SMTP_URL set)', () => {
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  let t: TestContext;
  let http: ReturnType<typeof client>;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    t = await buildTestContext({ config: { smtpUrl: smtp.url, mailFrom: 'Vouch <no-reply@vouch.test>' } });
    http = client(t.app);
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  it('sends the guarantor an email holding the single-use link, and marks the outbox message sent', async () => {
    const org = await t.org({ riskLevel: 'LOW', name: 'Kudi Loans' });
    const record = (await http.post('/v1/verifications/guarantors', org.testSecret, GUARANTOR_BODY)).json().data;
    const mail = await until('the email', async () => smtp.received.find((m) => m.to.includes('babatunde@example.com')));
    const [message] = await messagesOf(t.database.db, 'guarantor_request', record.id);
    expect(mail.from).toBe('no-reply@vouch.test');
    expect(mail.raw).toMatch(/^Subject: Kudi Loans: will you stand as guarantor for Adaeze Okonkwo\?/m);
    expect(mail.raw).toMatch(/^Content-Type: multipart\/alternative/m);
    expect(readable(mail.raw)).toContain(message!.link);
    const sent = await until('sent_at', async () => (await messagesOf(t.database.db, 'guarantor_request', record.id))[0]?.sent_at ?? undefined);
    expect(sent).toBeInstanceOf(Date);
  });

  it('keeps the mail server refusal on the message, and the verification stands', async () => {
    const org = await t.org();
    const res = await http.post('/v1/verifications/employments', org.testSecret, { ...EMPLOYMENT_BODY, employerEmail: 'bounce@kolanut.example.com' });
    expect(res.statusCode).toBe(201);
    const id = res.json().data.id;
    const message = await until('the error', async () => {
      const [row] = await messagesOf(t.database.db, 'employer_request', id);
      return row?.error ? row : undefined;
    });
    expect(message.sent_at).toBeNull();
    expect(message.error).toMatch(/No such user|550/);
    expect(t.logs.join('')).toMatch(/respondent message not sent/);
  });
});
