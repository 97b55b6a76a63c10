import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openKeyring } from '../../src/platform/crypto/open.js';
import { openDatabase, type Database } from '../../src/platform/db/database.js';
import { enqueueEvent } from '../../src/webhooks/events.js';
import { listDeliveries } from '../../src/webhooks/queue.js';
import { buildTestContext, testConfig, type TestContext } from '../helpers/app.js';
import { onPostgres } from '../helpers/cli.js';
import { connectReceiver, startTestWorker, startWebhookReceiver } from '../helpers/webhook-receiver.js';

const EVENTS = 1_000;
/** A thousand deliveries through three workers on the embedded database: seconds alone, much longer beside other test files. */
const SLOW = 120_000;

describe('several workers on one database', () => {
  let ctx: TestContext;
  let second: Database;

  beforeAll(async () => {
    ctx = await buildTestContext();
    // On PostgreSQL the second worker has a pool of its own, as another server would.
    second = onPostgres ? await openDatabase({ url: (ctx.database as unknown as { url: string }).url, poolSize: 5 }) : ctx.database;
    // Another server loads the same data keys (webhook bodies are stored encrypted).
    if (second !== ctx.database) await openKeyring(second, testConfig());
  });
  afterAll(async () => {
    if (second !== ctx.database) await second.close();
    await ctx.close();
  });

  it('deliver each event once, from one worker: a second send only after an attempt that failed on the way', { timeout: SLOW }, async () => {
    const org = await ctx.org();
    const receiver = await startWebhookReceiver();
    await connectReceiver(ctx.database, receiver, org.id, 'live');
    const ids: string[] = [];
    for (let i = 0; i < EVENTS; i += 100) {
      ids.push(...(await Promise.all(Array.from({ length: 100 }, (_, j) => enqueueEvent(ctx.database.db, { orgId: org.id, mode: 'live', type: 'address.completed', data: { n: i + j } })))));
    }
    // Small batches make the workers race for the same rows over and over. The leases are long: a
    // lease that runs out hands its delivery to another worker by design (at least once), and on a
    // busy machine one worker's event loop can stall for longer than the helper's 5 s.
    const workers = await Promise.all([
      startTestWorker(ctx.database, { concurrency: 8, leaseMs: 60_000 }),
      startTestWorker(second, { concurrency: 8, leaseMs: 60_000 }),
      startTestWorker(second, { concurrency: 4, leaseMs: 60_000 }),
    ]);
    try {
      // Every event, counted by id: on a stalled machine an attempt past its timeout is sent
      // again, and 1,000 requests arrived with 4 events still to come (a browser suite beside it).
      await expect.poll(() => new Set(receiver.requests.map((r) => r.id)).size, { timeout: 90_000, interval: 100 }).toBe(EVENTS);
      await new Promise((resolve) => setTimeout(resolve, 300));
    } finally {
      await Promise.all(workers.map((worker) => worker.stop()));
      await receiver.close();
    }
    const received = receiver.requests.map((r) => r.id);
    expect(new Set(received)).toEqual(new Set(ids));
    const deliveries = await listDeliveries(ctx.database.db, { orgId: org.id, mode: 'live', limit: EVENTS });
    expect(deliveries.every((d) => d.status === 'delivered')).toBe(true);
    // No two workers ever send one delivery: each delivery succeeded in exactly one attempt. A
    // second send happens only after an attempt that failed on the way — on a machine stalled by
    // the rest of the suite, an answer later than the 2 s attempt timeout — and is recorded as
    // such (at least once, by design: docs/webhooks.md). Every send the receiver saw is counted.
    const attempts = await ctx.database.db
      .selectFrom('webhook_attempts as a')
      .innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
      .select(['a.delivery_id', 'a.status_code', 'a.error'])
      .where('d.org_id', '=', org.id)
      .execute();
    const succeeded = attempts.filter((a) => a.status_code !== null && a.status_code < 300);
    expect(succeeded).toHaveLength(EVENTS);
    expect(new Set(succeeded.map((a) => String(a.delivery_id))).size).toBe(EVENTS);
    const failed = attempts.filter((a) => !(a.status_code !== null && a.status_code < 300));
    for (const attempt of failed) expect(attempt.error).toMatch(/no response within|ECONNRESET|socket hang up|EPIPE/);
    expect(received.length - EVENTS).toBeLessThanOrEqual(failed.length);
    expect(deliveries.reduce((sum, d) => sum + d.attemptCount, 0)).toBe(attempts.length);
  });

  it('deliver each event through a receiver outage, each worker with its own breaker, sent again only after a lost attempt', { timeout: SLOW }, async () => {
    const org = await ctx.org();
    const receiver = await startWebhookReceiver();
    await connectReceiver(ctx.database, receiver, org.id, 'live');
    receiver.failNext(60, 503);
    const ids = await Promise.all(Array.from({ length: 300 }, (_, n) => enqueueEvent(ctx.database.db, { orgId: org.id, mode: 'live', type: 'address.completed', data: { n } })));
    // Short cool-downs and retries; a probe that fails is retried soon, so allow it many attempts.
    const settings = { concurrency: 8, leaseMs: 60_000, breakerThreshold: 3, breakerCooldownMs: 300, retrySchedule: Array.from({ length: 60 }, () => 20) };
    const workers = await Promise.all([startTestWorker(ctx.database, settings), startTestWorker(second, settings), startTestWorker(second, settings)]);
    try {
      await receiver.waitForCount(300, 90_000, (r) => r.answeredWith === 204);
      await new Promise((resolve) => setTimeout(resolve, 300));
    } finally {
      await Promise.all(workers.map((worker) => worker.stop()));
      await receiver.close();
    }
    const delivered = receiver.delivered().map((r) => r.id);
    expect(new Set(delivered)).toEqual(new Set(ids));
    const deliveries = await listDeliveries(ctx.database.db, { orgId: org.id, mode: 'live', limit: 300 });
    expect(deliveries.every((d) => d.status === 'delivered')).toBe(true);
    // Only real attempts are counted: every one the receiver answered, and no other. An attempt
    // can also fail on the way (a kept-alive socket the receiver closed as it was reused, a
    // timeout on a stalled machine): counted too, with its error and no status.
    const attempts = await ctx.database.db
      .selectFrom('webhook_attempts as a')
      .innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
      .select(['a.status_code', 'a.error'])
      .where('d.org_id', '=', org.id)
      .execute();
    expect(deliveries.reduce((sum, d) => sum + d.attemptCount, 0)).toBe(attempts.length);
    const answered = attempts.filter((a) => a.status_code !== null);
    const lost = attempts.filter((a) => a.status_code === null);
    for (const failed of lost) expect(failed.error).toMatch(/ECONNRESET|socket hang up|EPIPE|no response within/);
    // Each answer the worker read is an attempt; a request the receiver answered too late for the
    // worker (a stalled machine) is an attempt with its error, and only those are sent twice.
    expect(answered.length).toBeLessThanOrEqual(receiver.requests.length);
    expect(receiver.requests.length - answered.length).toBeLessThanOrEqual(lost.length);
    expect(delivered.length - 300).toBeLessThanOrEqual(lost.length);
  });
});
