import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Mode } from '../../src/platform/db/schema.js';
import { setWebhookEndpoint } from '../../src/webhooks/endpoints.js';
import { enqueueEvent } from '../../src/webhooks/events.js';
import { listDeliveries } from '../../src/webhooks/queue.js';
import { endpointLabel, metrics } from '../../src/platform/metrics.js';
import type { Worker } from '../../src/worker.js';
import { buildTestContext, type TestContext } from '../helpers/app.js';
import { connectReceiver, startTestWorker, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const HOUR = 60 * 60 * 1000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Hit {
  id: string;
  body: string;
  status: number;
  at: number;
}

/**
 * A receiver that answers 503 while it is down and 204 once it is up, after `delayMs`, recording
 * every request and the most requests it had open at once.
 */
async function startTestReceiver(options: { up: boolean; delayMs?: number }) {
  const hits: Hit[] = [];
  const sockets = new Set<Socket>();
  let up = options.up;
  let open = 0;
  const stats = { maxOpen: 0 };
  const server = http.createServer((req, res) => {
    open++;
    stats.maxOpen = Math.max(stats.maxOpen, open);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const status = up ? 204 : 503;
      hits.push({ id: String(req.headers['webhook-id']), body: Buffer.concat(chunks).toString('utf8'), status, at: Date.now() });
      setTimeout(() => {
        open--;
        res.writeHead(status).end();
      }, options.delayMs ?? 0);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    hits,
    stats,
    recover: () => {
      up = true;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function waitUntil(condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe('per-endpoint fairness and the circuit breaker', () => {
  let ctx: TestContext;
  let worker: Worker | undefined;
  const closers: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    ctx = await buildTestContext();
  });
  afterEach(async () => {
    await worker?.stop();
    worker = undefined;
    await Promise.all(closers.splice(0).map((close) => close()));
  });
  afterAll(async () => {
    await ctx.close();
  });

  async function receiverFor(orgId: string, mode: Mode = 'test'): Promise<WebhookReceiver> {
    const receiver = await startWebhookReceiver();
    closers.push(() => receiver.close());
    await connectReceiver(ctx.database, receiver, orgId, mode);
    return receiver;
  }

  const enqueueMany = (orgId: string, count: number) =>
    Promise.all(Array.from({ length: count }, (_, n) => enqueueEvent(ctx.database.db, { orgId, mode: 'test', type: 'address.completed', data: { n } })));

  /** Attempts counted so far (at claim time, so attempts still in flight count too). */
  const attemptsOf = async (orgId: string) => {
    const row = await ctx.database.db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('attempts'), eb.lit(0)).as('attempts'))
      .where('org_id', '=', orgId)
      .executeTakeFirstOrThrow();
    return Number(row.attempts);
  };

  it("keeps another organization's deliveries flowing while one receiver hangs", async () => {
    const [slow, other] = [await ctx.org(), await ctx.org()];
    const hanging = await receiverFor(slow.id);
    hanging.hangNext(1_000);
    const healthy = await receiverFor(other.id);
    // 8 slots, 2 per URL while others wait; the hung attempts stay hung for the whole test.
    worker = await startTestWorker(ctx.database, {
      concurrency: 8,
      endpointConcurrency: 2,
      slowAttemptMs: 100,
      timeoutMs: 5_000,
      leaseMs: 15_000,
      breakerThreshold: 1_000,
      retrySchedule: [HOUR],
    });
    // More than a claim looks at (100 due deliveries): the others are queued behind these.
    await enqueueMany(slow.id, 300);
    // Alone in the queue, the hanging URL borrows idle slots, but never the last two.
    await hanging.waitForCount(6);
    await sleep(200);
    expect(hanging.requests).toHaveLength(6);

    const started = Date.now();
    const ids = await enqueueMany(other.id, 10);
    const arrived = await healthy.waitForCount(10, 3_000);
    const took = Date.now() - started;
    expect(new Set(arrived.map((r) => r.id))).toEqual(new Set(ids));
    expect(arrived.every((r) => r.verified && r.answeredWith === 204)).toBe(true);
    // Well before the hung attempts time out (5 s): nothing waited for them.
    expect(took).toBeLessThan(2_000);
    expect(hanging.delivered()).toHaveLength(0);
    // The hanging URL got no more slots meanwhile: its other deliveries stepped aside, uncounted.
    expect(hanging.requests).toHaveLength(6);
    expect(await attemptsOf(slow.id)).toBe(6);
  });

  it('lets a receiver alone in the queue borrow idle slots beyond its share, all but the reserved ones', async () => {
    const org = await ctx.org();
    const receiver = await startTestReceiver({ up: true, delayMs: 50 });
    closers.push(receiver.close);
    await setWebhookEndpoint(ctx.database.db, { orgId: org.id, mode: 'test' }, { url: receiver.url }, { allowPrivateUrls: true });
    const ids = await enqueueMany(org.id, 120);
    worker = await startTestWorker(ctx.database, { concurrency: 8, endpointConcurrency: 2 });
    await waitUntil(() => receiver.hits.length >= 120, 15_000, '120 deliveries');
    await sleep(100);
    expect(receiver.hits.map((h) => h.id).sort()).toEqual([...ids].sort());
    expect(receiver.stats.maxOpen).toBe(6);
  });

  it('opens the breaker after consecutive failures, holds deliveries uncounted, and delivers each once after recovery', async () => {
    const org = await ctx.org();
    const receiver = await startTestReceiver({ up: false });
    closers.push(receiver.close);
    await setWebhookEndpoint(ctx.database.db, { orgId: org.id, mode: 'test' }, { url: receiver.url }, { allowPrivateUrls: true });
    const cooldownMs = 3_000;
    // Retries every 30 ms: without the breaker the attempts would keep climbing. (With slots to
    // borrow, held deliveries are taken by the plain claim and handed back.)
    worker = await startTestWorker(ctx.database, {
      concurrency: 8,
      endpointConcurrency: 2,
      breakerThreshold: 3,
      breakerCooldownMs: cooldownMs,
      retrySchedule: Array.from({ length: 30 }, () => 30),
    });
    const endpoint = endpointLabel(receiver.url);
    const metric = async (metric: typeof metrics.webhookAttempts | typeof metrics.webhookCircuitOpen, labels: Record<string, string>) =>
      (await metric.get()).values.find((value) => Object.entries(labels).every(([key, wanted]) => (value.labels as Record<string, unknown>)[key] === wanted))?.value ?? 0;
    const failedBefore = await metric(metrics.webhookAttempts, { endpoint, outcome: 'failed' });
    const deliveredBefore = await metric(metrics.webhookAttempts, { endpoint, outcome: 'delivered' });
    const ids = await enqueueMany(org.id, 6);

    // The breaker opens: the requests stop, and so do the attempts counted.
    await waitUntil(() => receiver.hits.length >= 3, 5_000, 'the first failures');
    let seen = -1;
    await waitUntil(
      async () => {
        const now = receiver.hits.length;
        const stable = now === seen;
        seen = now;
        if (!stable) await sleep(250);
        return stable;
      },
      5_000,
      'the requests to stop',
    );
    const attempts = await attemptsOf(org.id);
    expect(attempts).toBe(receiver.hits.length);
    // In /metrics: the endpoint's circuit is open and every failed attempt is counted.
    expect(await metric(metrics.webhookCircuitOpen, { endpoint })).toBe(1);
    expect((await metric(metrics.webhookAttempts, { endpoint, outcome: 'failed' })) - failedBefore).toBe(attempts);
    await sleep(1_000);
    expect(receiver.hits).toHaveLength(seen);
    expect(await attemptsOf(org.id)).toBe(attempts);
    const held = await listDeliveries(ctx.database.db, { orgId: org.id, limit: 100 });
    expect(held.every((d) => d.status === 'pending')).toBe(true);
    const pausedAt = receiver.hits.at(-1)!.at;

    // The receiver recovers; after the cool-down one probe succeeds and everything goes out.
    receiver.recover();
    await waitUntil(() => new Set(receiver.hits.filter((h) => h.status === 204).map((h) => h.id)).size === ids.length, cooldownMs + 5_000, 'every event to arrive');
    const delivered = receiver.hits.filter((h) => h.status === 204);
    const probedAt = delivered[0]!.at;
    expect(probedAt - pausedAt).toBeGreaterThanOrEqual(cooldownMs * 0.8);
    // The probe's success releases the held deliveries at once, not after another cool-down.
    expect(delivered.at(-1)!.at - probedAt).toBeLessThan(cooldownMs / 2);
    await sleep(200);

    // Exactly once: one 2xx per event, none twice.
    expect(receiver.hits.filter((h) => h.status === 204).map((h) => h.id).sort()).toEqual([...ids].sort());
    expect(await metric(metrics.webhookCircuitOpen, { endpoint })).toBe(0);
    expect((await metric(metrics.webhookAttempts, { endpoint, outcome: 'delivered' })) - deliveredBefore).toBe(ids.length);
    const deliveries = await listDeliveries(ctx.database.db, { orgId: org.id, limit: 100 });
    for (const delivery of deliveries) {
      const hits = receiver.hits.filter((h) => h.id === delivery.webhookId);
      // Every request of an event carried its one webhook-id and the same body; only real attempts are logged.
      expect(new Set(hits.map((h) => h.body)).size).toBe(1);
      expect(delivery).toMatchObject({ status: 'delivered', attemptCount: hits.length, lastStatusCode: 204 });
    }
  });
});
