import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Worker } from '../../src/worker.js';
import { buildTestContext, type TestContext } from '../helpers/app.js';
import { connectReceiver, startTestWorker, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { open, submit } from './browser.js';
import { client, EMPLOYMENT_BODY, GUARANTOR_BODY, linkOf, TEST_NIN, VERIFIED } from './fixtures.js';

/** The whole loop: create -> the respondent answers on the page -> a signed webhook reaches the customer's server. */
describe('respondent verifications end to end (worker, loopback receiver)', () => {
  let t: TestContext;
  let http: ReturnType<typeof client>;
  let base: string;
  let receiver: WebhookReceiver;
  let worker: Worker;
  let secret: string;

  beforeAll(async () => {
    t = await buildTestContext();
    http = client(t.app);
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const org = await t.org({ riskLevel: 'LOW' });
    secret = org.testSecret;
    receiver = await startWebhookReceiver();
    await connectReceiver(t.database, receiver, org.id, 'test');
    worker = await startTestWorker(t.database);
  });
  afterAll(async () => {
    await worker.stop();
    await receiver.close();
    await t.close();
  });

  it('guarantor: accepts on the page, guarantor.completed arrives signed with the record as GET returns it', async () => {
    const record = (await http.post('/v1/verifications/guarantors', secret, GUARANTOR_BODY)).json().data;
    const { token } = await linkOf(t.database.db, 'guarantor_request', record.id);
    const answered = await submit(await open(`${base}/respond/${token}`), { decision: 'accept', idType: 'NIN', idNumber: TEST_NIN.nin, dob: TEST_NIN.dob });
    expect(answered.status).toBe(200);
    const webhook = await receiver.waitFor((r) => r.body?.type === 'guarantor.completed' && r.body.data.id === record.id);
    expect(webhook.verified).toBe(true);
    const fetched = (await http.get(`/v1/verifications/guarantors/${record.id}`, secret)).json().data;
    expect(fetched.status).toEqual(VERIFIED);
    expect(webhook.body!.data).toEqual(fetched);
  });

  it('employment: the employer confirms, employment.completed arrives signed', async () => {
    const record = (await http.post('/v1/verifications/employments', secret, EMPLOYMENT_BODY)).json().data;
    const { token } = await linkOf(t.database.db, 'employer_request', record.id);
    const answered = await submit(await open(`${base}/respond/${token}`), {
      decision: 'confirm', rehire: 'no', attestatorName: 'Funke Adebayo', attestatorTitle: 'HR Manager', attestatorContact: '08031234567', consent: 'yes',
    });
    expect(answered.status).toBe(200);
    const webhook = await receiver.waitFor((r) => r.body?.type === 'employment.completed' && r.body.data.id === record.id);
    expect(webhook.verified).toBe(true);
    expect(webhook.body!.data).toMatchObject({ status: VERIFIED, rehire: false, attestatorName: 'Funke Adebayo' });
    expect(webhook.body!.data).toEqual((await http.get(`/v1/verifications/employments/${record.id}`, secret)).json().data);
  });

  it('cancellations are sent too', async () => {
    const record = (await http.post('/v1/verifications/guarantors', secret, GUARANTOR_BODY)).json().data;
    await http.del(`/v1/verifications/guarantors/${record.id}`, secret);
    const webhook = await receiver.waitFor((r) => r.body?.type === 'guarantor.cancelled' && r.body.data.id === record.id);
    expect(webhook.verified).toBe(true);
  });
});
