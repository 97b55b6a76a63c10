import path from 'node:path';
import { sql } from 'kysely';
import { loadConfig } from '../../src/config.js';
import { openKeyring } from '../../src/platform/crypto/open.js';
import { openDatabase } from '../../src/platform/db/database.js';
import { DEFAULT_DELIVERY_SETTINGS } from '../../src/webhooks/worker.js';
import { deferCleanup } from '../lib/cleanup.js';
import { withThrowawayDatabase } from '../lib/database.js';
import { BenchError } from '../lib/errors.js';
import { lastJsonLine, runCommand, startServer, type Env } from '../lib/processes.js';
import { quantile, round } from '../lib/report.js';
import { atMost, type Section } from '../lib/section.js';
import { stats, steady, startWorkerProcess, waitForReceived } from './webhooks.js';

/** Completions per second while two workers deliver, and for how long. */
const RATE = 500;
const SECONDS = 20;
/** One worker is SIGKILLed this far into the run. */
const KILL_AFTER_S = 7;
/** The receiver answers after this long, so each worker always has attempts in flight. */
const ANSWER_DELAY_MS = 50;
const TARGET_P99_MS = 5_000;
const PRODUCERS = 8;

interface Delays {
  p50: number;
  p99: number;
  max: number;
}

function percentiles(values: number[]): Delays {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number) => quantile(sorted, p / 100);
  return { p50: at(50), p99: at(99), max: sorted.at(-1) ?? 0 };
}

/**
 * Two `vouch worker` processes on one PostgreSQL deliver completions arriving at a steady rate;
 * one is killed with SIGKILL mid-run. Completion → delivery is the delivery's `delivered_at`
 * (the end of the attempt that succeeded, as its worker recorded it) minus its `created_at` (the
 * completion's transaction), so a delivery the killed worker had sent but whose answer it never
 * read counts from the completion to the other worker's attempt.
 */
export const webhookFailover: Section = {
  name: 'webhook-failover',
  description: `two \`vouch worker\` processes on PostgreSQL, ${RATE} completions/s for ${SECONDS} s, one SIGKILLed after ${KILL_AFTER_S} s: deliveries, duplicates, completion-to-delivery delay`,
  async run(context) {
    return withThrowawayDatabase(context.serverUrl, async (databaseUrl) => {
      const env: Env = { DATABASE_URL: databaseUrl, VOUCH_DEMO: 'off', LOG_LEVEL: 'warn', VOUCH_ALLOW_PRIVATE_URLS: '1' };
      const vouch = (...args: string[]) => runCommand(process.execPath, [context.vouchMain, ...args], { cwd: context.root, env });
      await vouch('migrate', '--json');
      const org = lastJsonLine<{ id: string }>(await vouch('org', 'create', '--name', 'Failover bench', '--enable', '--json'));
      const receiver = await startServer({
        name: 'webhook receiver',
        command: process.execPath,
        args: ['--import', 'tsx', path.join(context.root, 'bench/webhook-receiver.ts')],
        cwd: context.root,
        env: { ANSWER_DELAY_MS: String(ANSWER_DELAY_MS) },
      });
      const database = await openDatabase({ url: databaseUrl, poolSize: PRODUCERS + 2 });
      const closeDatabase = deferCleanup(() => database.close());
      await openKeyring(database, loadConfig());
      const workers: Array<{ pid: number; stop: () => Promise<void> }> = [];
      try {
        const endpoint = lastJsonLine<{ secret: string }>(await vouch('webhook', 'set', org.id, '--mode', 'live', '--url', `${receiver.url}/hook`, '--json'));
        await fetch(`${receiver.url}/_secret`, { method: 'PUT', body: endpoint.secret });
        workers.push(...(await Promise.all([startWorkerProcess(context, env), startWorkerProcess(context, env)])));

        const kill = setTimeout(() => process.kill(workers[0]!.pid, 'SIGKILL'), KILL_AFTER_S * 1000);
        const produced = await steady(database, org.id, RATE, SECONDS, 0);
        clearTimeout(kill);
        const received = await waitForReceived(receiver, produced, 120_000);
        const deadline = Date.now() + 60_000;
        let delivered = 0;
        while (delivered < produced) {
          delivered = (await sql<{ n: number }>`select count(*)::int as n from webhook_deliveries where status = 'delivered'`.execute(database.db)).rows[0]!.n;
          if (Date.now() > deadline) throw new BenchError(`only ${delivered} of ${produced} deliveries were marked delivered`);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        const final = await stats(receiver);
        if (final.badSignatures > 0) throw new BenchError(`${final.badSignatures} bad signatures`);
        const { rows } = await sql<{ delay_ms: number; attempts: number }>`
          select (extract(epoch from delivered_at - created_at) * 1000)::int as delay_ms, attempts
            from webhook_deliveries where status = 'delivered'`.execute(database.db);
        const all = percentiles(rows.map((row) => row.delay_ms));
        const resent = rows.filter((row) => row.attempts > 1);
        const affected = percentiles(resent.map((row) => row.delay_ms));
        return {
          section: 'webhook-failover',
          table: {
            columns: ['events', 'delivered', 'duplicate requests', 'attempted twice', 'p50 ms', 'p99 ms', 'max ms', "killed worker's deliveries p50/max ms", 'lease ms'],
            rows: [[produced, rows.length, final.duplicates, resent.length, all.p50, all.p99, all.max, `${affected.p50}/${affected.max}`, DEFAULT_DELIVERY_SETTINGS.leaseMs]],
          },
          targets: [atMost(`completion-to-delivery p99 ms with a worker killed at ${RATE}/s`, all.p99, TARGET_P99_MS)],
          result: {
            rate: RATE,
            seconds: SECONDS,
            killAfterSeconds: KILL_AFTER_S,
            answerDelayMs: ANSWER_DELAY_MS,
            leaseMs: DEFAULT_DELIVERY_SETTINGS.leaseMs,
            events: produced,
            unique: received.unique,
            delivered: rows.length,
            duplicates: final.duplicates,
            attemptedTwice: resent.length,
            delay: all,
            killedWorkersDeliveries: affected,
            deliveredPerSecond: round(rows.length / SECONDS, 0),
          },
        };
      } finally {
        await Promise.all(workers.map((worker) => worker.stop()));
        await closeDatabase();
        await receiver.stop();
      }
    });
  },
};
