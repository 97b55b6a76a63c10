import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { employmentExpiryTask } from '../../src/employments/expiry.js';
import { expireUnansweredEmployments } from '../../src/employments/service.js';
import { fileUrls, loadSigningKey } from '../../src/files/urls.js';
import { guarantorExpiryTask } from '../../src/guarantors/expiry.js';
import { expireUnansweredGuarantors } from '../../src/guarantors/service.js';
import { LINK_TTL_MS } from '../../src/respondents/links.js';
import { startWorker } from '../../src/worker.js';
import { buildTestContext, NOWHERE_WEBHOOK_URL, testConfig, type TestContext } from '../helpers/app.js';
import { open } from './browser.js';
import { client, deliveriesOf, EMPLOYMENT_BODY, GUARANTOR_BODY, IN_PROGRESS, linkOf, notVerified, TEST_NIN } from './fixtures.js';

const DAY = 24 * 60 * 60 * 1000;

describe('links that expire unanswered', () => {
  let t: TestContext;
  let http: ReturnType<typeof client>;
  let org: Awaited<ReturnType<TestContext['org']>>;

  beforeAll(async () => {
    t = await buildTestContext({ webhookUrl: NOWHERE_WEBHOOK_URL });
    http = client(t.app);
    org = await t.org({ riskLevel: 'LOW' });
  });
  afterAll(() => t.close());

  /** Moves a verification (and its link) `days` into the past, as if created then. */
  async function age(table: 'guarantor_verifications' | 'employment_verifications', id: number, days: number) {
    const createdAt = new Date(Date.now() - days * DAY);
    await t.database.db.updateTable(table).set({ created_at: createdAt } as never).where('id', '=', id).execute();
    await t.database.db
      .updateTable('respondent_links')
      .set({ expires_at: new Date(createdAt.getTime() + LINK_TTL_MS) })
      .where('verification_id', '=', id)
      .where('kind', '=', table === 'guarantor_verifications' ? 'guarantor' : 'employer')
      .execute();
  }

  const urls = async () => fileUrls(await loadSigningKey(t.database.db), 'http://127.0.0.1:8080');

  it('completes a guarantor verification NOT_VERIFIED / NO_RESPONSE once its link expired, with the webhook; fresh ones wait', async () => {
    const old = (await http.post('/v1/verifications/guarantors', org.testSecret, { ...GUARANTOR_BODY, verifyAddress: true })).json().data;
    const fresh = (await http.post('/v1/verifications/guarantors', org.testSecret, GUARANTOR_BODY)).json().data;
    await age('guarantor_verifications', old.id, 8);
    await age('guarantor_verifications', fresh.id, 6);
    expect(await expireUnansweredGuarantors(t.database.db, await urls(), new Date())).toBe(1);
    const ended = (await http.get(`/v1/verifications/guarantors/${old.id}`, org.testSecret)).json().data;
    expect(ended.status).toEqual(notVerified('NO_RESPONSE'));
    expect((await http.get(`/v1/verifications/guarantors/${fresh.id}`, org.testSecret)).json().data.status).toEqual(IN_PROGRESS);
    const events = (await deliveriesOf(t.database.db, org.id)).filter((d) => d.type === 'guarantor.completed');
    expect(events.map((d) => d.payload.data)).toEqual([ended]);
    // No agent is sent to the address of a guarantor who never answered.
    const address = (await http.get(`/v1/verifications/addresses/${old.addressVerificationId}`, org.testSecret)).json().data;
    expect(address.status.status).toBe('Cancelled');
    expect(await expireUnansweredGuarantors(t.database.db, await urls(), new Date())).toBe(0);
  });

  it('leaves a guarantor who answered and waits for the address', async () => {
    const record = (await http.post('/v1/verifications/guarantors', org.testSecret, { ...GUARANTOR_BODY, verifyAddress: true })).json().data;
    const { token } = await linkOf(t.database.db, 'guarantor_request', record.id);
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const page = await open(`${base}/respond/${token}`);
    const body = new URLSearchParams({ decision: 'accept', idType: 'NIN', idNumber: TEST_NIN.nin, dob: TEST_NIN.dob });
    expect(page.status).toBe(200);
    expect((await fetch(page.url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body })).status).toBe(200);
    await age('guarantor_verifications', record.id, 30);
    expect(await expireUnansweredGuarantors(t.database.db, await urls(), new Date())).toBe(0);
    expect((await http.get(`/v1/verifications/guarantors/${record.id}`, org.testSecret)).json().data.status.subStatus).toBe('AWAITING_ADDRESS_VERIFICATION');
  });

  it('completes employment verifications the same way', async () => {
    const record = (await http.post('/v1/verifications/employments', org.testSecret, EMPLOYMENT_BODY)).json().data;
    await age('employment_verifications', record.id, 7.01);
    expect(await expireUnansweredEmployments(t.database.db, new Date())).toBe(1);
    expect((await http.get(`/v1/verifications/employments/${record.id}`, org.testSecret)).json().data.status).toEqual(notVerified('NO_RESPONSE'));
  });

  it('runs as background tasks of the worker', async () => {
    const guarantor = (await http.post('/v1/verifications/guarantors', org.testSecret, GUARANTOR_BODY)).json().data;
    const employment = (await http.post('/v1/verifications/employments', org.testSecret, EMPLOYMENT_BODY)).json().data;
    await age('guarantor_verifications', guarantor.id, 8);
    await age('employment_verifications', employment.id, 8);
    const worker = await startWorker({
      database: t.database,
      config: testConfig(),
      logger: pino({ level: 'silent' }),
      tasks: [guarantorExpiryTask, employmentExpiryTask],
    });
    try {
      for (let i = 0; i < 200; i++) {
        const [g, e] = await Promise.all([
          http.get(`/v1/verifications/guarantors/${guarantor.id}`, org.testSecret),
          http.get(`/v1/verifications/employments/${employment.id}`, org.testSecret),
        ]);
        if (g.json().data.status.status !== 'IN_PROGRESS' && e.json().data.status.status !== 'IN_PROGRESS') break;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    } finally {
      await worker.stop();
    }
    expect((await http.get(`/v1/verifications/guarantors/${guarantor.id}`, org.testSecret)).json().data.status).toEqual(notVerified('NO_RESPONSE'));
    expect((await http.get(`/v1/verifications/employments/${employment.id}`, org.testSecret)).json().data.status).toEqual(notVerified('NO_RESPONSE'));
  });
});
