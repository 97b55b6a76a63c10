import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Mode } from '../../src/platform/db/schema.js';
import { rotateWebhookSecret, setWebhookEndpoint } from '../../src/webhooks/endpoints.js';
import { enqueueEvent, NO_ENDPOINT_ERROR, type WebhookEventType } from '../../src/webhooks/events.js';
import { getDelivery, listDeliveries, redeliver, UnsendableDeliveryError } from '../../src/webhooks/queue.js';
import type { Worker } from '../../src/worker.js';
import { buildTestContext, type TestContext } from '../helpers/app.js';
import {
  connectReceiver,
  FAST_RETRY_SCHEDULE,
  startTestWorker,
  startWebhookReceiver,
  type WebhookReceiver,
} from '../helpers/webhook-receiver.js';

const HOUR = 60 * 60 * 1000;

describe('webhook delivery', () => {
  let ctx: TestContext;
  let worker: Worker | undefined;
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    ctx = await buildTestContext();
  });
  afterEach(async () => {
    await worker?.stop();
    worker = undefined;
    await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
  });
  afterAll(async () => {
    await ctx.close();
  });

  async function receiverFor(orgId: string, mode: Mode = 'test') {
    const receiver = await startWebhookReceiver();
    receivers.push(receiver);
    const endpoint = await connectReceiver(ctx.database, receiver, orgId, mode);
    return { receiver, endpoint };
  }

  const enqueue = (orgId: string, mode: Mode = 'test', type: WebhookEventType = 'address.completed', data: unknown = { id: 1, status: 'completed' }) =>
    enqueueEvent(ctx.database.db, { orgId, mode, type, data });

  async function deliveryOf(orgId: string, webhookId: string) {
    const [found] = (await listDeliveries(ctx.database.db, { orgId, limit: 100 })).filter((d) => d.webhookId === webhookId);
    return found!;
  }

  async function waitForStatus(orgId: string, webhookId: string, status: string, timeoutMs = 5_000) {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const delivery = await deliveryOf(orgId, webhookId);
      if (delivery.status === status) return delivery;
      if (Date.now() > until) throw new Error(`delivery ${webhookId} is ${delivery.status}, not ${status}: ${JSON.stringify(delivery)}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  it('delivers a signed {type, timestamp, data} body with the standard headers', async () => {
    const org = await ctx.org();
    const { receiver, endpoint } = await receiverFor(org.id);
    worker = await startTestWorker(ctx.database);
    const before = Date.now();
    const webhookId = await enqueue(org.id, 'test', 'business.completed', { id: 42, status: 'verified', nested: { a: [1, 'ü'] } });

    const request = await receiver.waitFor((r) => r.id === webhookId);
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/webhook');
    expect(request.headers['content-type']).toBe('application/json');
    expect(webhookId).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(request.verified).toBe(true);
    expect(request.signature).toMatch(/^v1,[A-Za-z0-9+/=]+$/);
    expect(Number(request.timestamp) * 1000).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    expect(Object.keys(request.body!)).toEqual(['type', 'timestamp', 'data']);
    expect(request.body).toEqual({ type: 'business.completed', timestamp: expect.any(String), data: { id: 42, status: 'verified', nested: { a: [1, 'ü'] } } });
    expect(new Date(request.body!.timestamp).toISOString()).toBe(request.body!.timestamp);
    // What a customer does: the off-the-shelf library, the raw body, the three headers.
    expect(new Webhook(endpoint.secret).verify(request.rawBody, request.headers as Record<string, string>)).toEqual(request.body);

    const delivery = await waitForStatus(org.id, webhookId, 'delivered');
    expect(delivery).toMatchObject({ type: 'business.completed', mode: 'test', attemptCount: 1, lastStatusCode: 204, lastError: null });
    expect(delivery.attempts[0]).toMatchObject({ statusCode: 204, error: null });
    expect(delivery.deliveredAt).not.toBeNull();
    expect(receiver.requests).toHaveLength(1);
  });

  it('retries a failing receiver with the same webhook-id, logging every attempt', async () => {
    const org = await ctx.org();
    const { receiver } = await receiverFor(org.id);
    receiver.failNext(2, 500);
    worker = await startTestWorker(ctx.database);
    const webhookId = await enqueue(org.id);

    const requests = await receiver.waitForCount(3);
    expect(requests.map((r) => r.id)).toEqual([webhookId, webhookId, webhookId]);
    expect(requests.map((r) => r.answeredWith)).toEqual([500, 500, 204]);
    expect(requests.every((r) => r.verified)).toBe(true);
    const delivery = await waitForStatus(org.id, webhookId, 'delivered');
    expect(delivery.attempts.map((a) => [a.statusCode, a.error])).toEqual([
      [500, 'HTTP 500'],
      [500, 'HTTP 500'],
      [204, null],
    ]);
    for (const attempt of delivery.attempts) expect(attempt.latencyMs).toBeGreaterThanOrEqual(0);
  });

  it('gives up after the last retry of the schedule and marks the delivery failed', async () => {
    const org = await ctx.org();
    const { receiver } = await receiverFor(org.id);
    receiver.failNext(100, 503);
    worker = await startTestWorker(ctx.database);
    const webhookId = await enqueue(org.id);

    const delivery = await waitForStatus(org.id, webhookId, 'failed');
    expect(delivery.attemptCount).toBe(FAST_RETRY_SCHEDULE.length + 1);
    expect(receiver.requests).toHaveLength(FAST_RETRY_SCHEDULE.length + 1);
    expect(delivery).toMatchObject({ lastStatusCode: 503, lastError: 'HTTP 503', nextAttemptAt: null, deliveredAt: null });
  });

  it('times out a receiver that does not answer and retries', async () => {
    const org = await ctx.org();
    const { receiver } = await receiverFor(org.id);
    receiver.hangNext(1);
    worker = await startTestWorker(ctx.database, { timeoutMs: 300 });
    const webhookId = await enqueue(org.id);

    const delivery = await waitForStatus(org.id, webhookId, 'delivered');
    expect(delivery.attempts).toHaveLength(2);
    expect(delivery.attempts[0]).toMatchObject({ statusCode: null, error: 'no response within 0.3 s' });
    expect(delivery.attempts[0]!.latencyMs).toBeGreaterThanOrEqual(290);
    expect(receiver.requests.map((r) => r.id)).toEqual([webhookId, webhookId]);
  });

  it('does not follow redirects: a 3xx is a failed attempt', async () => {
    const org = await ctx.org();
    const { receiver } = await receiverFor(org.id);
    const elsewhere = await startWebhookReceiver();
    receivers.push(elsewhere);
    receiver.redirectNext(1, elsewhere.url, 307);
    worker = await startTestWorker(ctx.database);
    const webhookId = await enqueue(org.id);

    const delivery = await waitForStatus(org.id, webhookId, 'delivered');
    expect(delivery.attempts[0]).toMatchObject({ statusCode: 307, error: `redirect to ${elsewhere.url} not followed` });
    expect(elsewhere.requests).toHaveLength(0);
    expect(receiver.requests).toHaveLength(2);
  });

  it('records an event without an endpoint without its body, and never sends it, even once an endpoint is set', async () => {
    const org = await ctx.org();
    worker = await startTestWorker(ctx.database, { retrySchedule: [HOUR, HOUR] });
    const webhookId = await enqueue(org.id, 'live');

    const recorded = await deliveryOf(org.id, webhookId);
    expect(recorded).toMatchObject({ status: 'failed', attemptCount: 0, sendable: false, lastError: NO_ENDPOINT_ERROR, nextAttemptAt: null });
    const stored = await ctx.database.db.selectFrom('webhook_deliveries').select('payload').where('message_id', '=', webhookId).executeTakeFirstOrThrow();
    expect(stored.payload).toBeNull();
    await expect(redeliver(ctx.database.db, recorded.id)).rejects.toThrow(UnsendableDeliveryError);

    const { receiver } = await receiverFor(org.id, 'live');
    const later = await enqueue(org.id, 'live');
    await receiver.waitFor((r) => r.id === later);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(receiver.requests.map((r) => r.id)).toEqual([later]);
    expect(await deliveryOf(org.id, webhookId)).toMatchObject({ status: 'failed', attemptCount: 0 });
  });

  it('refuses a private target at delivery time when private URLs are not allowed', async () => {
    const org = await ctx.org();
    const { receiver } = await receiverFor(org.id);
    worker = await startTestWorker(ctx.database, { allowPrivateUrls: false, retrySchedule: [HOUR] });
    const webhookId = await enqueue(org.id);

    const until = Date.now() + 5_000;
    let delivery = await deliveryOf(org.id, webhookId);
    while (delivery.attemptCount === 0 && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      delivery = await deliveryOf(org.id, webhookId);
    }
    expect(delivery.attempts[0]!.error).toMatch(/^refused: /);
    expect(receiver.requests).toHaveLength(0);
  });

  it('refuses a host name that resolves to a private address at delivery time (guarded lookup)', async () => {
    const org = await ctx.org();
    const receiver = await startWebhookReceiver();
    receivers.push(receiver);
    const url = receiver.url.replace('127.0.0.1', 'localhost');
    await setWebhookEndpoint(ctx.database.db, { orgId: org.id, mode: 'test' }, { url }, { allowPrivateUrls: true });
    worker = await startTestWorker(ctx.database, { allowPrivateUrls: false, retrySchedule: [HOUR] });
    const webhookId = await enqueue(org.id);

    const until = Date.now() + 5_000;
    let delivery = await deliveryOf(org.id, webhookId);
    while (delivery.attemptCount === 0 && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      delivery = await deliveryOf(org.id, webhookId);
    }
    expect(delivery.attempts[0]!.error).toBe('refused: localhost resolves to a private address');
    expect(receiver.requests).toHaveLength(0);
  });

  it('signs with both secrets for 24 hours after a rotation, then with the new one only', async () => {
    const org = await ctx.org();
    const { receiver, endpoint: original } = await receiverFor(org.id);
    worker = await startTestWorker(ctx.database);

    // Rotated 23 hours ago: the old secret is still within its 24 hours.
    const rotated = await rotateWebhookSecret(ctx.database.db, { orgId: org.id, mode: 'test' }, { now: () => new Date(Date.now() - 23 * HOUR) });
    expect(rotated.secret).not.toBe(original.secret);
    expect(rotated.previousSecretExpiresAt!.getTime()).toBeGreaterThan(Date.now());
    const duringId = await enqueue(org.id, 'test', 'address.completed', { phase: 'during' });
    const first = await receiver.waitFor((r) => r.id === duringId);
    expect(first.signature.split(' ')).toHaveLength(2);
    expect(receiver.verify(first, rotated.secret)).toBe(true);
    expect(receiver.verify(first, original.secret)).toBe(true);

    // Rotated 25 hours ago: the secret before it no longer signs.
    const again = await rotateWebhookSecret(ctx.database.db, { orgId: org.id, mode: 'test' }, { now: () => new Date(Date.now() - 25 * HOUR) });
    const afterId = await enqueue(org.id, 'test', 'address.completed', { phase: 'after' });
    const second = await receiver.waitFor((r) => r.id === afterId);
    expect(second.signature.split(' ')).toHaveLength(1);
    expect(receiver.verify(second, again.secret)).toBe(true);
    expect(receiver.verify(second, rotated.secret)).toBe(false);
  });

  it('redelivers a delivered event with the same webhook-id and a fresh schedule', async () => {
    const org = await ctx.org();
    const { receiver } = await receiverFor(org.id);
    worker = await startTestWorker(ctx.database);
    const webhookId = await enqueue(org.id);
    const delivered = await waitForStatus(org.id, webhookId, 'delivered');

    const queued = await redeliver(ctx.database.db, delivered.id);
    expect(queued).toMatchObject({ id: delivered.id, webhookId, status: 'pending', deliveredAt: null });
    const requests = await receiver.waitForCount(2);
    expect(requests.map((r) => r.id)).toEqual([webhookId, webhookId]);
    const again = await waitForStatus(org.id, webhookId, 'delivered');
    expect(again.attempts).toHaveLength(2);
    expect(await redeliver(ctx.database.db, 999_999_999)).toBeUndefined();
  });

  it("lists only the organization's own deliveries, and only the asked mode's", async () => {
    const [a, b] = [await ctx.org(), await ctx.org()];
    const aTest = await enqueue(a.id, 'test');
    const aLive = await enqueue(a.id, 'live');
    const bTest = await enqueue(b.id, 'test');

    const ids = async (orgId: string, mode?: Mode) => (await listDeliveries(ctx.database.db, { orgId, mode, limit: 100 })).map((d) => d.webhookId);
    expect(await ids(a.id, 'test')).toEqual([aTest]);
    expect(await ids(a.id, 'live')).toEqual([aLive]);
    expect(await ids(a.id)).toEqual([aLive, aTest]);
    expect(await ids(b.id, 'test')).toEqual([bTest]);
    expect(await ids(b.id, 'live')).toEqual([]);
    const delivery = await deliveryOf(a.id, aTest);
    expect(await getDelivery(ctx.database.db, delivery.id)).toMatchObject({ orgId: a.id, mode: 'test' });
  });

  it('delivers a burst of events exactly once each', async () => {
    const org = await ctx.org();
    const { receiver } = await receiverFor(org.id);
    worker = await startTestWorker(ctx.database, { concurrency: 8 });
    const ids = await Promise.all(Array.from({ length: 200 }, (_, i) => enqueue(org.id, 'test', 'guarantor.completed', { i })));

    await receiver.waitForCount(200, 15_000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(new Set(receiver.requests.map((r) => r.id))).toEqual(new Set(ids));
    expect(receiver.requests).toHaveLength(200);
    expect(receiver.requests.every((r) => r.verified)).toBe(true);
  });
});

describe('webhook sender against a raw socket', () => {
  it('counts a receiver that closes the connection as a failed attempt', async () => {
    const ctx = await buildTestContext();
    const server = http.createServer((req) => req.socket.destroy());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    const org = await ctx.org();
    await setWebhookEndpoint(ctx.database.db, { orgId: org.id, mode: 'test' }, { url }, { allowPrivateUrls: true });
    const worker = await startTestWorker(ctx.database, { retrySchedule: [HOUR] });
    try {
      const webhookId = await enqueueEvent(ctx.database.db, { orgId: org.id, mode: 'test', type: 'employment.cancelled', data: {} });
      const until = Date.now() + 5_000;
      let delivery;
      do {
        await new Promise((resolve) => setTimeout(resolve, 25));
        [delivery] = await listDeliveries(ctx.database.db, { orgId: org.id, limit: 1 });
      } while (delivery?.attemptCount === 0 && Date.now() < until);
      expect(delivery).toMatchObject({ webhookId, status: 'pending', lastStatusCode: null, lastError: 'socket hang up' });
    } finally {
      await worker.stop();
      server.close();
      await ctx.close();
    }
  });
});
