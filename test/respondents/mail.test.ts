import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, type TestContext } from '../helpers/app.js';
import { readable, startSmtpServer, until } from '../helpers/smtp.js';
import { client, EMPLOYMENT_BODY, GUARANTOR_BODY, messagesOf } from './fixtures.js';

// Live mode: test mode never mails respondents (test/security/test-mode-mail.test.ts).
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
    const record = (await http.post('/v1/verifications/guarantors', org.liveSecret, GUARANTOR_BODY)).json().data;
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
    const res = await http.post('/v1/verifications/employments', org.liveSecret, { ...EMPLOYMENT_BODY, employerEmail: 'bounce@kolanut.example.com' });
    expect(res.statusCode).toBe(201);
    const id = res.json().data.id;
    const message = await until('the error', async () => {
      const [row] = await messagesOf(t.database.db, 'employer_request', id);
      return row?.error ? row : undefined;
    });
    expect(message.sent_at).toBeNull();
    expect(message.error).toMatch(/No such user|550/);
    // The log says why, without naming the recipient: only the domain is left.
    const logged = t.logs.map((line) => JSON.parse(line) as { msg: string; err?: { message?: string } }).find((entry) => entry.msg === 'respondent message not sent');
    expect(logged?.err?.message).toMatch(/550 5.1.1 <\[redacted\]@kolanut.example.com>: Recipient address rejected/);
    expect(t.logs.join('')).not.toContain('bounce@');
    expect(logged?.err?.message).toContain('@kolanut.example.com');
  });
});
