import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { enqueueEvent } from '../../src/webhooks/events.js';
import { getDelivery } from '../../src/webhooks/queue.js';
import { deleteEndedDeliveries, webhookRetentionTask } from '../../src/webhooks/retention.js';
import { BACKGROUND_TASKS, startWorker } from '../../src/worker.js';
import { buildTestContext, testConfig, type TestContext } from '../helpers/app.js';
import { expectFailure, runCli, throwawayEnv } from '../helpers/cli.js';

const DAY = 24 * 60 * 60 * 1000;
/** The injected clock: every time below is relative to it, far from the real one. */
const NOW = new Date('2031-03-01T12:00:00.000Z');
const daysAgo = (days: number) => new Date(NOW.getTime() - days * DAY);

describe('webhook retention', () => {
  let ctx: TestContext;

  beforeAll(async () => {
    ctx = await buildTestContext();
  });
  afterAll(async () => {
    await ctx.close();
  });

  /** A delivery in the given state, with `attempts` rows in its attempt log. */
  async function delivery(orgId: string, state: { status: 'pending' | 'delivered' | 'failed'; deliveredAt?: Date; nextAttemptAt: Date; attempts: number }) {
    const webhookId = await enqueueEvent(ctx.database.db, { orgId, mode: 'live', type: 'address.completed', data: { state } }, daysAgo(60));
    const row = await ctx.database.db
      .updateTable('webhook_deliveries')
      .set({ status: state.status, delivered_at: state.deliveredAt ?? null, next_attempt_at: state.nextAttemptAt, attempts: state.attempts })
      .where('message_id', '=', webhookId)
      .returning('id')
      .executeTakeFirstOrThrow();
    const id = Number(row.id);
    for (let n = 0; n < state.attempts; n++) {
      await ctx.database.db.insertInto('webhook_attempts').values({ delivery_id: id, attempted_at: state.nextAttemptAt, status_code: 500, latency_ms: 3, error: 'HTTP 500' }).execute();
    }
    return id;
  }

  /** The task sweeps at start, in batches; stopping it would end the sweep after the current batch. */
  async function waitUntilGone(ids: number[]) {
    const until = Date.now() + 10_000;
    while ((await ctx.database.db.selectFrom('webhook_deliveries').select('id').where('id', 'in', ids).execute()).length > 0) {
      if (Date.now() > until) throw new Error('the retention task did not delete the old deliveries');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  const attemptRows = async (id: number) =>
    Number((await ctx.database.db.selectFrom('webhook_attempts').select((eb) => eb.fn.countAll<number>().as('n')).where('delivery_id', '=', id).executeTakeFirstOrThrow()).n);

  it('deletes ended deliveries older than the retention period with their attempt logs, in batches, and never a pending one', async () => {
    const org = await ctx.org();
    const oldDelivered = await Promise.all([31, 45, 90].map((days) => delivery(org.id, { status: 'delivered', deliveredAt: daysAgo(days), nextAttemptAt: daysAgo(days + 3), attempts: 2 })));
    const oldFailed = await Promise.all([31, 40].map((days) => delivery(org.id, { status: 'failed', nextAttemptAt: daysAgo(days), attempts: 12 })));
    const kept = [
      // Ended within the 30 days: a delivery delivered 29 days ago, whose first attempt was long before.
      await delivery(org.id, { status: 'delivered', deliveredAt: daysAgo(29), nextAttemptAt: daysAgo(35), attempts: 3 }),
      await delivery(org.id, { status: 'failed', nextAttemptAt: daysAgo(1), attempts: 12 }),
      // Pending and retrying deliveries stay, however old.
      await delivery(org.id, { status: 'pending', nextAttemptAt: daysAgo(100), attempts: 0 }),
      await delivery(org.id, { status: 'pending', nextAttemptAt: daysAgo(50), attempts: 7 }),
    ];
    expect(await attemptRows(oldFailed[0]!)).toBe(12);

    // The real task, with the clock injected and two deliveries per statement.
    const worker = await startWorker({
      database: ctx.database,
      config: testConfig({ webhookRetentionDays: 30 }),
      logger: pino({ level: 'silent' }),
      tasks: [webhookRetentionTask({ now: () => NOW, batchSize: 2 })],
    });
    try {
      await waitUntilGone([...oldDelivered, ...oldFailed]);
    } finally {
      await worker.stop();
    }
    for (const id of [...oldDelivered, ...oldFailed]) {
      expect(await getDelivery(ctx.database.db, id)).toBeUndefined();
      expect(await attemptRows(id)).toBe(0);
    }
    for (const id of kept) expect(await getDelivery(ctx.database.db, id)).toBeDefined();
    expect(await attemptRows(kept[3]!)).toBe(7);

    // Two days later the delivery delivered 29 days before NOW is past its 30 days too; pending ones still stay.
    const deleted = await deleteEndedDeliveries(ctx.database.db, new Date(NOW.getTime() + 2 * DAY - 30 * DAY), { batchSize: 2 });
    expect(deleted).toBe(1);
    expect(await getDelivery(ctx.database.db, kept[0]!)).toBeUndefined();
    for (const id of kept.slice(1)) expect(await getDelivery(ctx.database.db, id)).toBeDefined();
  });

  it('honours a shorter retention from the configuration', async () => {
    const org = await ctx.org();
    const recent = await delivery(org.id, { status: 'delivered', deliveredAt: daysAgo(3), nextAttemptAt: daysAgo(3), attempts: 1 });
    const newer = await delivery(org.id, { status: 'delivered', deliveredAt: daysAgo(1), nextAttemptAt: daysAgo(1), attempts: 1 });
    const worker = await startWorker({
      database: ctx.database,
      config: testConfig({ webhookRetentionDays: 2 }),
      logger: pino({ level: 'silent' }),
      tasks: [webhookRetentionTask({ now: () => NOW })],
    });
    try {
      await waitUntilGone([recent]);
    } finally {
      await worker.stop();
    }
    expect(await getDelivery(ctx.database.db, newer)).toBeDefined();
  });

  it('runs in the worker', () => {
    expect(BACKGROUND_TASKS.map((task) => task.name)).toContain('webhook retention');
  });
});

describe('VOUCH_WEBHOOK_RETENTION_DAYS', () => {
  it('defaults to 30 days and accepts whole days from 1 to 3650', () => {
    expect(loadConfig({}).webhookRetentionDays).toBe(30);
    expect(loadConfig({ VOUCH_WEBHOOK_RETENTION_DAYS: '7' }).webhookRetentionDays).toBe(7);
    expect(() => loadConfig({ VOUCH_WEBHOOK_RETENTION_DAYS: '0' })).toThrow(new ConfigError('VOUCH_WEBHOOK_RETENTION_DAYS', 'must be between 1 and 3650, got 0'));
    expect(() => loadConfig({ VOUCH_WEBHOOK_RETENTION_DAYS: '30d' })).toThrow(new ConfigError('VOUCH_WEBHOOK_RETENTION_DAYS', 'must be a whole number, got "30d"'));
  });

  it('stops start with one clear line when it is bad', async () => {
    const throwaway = await throwawayEnv();
    try {
      const result = await runCli(['worker'], { ...throwaway.env, VOUCH_WEBHOOK_RETENTION_DAYS: 'forever' });
      expectFailure(result, /^vouch: invalid configuration: VOUCH_WEBHOOK_RETENTION_DAYS: must be a whole number, got "forever"$/m);
    } finally {
      await throwaway.cleanup();
    }
  });
});
