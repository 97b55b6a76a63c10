import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, type TestContext } from '../helpers/app.js';
import { addMember, portal, portalUser, type PortalUser } from '../helpers/portal.js';
import { startSmtpServer, until, type TestSmtpServer } from '../helpers/smtp.js';
import { balanceOf, client, EMPLOYMENT_BODY, expectStyleA, GUARANTOR_BODY } from '../respondents/fixtures.js';

/**
 * Issue 18, finding 6: a just-signed-up organization (not enabled) could, with its test secret,
 * make Vouch mail any address with its own text (guarantor and employer requests) and show that
 * text on Vouch's /respond pages. Now test mode mails nobody: the messages wait in the
 * organization's sandbox outbox (portal API), and their pages say TEST MODE at the top. Live
 * mails to third parties (respondent requests, team invitations) are capped per organization
 * per hour: past the cap a create answers 429 and stores and charges nothing.
 */

const CAP = 3;
const VICTIM = 'victim@bank.example.net';
const LURE = 'URGENT: your account is suspended. Call +234 800 000 0000 <b>now</b>';
const SCRIPT = '<script>alert(document.cookie)</script>';

let t: TestContext;
let smtp: TestSmtpServer;
let http: ReturnType<typeof client>;

beforeAll(async () => {
  smtp = await startSmtpServer();
  t = await buildTestContext({ config: { smtpUrl: smtp.url, mailCapPerHour: CAP } });
  http = client(t.app);
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

/** A new organization as a signed-up attacker has it (not enabled) or an enabled customer, with a signed-in member. */
async function orgWithMember(options: { enabled: boolean; fund?: number; role?: 'owner' | 'viewer' | 'developer' }) {
  const org = await t.org({ enabled: options.enabled, riskLevel: 'LOW', fund: options.fund ?? 0, name: `Kudi ${SCRIPT}` });
  const member = await portalUser(t.database.db);
  await addMember(t.database.db, org.id, member.personId, options.role ?? 'owner');
  return { org, member };
}

const sandbox = (user: PortalUser | undefined, orgId: string, query = '') => portal(t.app, user, { method: 'GET', url: `/api/orgs/${orgId}/sandbox/messages${query}` });

const mailsTo = (address: string) => smtp.received.filter((mail) => mail.to.includes(address));

async function countRows(table: 'guarantor_verifications' | 'employment_verifications' | 'outbox_messages' | 'usage_events' | 'ledger_entries' | 'invitations' | 'mail_messages', orgId?: string) {
  let query = t.database.db.selectFrom(table).select((eb) => eb.fn.countAll<string>().as('n'));
  if (orgId && table !== 'mail_messages') query = query.where('org_id', '=', orgId);
  return Number((await query.executeTakeFirstOrThrow()).n);
}

describe('test mode mails nobody outside the organization', () => {
  it('keeps test-mode guarantor and employer requests in the sandbox outbox, never on the SMTP server', async () => {
    const { org, member } = await orgWithMember({ enabled: false });
    const guarantor = await http.post('/v1/verifications/guarantors', org.testSecret, {
      ...GUARANTOR_BODY,
      email: VICTIM,
      firstname: LURE,
      applicant: { ...GUARANTOR_BODY.applicant, firstname: SCRIPT },
    });
    expect(guarantor.statusCode, guarantor.body).toBe(201);
    const employment = await http.post('/v1/verifications/employments', org.testSecret, { ...EMPLOYMENT_BODY, employerEmail: `hr.${VICTIM}`, employerName: LURE });
    expect(employment.statusCode, employment.body).toBe(201);

    // A live mail of another organization, created after, arrives: the test ones had their chance first.
    const { org: customer } = await orgWithMember({ enabled: true, fund: 1_000_000 });
    expect((await http.post('/v1/verifications/employments', customer.liveSecret, { ...EMPLOYMENT_BODY, employerEmail: 'hr@customer.example.com' })).statusCode).toBe(201);
    await until('the live mail', async () => mailsTo('hr@customer.example.com')[0]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(mailsTo(VICTIM)).toEqual([]);
    expect(mailsTo(`hr.${VICTIM}`)).toEqual([]);

    // The organization's member reads them in the sandbox outbox, links included.
    const res = await sandbox(member, org.id);
    expect(res.statusCode, res.body).toBe(200);
    const page = res.json() as { data: { kind: string; to: string; subject: string; text: string; link: string; verificationId: number }[]; total: number };
    expect(page.total).toBe(2);
    expect(page.data.map((m) => [m.kind, m.to, m.verificationId])).toEqual([
      ['employer_request', `hr.${VICTIM}`, employment.json().data.id],
      ['guarantor_request', VICTIM, guarantor.json().data.id],
    ]);
    for (const message of page.data) {
      expect(message.link).toMatch(/^http:\/\/127\.0\.0\.1:8080\/respond\/[A-Za-z0-9_-]{43}$/);
      expect(message.text).toContain(message.link);
    }
    expect(page.data[1]!.text).toContain(LURE);
    // Nothing of it is waiting to be sent, nor marked sent or failed.
    const rows = await t.database.db.selectFrom('outbox_messages').select(['mode', 'sent_at', 'error']).where('org_id', '=', org.id).execute();
    expect(rows).toEqual([
      { mode: 'test', sent_at: null, error: null },
      { mode: 'test', sent_at: null, error: null },
    ]);
  });

  it("banners a test request's page TEST MODE with the organization's name, its text escaped", async () => {
    const { org, member } = await orgWithMember({ enabled: false });
    expect(
      (await http.post('/v1/verifications/guarantors', org.testSecret, { ...GUARANTOR_BODY, email: VICTIM, applicant: { ...GUARANTOR_BODY.applicant, firstname: SCRIPT } })).statusCode,
    ).toBe(201);
    const [message] = (await sandbox(member, org.id)).json().data as { link: string }[];
    const path = new URL(message!.link).pathname;
    const page = await t.app.inject({ method: 'GET', url: path });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('TEST MODE — sample request from Kudi &lt;script&gt;alert(document.cookie)&lt;/script&gt;, not a real request');
    expect(page.body).toMatch(/<title>TEST MODE · /);
    expect(page.body).toContain('Do not enter real ID numbers or personal details.');
    expect(page.body).not.toContain(SCRIPT);
    // The banner stays on every page of the link: a wrong form shown again, too.
    const again = await t.app.inject({ method: 'POST', url: path, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'decision=maybe' });
    expect(again.statusCode).toBe(422);
    expect(again.body).toContain('TEST MODE — sample request from');
  });

  it('shows the sandbox outbox only to members who may create verifications, and only their own organization', async () => {
    const a = await orgWithMember({ enabled: false });
    const b = await orgWithMember({ enabled: false });
    expect((await http.post('/v1/verifications/employments', a.org.testSecret, EMPLOYMENT_BODY)).statusCode).toBe(201);
    expect((await http.post('/v1/verifications/employments', b.org.testSecret, { ...EMPLOYMENT_BODY, employerEmail: 'hr@b.example.com' })).statusCode).toBe(201);

    expectStyleA(await sandbox(b.member, a.org.id), 404, 'NOT_FOUND_ERROR');
    expectStyleA(await sandbox(undefined, a.org.id), 401, 'ACCESS_DENIED');
    const viewer = await portalUser(t.database.db);
    await addMember(t.database.db, a.org.id, viewer.personId, 'viewer');
    expectStyleA(await sandbox(viewer, a.org.id), 403, 'FORBIDDEN');
    const developer = await portalUser(t.database.db);
    await addMember(t.database.db, a.org.id, developer.personId, 'developer');
    const own = (await sandbox(developer, a.org.id)).json() as { data: { to: string }[]; total: number };
    expect(own.data.map((m) => m.to)).toEqual(['hr@kolanut.example.com']);
    expect((await sandbox(b.member, b.org.id)).json().data.map((m: { to: string }) => m.to)).toEqual(['hr@b.example.com']);
    expectStyleA(await sandbox(a.member, a.org.id, '?limit=0'), 400, 'VALIDATION_ERROR');
  });

  it('lists no live message in the sandbox outbox', async () => {
    const { org, member } = await orgWithMember({ enabled: true, fund: 1_000_000 });
    expect((await http.post('/v1/verifications/employments', org.liveSecret, { ...EMPLOYMENT_BODY, employerEmail: 'hr@live.example.com' })).statusCode).toBe(201);
    await until('the live mail', async () => mailsTo('hr@live.example.com')[0]);
    expect((await sandbox(member, org.id)).json()).toMatchObject({ data: [], total: 0 });
  });
});

describe('live mails to third parties are capped per organization per hour', () => {
  it('answers 429 with Retry-After past the cap, creating, queueing and charging nothing; test mode is not counted', async () => {
    const { org } = await orgWithMember({ enabled: true, fund: 10_000_000 });
    for (let i = 0; i < CAP; i++) {
      const res = await http.post('/v1/verifications/employments', org.liveSecret, { ...EMPLOYMENT_BODY, employerEmail: `hr${i}@cap.example.com` });
      expect(res.statusCode, res.body).toBe(201);
    }
    await until('the live mails', async () => (smtp.received.filter((m) => m.to.some((to) => to.endsWith('@cap.example.com'))).length === CAP ? true : undefined));
    const before = {
      balance: await balanceOf(t.database.db, org.id),
      employments: await countRows('employment_verifications', org.id),
      guarantors: await countRows('guarantor_verifications', org.id),
      messages: await countRows('outbox_messages', org.id),
      usage: await countRows('usage_events', org.id),
      ledger: await countRows('ledger_entries', org.id),
    };

    const employment = await http.post('/v1/verifications/employments', org.liveSecret, { ...EMPLOYMENT_BODY, employerEmail: 'hr-over@cap.example.com' });
    const body = expectStyleA(employment, 429, 'RATE_LIMITED');
    expect(body.message).toMatch(new RegExp(`limit of ${CAP} emails an hour`));
    const retryAfter = Number(employment.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expectStyleA(await http.post('/v1/verifications/guarantors', org.liveSecret, { ...GUARANTOR_BODY, email: 'g-over@cap.example.com' }), 429, 'RATE_LIMITED');

    expect({
      balance: await balanceOf(t.database.db, org.id),
      employments: await countRows('employment_verifications', org.id),
      guarantors: await countRows('guarantor_verifications', org.id),
      messages: await countRows('outbox_messages', org.id),
      usage: await countRows('usage_events', org.id),
      ledger: await countRows('ledger_entries', org.id),
    }).toEqual(before);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(mailsTo('hr-over@cap.example.com')).toEqual([]);

    // Test mode sends nothing, so it is not held back.
    expect((await http.post('/v1/verifications/employments', org.testSecret, EMPLOYMENT_BODY)).statusCode).toBe(201);
    // Another organization has its own allowance.
    const { org: other } = await orgWithMember({ enabled: true, fund: 1_000_000 });
    expect((await http.post('/v1/verifications/employments', other.liveSecret, EMPLOYMENT_BODY)).statusCode).toBe(201);
  });

  it('holds under a burst: concurrent creates never exceed the cap', async () => {
    const { org } = await orgWithMember({ enabled: true, fund: 10_000_000 });
    const answers = await Promise.all(
      Array.from({ length: CAP + 3 }, (_, i) => http.post('/v1/verifications/employments', org.liveSecret, { ...EMPLOYMENT_BODY, employerEmail: `hr${i}@burst.example.com` })),
    );
    expect(answers.filter((res) => res.statusCode === 201)).toHaveLength(CAP);
    expect(answers.filter((res) => res.statusCode === 429)).toHaveLength(3);
    expect(await countRows('outbox_messages', org.id)).toBe(CAP);
  });

  it('counts team invitations from the portal with the respondent mails', async () => {
    const { org, member } = await orgWithMember({ enabled: true, fund: 10_000_000 });
    const invite = (email: string) => portal(t.app, member, { method: 'POST', url: `/api/orgs/${org.id}/invitations`, payload: { email, role: 'viewer' } });
    expect((await http.post('/v1/verifications/employments', org.liveSecret, EMPLOYMENT_BODY)).statusCode).toBe(201);
    for (let i = 1; i < CAP; i++) expect((await invite(`invitee${i}@team.example.com`)).statusCode).toBe(201);
    const mailsBefore = await countRows('mail_messages');

    const refused = await invite('one-too-many@team.example.com');
    expectStyleA(refused, 429, 'RATE_LIMITED');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(await countRows('invitations', org.id)).toBe(CAP - 1);
    expect(await countRows('mail_messages')).toBe(mailsBefore);
    expectStyleA(await http.post('/v1/verifications/employments', org.liveSecret, EMPLOYMENT_BODY), 429, 'RATE_LIMITED');
    // The portal's create goes through the same service, and the same cap.
    const fromPortal = await portal(t.app, member, { method: 'POST', url: `/api/orgs/${org.id}/verifications/guarantor?mode=live`, payload: GUARANTOR_BODY });
    expectStyleA(fromPortal, 429, 'RATE_LIMITED');
    expect(await countRows('guarantor_verifications', org.id)).toBe(0);
  });
});
