import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agents/service.js';
import { reencodePhoto } from '../../src/files/photos.js';
import { loadSigningKey, signFileUrl } from '../../src/files/urls.js';
import type { Worker } from '../../src/worker.js';
import { buildTestContext, type TestContext } from '../helpers/app.js';
import { connectReceiver, startTestWorker, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { ADDRESS_BODY, BUSINESS_BODY, ISO, VERIFIED } from './fixtures.js';

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * The whole loop over real sockets: a customer creates a verification, the assigned agent
 * lists it, files a report with photos, the customer reads the record and downloads the photos
 * through their signed URLs, and the signed webhook reaches the customer's server.
 */
describe('field verification end to end (real sockets, worker running)', () => {
  let t: TestContext;
  let base: string;
  let dataDir: string;
  let receiver: WebhookReceiver;
  let worker: Worker;
  let org: Awaited<ReturnType<TestContext['org']>>;
  let agent: { credential: string };
  let jpeg: Buffer;

  const call = async (method: string, url: string, secret: string, body?: object | FormData) => {
    const headers: Record<string, string> = { authorization: `Bearer ${secret}` };
    let payload: string | FormData | undefined;
    if (body instanceof FormData) payload = body;
    else if (body) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(body);
    }
    const res = await fetch(`${base}${url}`, { method, headers, body: payload });
    return { status: res.status, json: (await res.json()) as Record<string, any> };
  };

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'vouch-e2e-'));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await buildTestContext({ config: { dataDir, publicUrl: base } });
    await t.app.listen({ port, host: '127.0.0.1' });
    receiver = await startWebhookReceiver();
    worker = await startTestWorker(t.database);
    org = await t.org({ riskLevel: 'LOW', fund: 10_000_000 });
    await connectReceiver(t.database, receiver, org.id, 'live');
    agent = await createAgent(t.database.db, { name: 'Field Agent', email: 'field@agents.example', phone: '08031239999', states: ['Lagos'] });
    jpeg = await sharp({ create: { width: 32, height: 24, channels: 3, background: '#246' } }).jpeg().toBuffer();
  });
  afterAll(async () => {
    await worker?.stop();
    await receiver?.close();
    await t?.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('address: create → agent task → report with photos → record, photo URLs, signed webhook', async () => {
    const created = await call('POST', '/v1/verifications/addresses', org.liveSecret, { ...ADDRESS_BODY, reference: 'e2e-address' });
    expect(created.status).toBe(201);
    const id = created.json.data.id as number;

    const tasks = await call('GET', '/v1/agent/tasks', agent.credential);
    expect(tasks.json.data).toEqual([expect.objectContaining({ kind: 'address', id, reference: 'e2e-address' })]);

    const form = new FormData();
    form.set('outcome', 'verified');
    form.set('latitude', '6.4474');
    form.set('longitude', '3.4723');
    form.set('neighborName', 'Iya Basira');
    form.set('neighborComment', 'Knows the applicant');
    form.append('photos', new Blob([new Uint8Array(jpeg)], { type: 'image/jpeg' }), 'front.jpg');
    form.append('photos', new Blob([new Uint8Array(jpeg)], { type: 'image/jpeg' }), 'street.jpg');
    const filed = await call('POST', `/v1/agent/tasks/address/${id}/report`, agent.credential, form);
    expect(filed).toEqual({ status: 200, json: { status: 'success', data: 'ok' } });

    const record = (await call('GET', `/v1/verifications/addresses/${id}`, org.liveSecret)).json.data;
    expect(record).toMatchObject({ status: VERIFIED, lattitude: '6.4474', longitude: '3.4723', neighbor: { name: 'Iya Basira' } });
    expect(record.completedAt).toMatch(ISO);
    expect(record.photos).toHaveLength(2);

    // Stored re-encoded (docs/field-agents.md): the photo's pixels, not the bytes sent.
    const stored = (await reencodePhoto(jpeg)).bytes;
    for (const url of record.photos as string[]) {
      expect(url.startsWith(`${base}/v1/files/`)).toBe(true);
      const download = await fetch(url);
      expect(download.status).toBe(200);
      expect(download.headers.get('content-type')).toBe('image/jpeg');
      expect(Buffer.from(await download.arrayBuffer()).equals(stored)).toBe(true);
    }

    const photo = new URL(record.photos[0]);
    const fileId = photo.pathname.split('/').pop()!;
    const expires = photo.searchParams.get('expires')!;
    const signature = photo.searchParams.get('signature')!;
    const refused = async (url: string, pattern: RegExp) => {
      const res = await fetch(url);
      expect(res.status, url).toBe(403);
      const body = (await res.json()) as Record<string, string>;
      expect(body).toMatchObject({ status: 'error', code: 'FORBIDDEN' });
      expect(body.message).toMatch(pattern);
    };
    await refused(`${base}/v1/files/${fileId}`, /not valid/);
    await refused(`${base}/v1/files/${fileId}?expires=${expires}`, /not valid/);
    await refused(`${base}/v1/files/${fileId}?expires=${Number(expires) + 3600}&signature=${signature}`, /not valid/);
    await refused(`${base}/v1/files/${fileId}?expires=${expires}&signature=${signature.replace(/^./, (c) => (c === '0' ? '1' : '0'))}`, /not valid/);
    // A correctly signed link whose time is up.
    const key = await loadSigningKey(t.database.db);
    const past = Math.floor(Date.now() / 1000) - 60;
    await refused(`${base}/v1/files/${fileId}?expires=${past}&signature=${signFileUrl(key, fileId, past)}`, /expired/);
    // Another file's signature does not open this one; an unknown file with a valid signature is 404.
    const otherId = new URL(record.photos[1]).pathname.split('/').pop()!;
    await refused(`${base}/v1/files/${otherId}?expires=${expires}&signature=${signature}`, /not valid/);
    const ghost = '00000000-0000-4000-8000-000000000000';
    const missing = await fetch(`${base}/v1/files/${ghost}?expires=${expires}&signature=${signFileUrl(key, ghost, Number(expires))}`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ status: 'error', code: 'NOT_FOUND_ERROR' });

    const webhook = await receiver.waitFor((request) => request.body?.type === 'address.completed' && request.body.data.id === id, 10_000);
    expect(webhook.verified).toBe(true);
    expect(webhook.id).toMatch(/^msg_/);
    expect(webhook.body!.timestamp).toMatch(ISO);
    const { photos: sentPhotos, ...sent } = webhook.body!.data;
    const { photos: readPhotos, ...read } = record;
    expect(sent).toEqual(read);
    expect((sentPhotos as string[]).map((url) => new URL(url).pathname)).toEqual((readPhotos as string[]).map((url) => new URL(url).pathname));
  });

  it('business: create → report → business.completed received and signed', async () => {
    const created = await call('POST', '/v1/verifications/businesses', org.liveSecret, { ...BUSINESS_BODY, reference: 'e2e-business' });
    expect(created.status).toBe(200);
    const id = created.json.data.id as number;
    const form = new FormData();
    form.set('outcome', 'verified');
    form.set('latitude', '6.455');
    form.set('longitude', '3.39');
    form.set('isBusinessKnown', 'true');
    form.set('isCorrectBusinessName', 'true');
    form.set('businessNameFound', 'Mama Put Ventures');
    form.set('businessArea', 'commercial');
    form.append('photos', new Blob([new Uint8Array(jpeg)], { type: 'image/jpeg' }), 'shop.jpg');
    expect((await call('POST', `/v1/agent/tasks/business/${id}/report`, agent.credential, form)).status).toBe(200);
    const webhook = await receiver.waitFor((request) => request.body?.type === 'business.completed' && request.body.data.id === id, 10_000);
    expect(webhook.verified).toBe(true);
    expect(webhook.body!.data).toMatchObject({
      reference: 'e2e-business',
      status: VERIFIED,
      business: { isBusinessKnown: true },
      isCorrectBusinessName: true,
      businessNameFound: 'Mama Put Ventures',
    });
    expect(webhook.body!.data.businessPhotos).toHaveLength(1);
  });

  it('cancel: address.cancelled reaches the receiver', async () => {
    const created = await call('POST', '/v1/verifications/addresses', org.liveSecret, ADDRESS_BODY);
    const id = created.json.data.id as number;
    expect((await call('DELETE', `/v1/verifications/addresses/${id}`, org.liveSecret)).json).toEqual({ status: 'success', data: 'ok' });
    const webhook = await receiver.waitFor((request) => request.body?.type === 'address.cancelled' && request.body.data.id === id, 10_000);
    expect(webhook.verified).toBe(true);
    expect(webhook.body!.data.status).toEqual({ status: 'Cancelled', subStatus: 'cancelled', state: 'cancelled' });
  });
});
