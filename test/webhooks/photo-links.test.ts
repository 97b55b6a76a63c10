import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agents/service.js';
import { fileRoutes } from '../../src/files/routes.js';
import { openFileStore } from '../../src/files/open-store.js';
import { reencodePhoto } from '../../src/files/photos.js';

import { FILE_URL_TTL_SECONDS, fileUrls, loadSigningKey, signFileUrl } from '../../src/files/urls.js';
import { registerErrorHandling } from '../../src/platform/errors.js';
import { WEBHOOK_FILE_URL_TTL_SECONDS } from '../../src/webhooks/events.js';
import { MAX_RETRY_SPAN_MS } from '../../src/webhooks/schedule.js';
import type { Worker } from '../../src/worker.js';
import { ADDRESS_BODY, multipartBody } from '../agents/fixtures.js';
import { bearer, buildTestContext, testConfig, type TestContext } from '../helpers/app.js';
import { connectReceiver, startTestWorker, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;

describe('photo links in webhook bodies', () => {
  let ctx: TestContext;
  let dataDir: string;
  let receiver: WebhookReceiver;
  let worker: Worker;
  const servers: FastifyInstance[] = [];

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'vouch-photo-links-'));
    ctx = await buildTestContext({ config: { dataDir } });
    receiver = await startWebhookReceiver();
    worker = await startTestWorker(ctx.database);
  });
  afterAll(async () => {
    await worker?.stop();
    await receiver?.close();
    await Promise.all(servers.map((server) => server.close()));
    await ctx?.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  /** The real file route of this installation, answering as if the clock said `now`. */
  async function fileServerAt(now: Date): Promise<FastifyInstance> {
    const config = testConfig({ dataDir });
    const server = Fastify();
    registerErrorHandling(server);
    const urls = fileUrls(await loadSigningKey(ctx.database.db), config.publicUrl, { now: () => now });
    await server.register(fileRoutes, { db: ctx.database.db, store: openFileStore(config, ctx.database.protection), urls });
    servers.push(server);
    return server;
  }

  const fetchPhoto = (server: FastifyInstance, url: string) => {
    const { pathname, search } = new URL(url);
    return server.inject({ method: 'GET', url: `${pathname}${search}` });
  };

  it('stay valid through the whole retry window, after the API links of the same record have expired', async () => {
    const org = await ctx.org({ riskLevel: 'LOW', fund: 10_000_000 });
    await connectReceiver(ctx.database, receiver, org.id, 'live');
    const { credential } = await createAgent(ctx.database.db, { name: 'Photo Agent', email: 'photo@agents.example', phone: '08031230001', states: ['Lagos'] });
    const jpeg = await sharp({ create: { width: 16, height: 12, channels: 3, background: '#c33' } }).jpeg().toBuffer();

    const created = await ctx.app.inject({ method: 'POST', url: '/v1/verifications/addresses', headers: bearer(org.liveSecret), payload: ADDRESS_BODY });
    expect(created.statusCode).toBe(201);
    const id = created.json().data.id as number;
    const form = multipartBody({ outcome: 'verified', latitude: 6.4474, longitude: 3.4723, neighborName: 'Iya Basira', neighborComment: 'Knows her' }, [
      { filename: 'front.jpg', type: 'image/jpeg', bytes: jpeg },
      { filename: 'street.jpg', type: 'image/jpeg', bytes: jpeg },
    ]);
    const filed = await ctx.app.inject({ method: 'POST', url: `/v1/agent/tasks/address/${id}/report`, headers: { ...bearer(credential), ...form.headers }, payload: form.payload });
    expect(filed.statusCode).toBe(200);
    const completedAt = Date.now();

    const webhook = await receiver.waitFor((r) => r.body?.type === 'address.completed' && r.body.data.id === id);
    expect(webhook.verified).toBe(true);
    const [hooked] = webhook.body!.data.photos as string[];
    const [api] = (await ctx.app.inject({ method: 'GET', url: `/v1/verifications/addresses/${id}`, headers: bearer(org.liveSecret) })).json().data.photos as string[];
    // The same photo; only the expiry (and so the signature) differs.
    expect(new URL(hooked!).pathname).toBe(new URL(api!).pathname);
    const expiresOf = (url: string) => Number(new URL(url).searchParams.get('expires')) * 1000;
    expect(expiresOf(api!)).toBeLessThan(completedAt + DAY + 2 * HOUR);
    expect(expiresOf(hooked!)).toBeGreaterThanOrEqual(completedAt + MAX_RETRY_SPAN_MS + DAY - 60_000);

    // 25 hours on: the API's link has expired, the webhook's still opens the photo.
    const dayLater = await fileServerAt(new Date(completedAt + 25 * HOUR));
    const expired = await fetchPhoto(dayLater, api!);
    expect(expired.statusCode).toBe(403);
    expect(expired.json().message).toMatch(/expired/);
    const opened = await fetchPhoto(dayLater, hooked!);
    expect(opened.statusCode).toBe(200);
    expect(opened.headers['content-type']).toBe('image/jpeg');
    expect(opened.rawPayload.equals((await reencodePhoto(jpeg)).bytes)).toBe(true);

    // At the last possible retry (the whole schedule at its longest jitter) it still opens; later it expires.
    expect((await fetchPhoto(await fileServerAt(new Date(completedAt + MAX_RETRY_SPAN_MS)), hooked!)).statusCode).toBe(200);
    const afterwards = await fetchPhoto(await fileServerAt(new Date(completedAt + WEBHOOK_FILE_URL_TTL_SECONDS * 1000 + 2 * HOUR)), hooked!);
    expect(afterwards.statusCode).toBe(403);
  });
});

describe('FileUrls.lasting', () => {
  const key = Buffer.alloc(32, 7);
  const now = new Date('2030-06-01T10:15:00.000Z');
  const id = '0b7f6f1e-8a65-4b5e-9c1f-2d7a3e4b5c6d';
  const urls = fileUrls(key, 'https://vouch.example', { now: () => now });

  it('signs links valid for the asked time, rounded up to the hour, that the API signer accepts', () => {
    const link = urls.lasting(4 * 24 * 60 * 60).url(id);
    const expires = Number(new URL(link).searchParams.get('expires'));
    expect(expires).toBe(Math.ceil((now.getTime() / 1000 + 4 * 24 * 60 * 60) / 3600) * 3600);
    expect(urls.check(id, String(expires), new URL(link).searchParams.get('signature')!)).toBe('ok');
    expect(new URL(link).pathname).toBe(new URL(urls.url(id)).pathname);
  });

  it('is the same signer for its own lifetime, and one view per lifetime', () => {
    expect(urls.lasting(FILE_URL_TTL_SECONDS)).toBe(urls);
    expect(urls.lasting(4 * 24 * 60 * 60)).toBe(urls.lasting(4 * 24 * 60 * 60));
    const past = Math.floor(now.getTime() / 1000) - 60;
    expect(urls.check(id, String(past), signFileUrl(key, id, past))).toBe('expired');
  });
});
