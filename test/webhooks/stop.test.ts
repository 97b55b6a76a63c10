import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDelivery } from '../../src/webhooks/queue.js';
import { enqueueEvent } from '../../src/webhooks/events.js';
import { buildTestContext, type TestContext } from '../helpers/app.js';
import { connectReceiver, startTestWorker, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

/** A first retry a minute away: a cut-off attempt counted as a failure would wait it out. */
const SLOW_RETRIES = [60_000, 60_000, 60_000];

describe('a worker stopped while an attempt is in flight', () => {
  let ctx: TestContext;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    ctx = await buildTestContext();
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    await ctx?.close();
  });

  it('hands it back when its grace is over: logged, not counted, and sent again at once by the next worker with the same webhook-id', { timeout: 30_000 }, async () => {
    const org = await ctx.org();
    await connectReceiver(ctx.database, receiver, org.id, 'live');
    // The receiver never answers the first request: the stop's grace (200 ms) runs out on it.
    receiver.hangNext(1);
    const settings = { retrySchedule: SLOW_RETRIES, stopGraceMs: 200, timeoutMs: 20_000 };
    const first = await startTestWorker(ctx.database, settings);
    const webhookId = await enqueueEvent(ctx.database.db, { orgId: org.id, mode: 'live', type: 'address.completed', data: { n: 1 } });
    await receiver.waitFor((request) => request.id === webhookId);
    await first.stop();

    const row = await ctx.database.db.selectFrom('webhook_deliveries').select(['id', 'status', 'attempts', 'locked_until', 'next_attempt_at']).where('message_id', '=', webhookId).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'pending', attempts: 0, locked_until: null });
    expect(row.next_attempt_at.getTime()).toBeLessThanOrEqual(Date.now());
    const handedBack = await getDelivery(ctx.database.db, Number(row.id));
    expect(handedBack?.attempts).toHaveLength(1);
    expect(handedBack?.attempts[0]?.error).toMatch(/^cut off by the worker's stop .*handed back, not counted$/);

    // The next worker (another process, or this one restarted) sends it now, not a retry delay later.
    const second = await startTestWorker(ctx.database, settings);
    try {
      const [, again] = await receiver.waitForCount(2, 5_000, (request) => request.id === webhookId);
      expect(again!.answeredWith).toBe(204);
      expect(again!.verified).toBe(true);
    } finally {
      await second.stop();
    }
    const delivered = await getDelivery(ctx.database.db, Number(row.id));
    expect(delivered).toMatchObject({ status: 'delivered', attemptCount: 2 });
    const counted = await ctx.database.db.selectFrom('webhook_deliveries').select('attempts').where('message_id', '=', webhookId).executeTakeFirstOrThrow();
    expect(counted.attempts).toBe(1);
  });
});
