import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expireDueSessions } from '../../src/sessions/service.js';
import type { Worker } from '../../src/worker.js';
import { buildTestContext, type TestContext } from '../helpers/app.js';
import { connectReceiver, startTestWorker, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { httpClient, ID_ONLY, SANDBOX, tokenOf, type HttpClient } from './fixtures.js';

const BASE = '/v1/verifications/sessions';

/** The whole loop over sockets: create → the end user finishes on the end-user API → a signed webhook reaches the customer. */
describe('verification sessions: webhooks end to end (worker, loopback receiver)', () => {
  let t: TestContext;
  let http: HttpClient;
  let receiver: WebhookReceiver;
  let worker: Worker;
  let secret: string;

  beforeAll(async () => {
    t = await buildTestContext();
    http = httpClient(await t.app.listen({ port: 0, host: '127.0.0.1' }));
    const org = await t.org();
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

  it('session.completed arrives signed (Standard Webhooks) with the session as GET returns it', async () => {
    const created = (await http.post(BASE, secret, { ...ID_ONLY, metadata: { order: 'o-1' } })).json().data;
    const token = tokenOf(created.url);
    await http.post(`/verify/api/${token}/consent`, undefined, { accepted: true });
    await http.post(`/verify/api/${token}/id`, undefined, { idType: 'BVN', idNumber: SANDBOX.bvn.idNumber });
    const webhook = await receiver.waitFor((r) => r.body?.type === 'session.completed' && r.body.data.id === created.id);
    expect(webhook.verified).toBe(true);
    expect(webhook.id).toMatch(/^msg_[0-9a-f]{32}$/);
    const fetched = (await http.get(`${BASE}/${created.id}`, secret)).json().data;
    expect(webhook.body!.data).toEqual(fetched);
    expect(fetched).toMatchObject({ status: { status: 'VERIFIED' }, metadata: { order: 'o-1' }, clientSecret: null, url: null });
  });

  it('session.completed for a failure and session.expired for an expiry; a cancellation sends nothing', async () => {
    const failing = (await http.post(BASE, secret, ID_ONLY)).json().data;
    await http.post(`/v1/test-helpers/sessions/${failing.id}/complete`, secret, { outcome: 'failed', reason: 'ID_NOT_FOUND' });
    const expiring = (await http.post(BASE, secret, { expiresInMinutes: 5 })).json().data;
    const cancelled = (await http.post(BASE, secret, {})).json().data;
    await http.del(`${BASE}/${cancelled.id}`, secret);
    await expireDueSessions(t.database.db, new Date(Date.now() + 6 * 60_000));
    const failed = await receiver.waitFor((r) => r.body?.type === 'session.completed' && r.body.data.id === failing.id);
    expect(failed.verified).toBe(true);
    expect(failed.body!.data).toMatchObject({ status: { status: 'NOT_VERIFIED', subStatus: 'ID_NOT_FOUND', state: 'FAILED' }, reasons: ['ID_NOT_FOUND'] });
    const expired = await receiver.waitFor((r) => r.body?.type === 'session.expired' && r.body.data.id === expiring.id);
    expect(expired.verified).toBe(true);
    expect(expired.body!.data.status).toEqual({ status: 'EXPIRED', subStatus: 'EXPIRED', state: 'EXPIRED' });
    // Give the worker a moment: nothing about the cancelled session comes.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.requests.filter((r) => r.body?.data.id === cancelled.id)).toEqual([]);
  });
});
