import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, NOWHERE_WEBHOOK_URL, type TestContext } from '../helpers/app.js';
import { formFields, open, submit, textOf, type Page } from './browser.js';
import { client, deliveriesOf, EMPLOYMENT_BODY, IN_PROGRESS, linkOf, notVerified, TIMESTAMP, VERIFIED } from './fixtures.js';

const BASE = '/v1/verifications/employments';

/** What an HR officer fills in on top of the prefilled claim. */
const ATTESTATION = {
  decision: 'confirm',
  rehire: 'yes',
  employmentType: 'Full-time',
  salaryRange: '₦400,000 - ₦600,000 monthly',
  compensationRate: 'Monthly',
  jobBenefits: 'Health insurance, Pension',
  industry: 'Financial technology',
  companyAddress: '12B Admiralty Way, Lekki',
  supervisorName: 'Ngozi Eze',
  supervisorTitle: 'Engineering Manager',
  supervisorEmail: 'ngozi@kolanut.example.com',
  supervisorPhone: '08061234567',
  attestatorName: 'Funke Adebayo',
  attestatorTitle: 'HR Manager',
  attestatorContact: 'funke@kolanut.example.com',
  comment: 'Reliable & punctual <b>engineer</b>',
  consent: 'yes',
};

describe('employer respondent page (real sockets)', () => {
  let t: TestContext;
  let http: ReturnType<typeof client>;
  let base: string;
  let org: Awaited<ReturnType<TestContext['org']>>;

  beforeAll(async () => {
    t = await buildTestContext({ webhookUrl: NOWHERE_WEBHOOK_URL });
    http = client(t.app);
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    org = await t.org({ name: 'Kudi Loans' });
  });
  afterAll(() => t.close());

  async function createEmployment(body: object = EMPLOYMENT_BODY) {
    const res = await http.post(BASE, org.testSecret, body);
    expect(res.statusCode, res.body).toBe(201);
    const record = res.json().data;
    const { token } = await linkOf(t.database.db, 'employer_request', record.id);
    return { record, url: `${base}/respond/${token}` };
  }

  const fetchRecord = async (id: number) => (await http.get(`${BASE}/${id}`, org.testSecret)).json().data;

  function expectHtml(page: Page, status: number) {
    expect(page.status, textOf(page.html)).toBe(status);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
  }

  it('prefills the claim; confirming it with the attestation fields completes VERIFIED / VERIFIED / COMPLETE', async () => {
    const { record, url } = await createEmployment();
    const page = await open(url);
    expectHtml(page, 200);
    expect(textOf(page.html)).toContain('Kudi Loans asks Kolanut Technologies to confirm what Chidi Okafor says about their work there');
    expect(formFields(page.html)).toMatchObject({ title: 'Software Engineer', startDate: '01-04-2019', endDate: '30-06-2023', companyName: 'Kolanut Technologies' });

    const answered = await submit(page, ATTESTATION);
    expectHtml(answered, 200);
    expect(textOf(answered.html)).toContain('Your answer has been sent to Kudi Loans');
    const done = await fetchRecord(record.id);
    expect(done).toMatchObject({
      status: VERIFIED,
      title: 'Software Engineer',
      startDate: '01/04/2019',
      endDate: '30/06/2023',
      employeeStartDate: '01/04/2019',
      rehire: true,
      verifiedPoc: true,
      employerConsented: true,
      currentlyEmployed: false,
      employeeCurrentlyEmployed: false,
      companyName: 'Kolanut Technologies',
      employmentType: 'Full-time',
      salaryRange: '₦400,000 - ₦600,000 monthly',
      compensationRate: 'Monthly',
      jobBenefits: 'Health insurance, Pension',
      industry: 'Financial technology',
      companyAddress: '12B Admiralty Way, Lekki',
      supervisorName: 'Ngozi Eze',
      supervisorTitle: 'Engineering Manager',
      supervisorEmail: 'ngozi@kolanut.example.com',
      supervisorPhone: '08061234567',
      attestatorName: 'Funke Adebayo',
      attestatorTitle: 'HR Manager',
      attestatorContact: 'funke@kolanut.example.com',
      comment: 'Reliable & punctual <b>engineer</b>',
    });
    expect(done.employerRespondedAt).toMatch(TIMESTAMP);
    const events = (await deliveriesOf(t.database.db, org.id)).filter((d) => d.payload.data.id === record.id);
    expect(events.map((d) => [d.type, d.payload.data])).toEqual([['employment.completed', done]]);
    expectHtml(await open(url), 410);
  });

  it('a correction (title, or a date in another month) completes NOT_VERIFIED / DATA_MISMATCH, keeping the claim', async () => {
    const { record, url } = await createEmployment();
    await submit(await open(url), { ...ATTESTATION, title: 'Junior Software Engineer', endDate: '' });
    const done = await fetchRecord(record.id);
    expect(done).toMatchObject({
      status: notVerified('DATA_MISMATCH'),
      title: 'Junior Software Engineer',
      endDate: '',
      currentlyEmployed: true,
      claimed: { title: 'Software Engineer', startDate: '01/04/2019', endDate: '30/06/2023' },
    });
  });

  it('the same title in other case and a date in the same month still verify', async () => {
    const { record, url } = await createEmployment();
    await submit(await open(url), { ...ATTESTATION, title: 'software  engineer', startDate: '15-04-2019' });
    const done = await fetchRecord(record.id);
    expect(done).toMatchObject({ status: VERIFIED, title: 'software  engineer', startDate: '15/04/2019' });
  });

  it('"never worked here" is EMPLOYEE_NOT_FOUND; a refusal is EMPLOYER_DECLINED', async () => {
    const unknown = await createEmployment();
    const answered = await submit(await open(unknown.url), { decision: 'not_employee', attestatorName: 'Funke Adebayo', attestatorContact: '08031234567', consent: 'yes' });
    expectHtml(answered, 200);
    expect(await fetchRecord(unknown.record.id)).toMatchObject({ status: notVerified('EMPLOYEE_NOT_FOUND'), employerConsented: true, attestatorName: 'Funke Adebayo' });

    const declined = await createEmployment();
    await submit(await open(declined.url), { decision: 'decline', comment: 'We do not give references' });
    expect(await fetchRecord(declined.record.id)).toMatchObject({
      status: notVerified('EMPLOYER_DECLINED'),
      employerConsented: false,
      comment: 'We do not give references',
      title: 'Software Engineer',
    });
  });

  it('an incomplete attestation is shown again (422) with what to fix; nothing is recorded', async () => {
    const { record, url } = await createEmployment();
    const cases: [Record<string, string | undefined>, string[]][] = [
      [{ decision: undefined }, ['Choose whether this person worked with you.']],
      [{ ...ATTESTATION, consent: undefined, attestatorName: '' }, ['Enter your name.', 'Tick the box']],
      [{ ...ATTESTATION, rehire: undefined }, ['Say whether you would rehire this person.']],
      [{ ...ATTESTATION, startDate: '2019-13-01' }, ['Enter the start date']],
      [{ ...ATTESTATION, endDate: '01-01-2018' }, ['The end date must not be before the start date.']],
      [{ ...ATTESTATION, supervisorEmail: 'nope', attestatorContact: 'someone' }, ["The supervisor's email is not a valid email address.", 'Your contact must be an email address']],
      [{ ...ATTESTATION, employmentType: 'Slave' }, ['Choose an employment type from the list.']],
    ];
    for (const [changes, messages] of cases) {
      const page = await submit(await open(url), changes);
      expectHtml(page, 422);
      for (const message of messages) expect(textOf(page.html)).toContain(message);
      expect(page.html).not.toContain('<b>engineer</b>');
    }
    expect((await fetchRecord(record.id)).status).toEqual(IN_PROGRESS);
  });

  it('escapes the claim and the employer name on the page', async () => {
    const { url } = await createEmployment({ ...EMPLOYMENT_BODY, employerName: 'Acme <script>x()</script>', title: '"><svg onload=alert(1)>' });
    const page = await open(url);
    expect(page.html).not.toMatch(/<script|<svg/);
    expect(textOf(page.html)).toContain('Acme <script>x()</script>');
  });
});
