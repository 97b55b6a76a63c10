import { Readable } from 'node:stream';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importRegistry } from '../../src/identities/registry/import.js';
import { hashToken } from '../../src/respondents/links.js';
import { buildTestContext, NOWHERE_WEBHOOK_URL, type TestContext } from '../helpers/app.js';
import { open, submit, textOf, type Page } from './browser.js';
import { client, deliveriesOf, GUARANTOR_BODY, IN_PROGRESS, linkOf, notVerified, TEST_NIN, VERIFIED } from './fixtures.js';

const BASE = '/v1/verifications/guarantors';
const LIVE_NIN = { nin: '12121212121', firstname: 'Aisha', lastname: 'Bello', gender: 'Female', phone: '08123334444', birthdate: '05-06-1995' };

describe('guarantor respondent page (real sockets)', () => {
  let t: TestContext;
  let http: ReturnType<typeof client>;
  let base: string;
  let org: Awaited<ReturnType<TestContext['org']>>;

  beforeAll(async () => {
    t = await buildTestContext({ webhookUrl: NOWHERE_WEBHOOK_URL });
    http = client(t.app);
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    org = await t.org({ riskLevel: 'LOW', fund: 1_000_000, name: 'Kudi Loans' });
    await importRegistry(t.database.db, Readable.from([JSON.stringify({ type: 'nin', record: LIVE_NIN })]));
  });
  afterAll(() => t.close());

  async function createGuarantor(body: object = GUARANTOR_BODY, secret = org.testSecret) {
    const res = await http.post(BASE, secret, body);
    expect(res.statusCode, res.body).toBe(201);
    const record = res.json().data;
    const { token } = await linkOf(t.database.db, 'guarantor_request', record.id);
    return { record, token, url: `${base}/respond/${token}` };
  }

  const fetchRecord = async (id: number, secret = org.testSecret) => (await http.get(`${BASE}/${id}`, secret)).json().data;

  function expectHtml(page: Page, status: number) {
    expect(page.status, page.html).toBe(status);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.html).toMatch(/^<!doctype html>/);
    expect(page.html).not.toMatch(/\bat .*\(.*:\d+:\d+\)|node_modules|Error:/);
  }

  it('shows a mobile-friendly form without scripts, with strict security headers', async () => {
    const { url } = await createGuarantor();
    const page = await open(url);
    expectHtml(page, 200);
    expect(page.html).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
    expect(page.html).not.toMatch(/<script/i);
    expect(page.html).toMatch(/<form method="post"/);
    expect(textOf(page.html)).toContain('Kudi Loans asks you, Babatunde Adeyemi, to confirm that you agree to be the guarantor of Adaeze Okonkwo');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'; style-src 'sha256-[^']+'; form-action 'self'/);
    // Only the accepted ID types are offered.
    expect(page.html).toContain('<option value="NIN"');
    expect(page.html).toContain('<option value="FRSC"');
    expect(page.html).not.toContain('<option value="VIN"');
  });

  it('accept with the NIN of the named guarantor: VERIFIED, webhook queued, link used (410 after)', async () => {
    const { record, url } = await createGuarantor();
    const form = await open(url);
    const answered = await submit(form, { decision: 'accept', idType: 'NIN', idNumber: TEST_NIN.nin, dob: TEST_NIN.dob });
    expectHtml(answered, 200);
    expect(textOf(answered.html)).toContain('Your answer has been sent to Kudi Loans');
    const after = await fetchRecord(record.id);
    expect(after.status).toEqual(VERIFIED);
    const deliveries = (await deliveriesOf(t.database.db, org.id)).filter((d) => d.payload.data.id === record.id);
    expect(deliveries.map((d) => [d.type, d.payload.data])).toEqual([['guarantor.completed', after]]);

    const again = await open(url);
    expectHtml(again, 410);
    expect(textOf(again.html)).toContain('This request has already been answered');
    const resubmit = await submit(form, { decision: 'decline' });
    expectHtml(resubmit, 410);
    expect((await fetchRecord(record.id)).status).toEqual(VERIFIED);
    // Stored masked, never the whole number.
    const row = await t.database.db.selectFrom('guarantor_verifications').select('response').where('id', '=', record.id).executeTakeFirstOrThrow();
    expect(row.response).toMatchObject({ decision: 'accepted', idType: 'NIN', idNumber: '704******61', found: true, via: 'respondent' });
  });

  it('accepts the date of birth as a date input sends it, and ID numbers with spaces', async () => {
    const { record, url } = await createGuarantor();
    const answered = await submit(await open(url), { decision: 'accept', idType: 'NIN', idNumber: '704 1235 8961', dob: '1985-11-02' });
    expectHtml(answered, 200);
    expect((await fetchRecord(record.id)).status).toEqual(VERIFIED);
  });

  it('two answers sent at once: one is recorded, the other is told the link was used', async () => {
    const { record, url } = await createGuarantor();
    const form = await open(url);
    const pages = await Promise.all([
      submit(form, { decision: 'accept', idType: 'NIN', idNumber: TEST_NIN.nin, dob: TEST_NIN.dob }),
      submit(form, { decision: 'decline' }),
    ]);
    expect(pages.map((page) => page.status).sort()).toEqual([200, 410]);
    const events = (await deliveriesOf(t.database.db, org.id)).filter((d) => d.payload.data.id === record.id);
    expect(events).toHaveLength(1);
    expect(events[0]!.payload.data).toEqual(await fetchRecord(record.id));
  });

  it('decline: NOT_VERIFIED / GUARANTOR_DECLINED', async () => {
    const { record, url } = await createGuarantor();
    const answered = await submit(await open(url), { decision: 'decline' });
    expectHtml(answered, 200);
    expect(textOf(answered.html)).toContain('declined');
    expect((await fetchRecord(record.id)).status).toEqual(notVerified('GUARANTOR_DECLINED'));
  });

  it('an ID whose holder is not the named guarantor, or a wrong date of birth: NOT_VERIFIED / ID_MISMATCH', async () => {
    const other = await createGuarantor({ ...GUARANTOR_BODY, firstname: 'Emeka', lastname: 'Obi' });
    await submit(await open(other.url), { decision: 'accept', idType: 'NIN', idNumber: TEST_NIN.nin, dob: TEST_NIN.dob });
    expect((await fetchRecord(other.record.id)).status).toEqual(notVerified('ID_MISMATCH'));

    const wrongDob = await createGuarantor();
    await submit(await open(wrongDob.url), { decision: 'accept', idType: 'NIN', idNumber: TEST_NIN.nin, dob: '03-11-1985' });
    expect((await fetchRecord(wrongDob.record.id)).status).toEqual(notVerified('ID_MISMATCH'));
  });

  it('an unknown ID number: the form again (422) with tries left; the third unknown one is ID_NOT_FOUND', async () => {
    const { record, url } = await createGuarantor();
    let page = await open(url);
    for (const left of [2, 1]) {
      page = await submit(page, { decision: 'accept', idType: 'NIN', idNumber: '11111111111', dob: TEST_NIN.dob });
      expectHtml(page, 422);
      expect(textOf(page.html)).toContain(`We could not find this ID number. Check it and try again (${left} ${left === 1 ? 'try' : 'tries'} left)`);
      // What the guarantor typed is kept.
      expect(page.html).toContain('value="11111111111"');
      expect((await fetchRecord(record.id)).status).toEqual(IN_PROGRESS);
    }
    page = await submit(page, { decision: 'accept', idType: 'NIN', idNumber: '22222222222', dob: TEST_NIN.dob });
    expectHtml(page, 200);
    expect((await fetchRecord(record.id)).status).toEqual(notVerified('ID_NOT_FOUND'));
  });

  it('an incomplete form is shown again with what to fix, and nothing is recorded', async () => {
    const { record, url } = await createGuarantor({ ...GUARANTOR_BODY, acceptableIdType: ['BVN'] });
    const cases: [Record<string, string | undefined>, string][] = [
      [{ decision: undefined }, 'Choose whether you agree to be the guarantor.'],
      [{ decision: 'accept', idType: 'NIN', idNumber: TEST_NIN.nin, dob: TEST_NIN.dob }, 'Choose one of the IDs listed.'],
      [{ decision: 'accept', idType: 'BVN', idNumber: '123', dob: TEST_NIN.dob }, 'Enter your BVN (Bank Verification Number) number: 11 digits.'],
      [{ decision: 'accept', idType: 'BVN', idNumber: '22345678901', dob: '31-02-1990' }, 'Enter your date of birth as day-month-year'],
      [{ decision: 'accept', idType: 'BVN', idNumber: '22345678901', dob: '01-01-2999' }, 'Enter your date of birth as day-month-year'],
    ];
    for (const [changes, message] of cases) {
      const page = await submit(await open(url), changes);
      expectHtml(page, 422);
      expect(textOf(page.html)).toContain(message);
    }
    expect((await fetchRecord(record.id)).status).toEqual(IN_PROGRESS);
    // The BVN test identity is Adaeze Okonkwo, not the guarantor: answered, and a mismatch.
    await submit(await open(url), { decision: 'accept', idType: 'BVN', idNumber: '22345678901', dob: '14-03-1990' });
    expect((await fetchRecord(record.id)).status).toEqual(notVerified('ID_MISMATCH'));
  });

  it('checks a live verification against the live registry, where the test identities do not exist', async () => {
    const { record, url } = await createGuarantor({ ...GUARANTOR_BODY, firstname: 'Aisha', lastname: 'Bello' }, org.liveSecret);
    const tried = await submit(await open(url), { decision: 'accept', idType: 'NIN', idNumber: TEST_NIN.nin, dob: TEST_NIN.dob });
    expectHtml(tried, 422);
    const answered = await submit(tried, { decision: 'accept', idType: 'NIN', idNumber: LIVE_NIN.nin, dob: LIVE_NIN.birthdate });
    expectHtml(answered, 200);
    expect((await fetchRecord(record.id, org.liveSecret)).status).toEqual(VERIFIED);
  });

  it('an expired link shows when it expired (410) and records nothing', async () => {
    const { record, url, token } = await createGuarantor();
    const form = await open(url);
    await t.database.db
      .updateTable('respondent_links')
      .set({ expires_at: new Date(Date.now() - 60_000) })
      .where('token_hash', '=', hashToken(token))
      .execute();
    const page = await open(url);
    expectHtml(page, 410);
    expect(textOf(page.html)).toContain('This link has expired');
    const late = await submit(form, { decision: 'accept', idType: 'NIN', idNumber: TEST_NIN.nin, dob: TEST_NIN.dob });
    expectHtml(late, 410);
    expect((await fetchRecord(record.id)).status).toEqual(IN_PROGRESS);
  });

  it('unknown and malformed links are a 404 page; so is any other path under /respond', async () => {
    for (const path of ['/respond/' + 'A'.repeat(43), '/respond/short', '/respond/' + 'x'.repeat(200), '/respond/a/b', '/respond/']) {
      const page = await open(`${base}${path}`);
      expectHtml(page, 404);
    }
    // A link mangled into invalid percent-encoding fails in the router, before any route: still a page.
    for (const path of ['/respond/%ZZ', '/respond/abc%E0%A4%A', '//respond/%']) {
      const page = await open(`${base}${path}`);
      expectHtml(page, 400);
      expect(page.html).toContain('We could not read your answer');
    }
    // Elsewhere the same failure stays the family's JSON.
    const api = await fetch(`${base}/v1/verifications/guarantors/%ZZ`);
    expect([api.status, api.headers.get('content-type')]).toEqual([400, 'application/json; charset=utf-8']);
  });

  it('a withdrawn (cancelled) request and one completed by the test helper say so', async () => {
    const cancelled = await createGuarantor();
    await http.del(`${BASE}/${cancelled.record.id}`, org.testSecret);
    const page = await open(cancelled.url);
    expectHtml(page, 410);
    expect(textOf(page.html)).toContain('This request was withdrawn');

    const helped = await createGuarantor();
    await http.post(`/v1/test-helpers/guarantors/${helped.record.id}/complete`, org.testSecret, { outcome: 'verified' });
    expectHtml(await open(helped.url), 410);
  });

  it('escapes user data: a script in a name is shown as text', async () => {
    const xss = '<script>alert("x")</script>';
    const { url } = await createGuarantor({
      ...GUARANTOR_BODY,
      firstname: xss,
      applicant: { ...GUARANTOR_BODY.applicant, firstname: '"><img src=x onerror=alert(1)>' },
    });
    const page = await open(url);
    expectHtml(page, 200);
    expect(page.html).not.toContain('<script>');
    expect(page.html).not.toContain('<img');
    expect(page.html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    expect(textOf(page.html)).toContain(xss);
    // What a guarantor types is escaped when the form comes back too.
    const again = await submit(page, { decision: 'accept', idType: 'NIN', idNumber: '"><b>', dob: '<i>' });
    expectHtml(again, 422);
    expect(again.html).not.toContain('<b>');
    expect(again.html).toContain('value="&quot;&gt;&lt;b&gt;"');
  });

  it('other content types and oversized bodies get an HTML page, never JSON or a stack', async () => {
    const { url } = await createGuarantor();
    const xml = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/xml' }, body: '<a/>' });
    expect(xml.status).toBe(415);
    expect(xml.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const big = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `comment=${'a'.repeat(40_000)}` });
    expect(big.status).toBe(413);
    expect(await big.text()).toMatch(/^<!doctype html>/);
  });

  it('a failure on our side is a friendly 500 page, logged without the token', async () => {
    const { url, token } = await createGuarantor();
    // This test's own lines: a mangled link (above) fails in the router and is logged, its token redacted.
    t.logs.length = 0;
    await sql`alter table guarantor_verifications rename to guarantor_verifications_away`.execute(t.database.db);
    try {
      const page = await open(url);
      expectHtml(page, 500);
      expect(textOf(page.html)).toContain('Something went wrong');
    } finally {
      await sql`alter table guarantor_verifications_away rename to guarantor_verifications`.execute(t.database.db);
    }
    const logs = t.logs.join('');
    expect(logs).toMatch(/respondent page failed/);
    expect(logs).not.toContain(token);
    expect(logs).not.toContain('/respond/');
  });

  it('with verifyAddress, an accepting guarantor waits for the address; its completion completes the guarantor', async () => {
    const { record, url } = await createGuarantor({ ...GUARANTOR_BODY, verifyAddress: true });
    await submit(await open(url), { decision: 'accept', idType: 'NIN', idNumber: TEST_NIN.nin, dob: TEST_NIN.dob });
    expect((await fetchRecord(record.id)).status).toEqual({ status: 'IN_PROGRESS', subStatus: 'AWAITING_ADDRESS_VERIFICATION', state: 'IN_PROGRESS' });
    expect((await deliveriesOf(t.database.db, org.id)).filter((d) => d.payload.data.id === record.id && d.type.startsWith('guarantor'))).toEqual([]);
    const address = await http.post(`/v1/test-helpers/addresses/${record.addressVerificationId}/complete`, org.testSecret, { outcome: 'verified' });
    expect(address.statusCode, address.body).toBe(200);
    const done = await fetchRecord(record.id);
    expect(done.status).toEqual(VERIFIED);
    const events = (await deliveriesOf(t.database.db, org.id)).filter((d) => d.type === 'guarantor.completed' && d.payload.data.id === record.id);
    expect(events.map((d) => d.payload.data)).toEqual([done]);
  });

  it('with verifyAddress, a declining guarantor ends it at once and the address visit is cancelled', async () => {
    const { record, url } = await createGuarantor({ ...GUARANTOR_BODY, verifyAddress: true });
    await submit(await open(url), { decision: 'decline' });
    expect((await fetchRecord(record.id)).status).toEqual(notVerified('GUARANTOR_DECLINED'));
    const address = (await http.get(`/v1/verifications/addresses/${record.addressVerificationId}`, org.testSecret)).json().data;
    expect(address.status.status).toBe('Cancelled');
  });
});
