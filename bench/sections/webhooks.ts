import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { sql } from 'kysely';
import { loadConfig } from '../../src/config.js';
import { openKeyring } from '../../src/platform/crypto/open.js';
import { openDatabase, type Database } from '../../src/platform/db/database.js';
import { enqueueEvent } from '../../src/webhooks/events.js';
import { deferCleanup } from '../lib/cleanup.js';
import { cpuSeconds, machineBusySeconds } from '../lib/cpu.js';
import { withThrowawayDatabase } from '../lib/database.js';
import { BenchError } from '../lib/errors.js';
import { lastJsonLine, runCommand, startServer, type Env, type RunningServer } from '../lib/processes.js';
import { round } from '../lib/report.js';
import { atLeast, atMost, type BenchContext, type Section } from '../lib/section.js';

/** Events queued before the worker starts: the drain measures deliveries per second. */
const BACKLOG = 20_000;
/** The steady phase: events completed at this rate while the worker runs; measures latency. */
const STEADY_RATE = 1_000;
const STEADY_SECONDS = 10;
const TARGET_PER_SECOND = 2_000;
const TARGET_P99_MS = 500;
/** Concurrent enqueue transactions of the producer. */
const PRODUCERS = 8;
/** Events per transaction while queueing the backlog (setup speed only). */
const BACKLOG_BATCH = 100;

export interface ReceiverStats {
  received: number;
  unique: number;
  duplicates: number;
  badSignatures: number;
  firstAt: number;
  lastAt: number;
  latency: { p50: number; p90: number; p99: number; max: number };
}

/** An address record about the size a real address.completed event carries (~1 KB). */
function record(n: number) {
  return {
    id: n,
    reference: `bench-${n}`,
    status: { status: 'Verified', subStatus: 'verified', state: 'complete' },
    applicant: { firstname: 'Adaeze', lastname: 'Okonkwo', dob: '14-03-1990', phone: '08031234567', idType: 'NIN', idNumber: '12345678901' },
    street: '12 Adeola Odeku Street', lga: 'Eti Osa', state: 'Lagos', city: 'Victoria Island', landmark: 'Opposite the bank',
    lattitude: '6.4281', longitude: '3.4219',
    photos: ['https://vouch.example/files/a.jpg?token=abc', 'https://vouch.example/files/b.jpg?token=def'],
    neighbor: { name: 'Chinedu Eze', comment: 'Has lived here for five years', phone: '08029876543' },
    createdAt: new Date().toISOString(), completedAt: new Date().toISOString(),
  };
}

/**
 * Completions committed together: one transaction enqueues the events of `numbers` (outbox), as
 * the transactions that change verification states do. Each event's timestamp is taken as it is
 * enqueued, so the latency measured includes the wait for the commit.
 */
export function complete(database: Database, orgId: string, numbers: number[]): Promise<void> {
  return database.db.transaction().execute(async (trx) => {
    for (const n of numbers) await enqueueEvent(trx, { orgId, mode: 'live', type: 'address.completed', data: record(n) });
  });
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

export async function startWorkerProcess(context: BenchContext, env: Env): Promise<{ pid: number; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [context.vouchMain, 'worker'], { cwd: context.root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => (output = (output + String(chunk)).slice(-4000)));
  const exit = once(child, 'exit');
  const stop = deferCleanup(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    await exit;
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += String(chunk);
      if (output.includes('Vouch worker is running')) resolve();
    });
    void exit.then(() => reject(new BenchError(`vouch worker exited before it ran: ${output.trim()}`)));
  });
  return { pid: child.pid!, stop };
}

/** CPU used by the worker and the receiver, and by the whole machine, over one phase. */
function cpuMeter(workerPid: number, receiverPid: number) {
  const start = { worker: cpuSeconds(workerPid), receiver: cpuSeconds(receiverPid), machine: machineBusySeconds(), at: performance.now() };
  return (deliveries: number) => {
    const [worker, receiver, machine] = [cpuSeconds(workerPid), cpuSeconds(receiverPid), machineBusySeconds()];
    if (start.worker === undefined || start.receiver === undefined || start.machine === undefined || worker === undefined || receiver === undefined || machine === undefined) {
      return undefined;
    }
    const seconds = (performance.now() - start.at) / 1000;
    return {
      workerUsPerDelivery: round(((worker - start.worker) * 1e6) / deliveries, 0),
      receiverUsPerDelivery: round(((receiver - start.receiver) * 1e6) / deliveries, 0),
      machineCores: round((machine - start.machine) / seconds, 2),
    };
  };
}

export async function stats(receiver: RunningServer): Promise<ReceiverStats> {
  return (await fetch(`${receiver.url}/_stats`)).json() as Promise<ReceiverStats>;
}

export async function waitForReceived(receiver: RunningServer, count: number, timeoutMs: number): Promise<ReceiverStats> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const current = await stats(receiver);
    if (current.unique >= count) return current;
    if (Date.now() > deadline) throw new BenchError(`the receiver got ${current.unique} of ${count} events within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function waitForDelivered(database: Database, count: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { rows } = await sql<{ delivered: number }>`select count(*)::int as delivered from webhook_deliveries where status = 'delivered'`.execute(database.db);
    if (rows[0]!.delivered >= count) return;
    if (Date.now() > deadline) throw new BenchError(`only ${rows[0]!.delivered} of ${count} deliveries were marked delivered`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Queues `total` events, PRODUCERS transactions at a time, as fast as they go. */
async function backlog(database: Database, orgId: string, total: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: PRODUCERS }, async () => {
      while (next < total) {
        const from = next;
        next = Math.min(total, next + BACKLOG_BATCH);
        await complete(database, orgId, range(from, next));
      }
    }),
  );
}

/** Completions at `rate` per second for `seconds`: every 10 ms, the ones due commit in one transaction (open loop). */
export async function steady(database: Database, orgId: string, rate: number, seconds: number, offset: number): Promise<number> {
  const total = rate * seconds;
  const started = performance.now();
  const inFlight: Promise<void>[] = [];
  let sent = 0;
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate));
    if (due > sent) inFlight.push(complete(database, orgId, range(offset + sent, offset + due)));
    sent = due;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  await Promise.all(inFlight);
  return total;
}

export const webhooks: Section = {
  name: 'webhooks',
  description: 'webhook deliveries by `vouch worker` on PostgreSQL to a loopback receiver in another process: drain rate and completion-to-delivery latency',
  async run(context) {
    return withThrowawayDatabase(context.serverUrl, async (databaseUrl) => {
      const env: Env = { DATABASE_URL: databaseUrl, VOUCH_DEMO: 'off', LOG_LEVEL: 'warn', VOUCH_ALLOW_PRIVATE_URLS: '1' };
      const vouch = (...args: string[]) => runCommand(process.execPath, [context.vouchMain, ...args], { cwd: context.root, env });
      await vouch('migrate', '--json');
      const org = lastJsonLine<{ id: string }>(await vouch('org', 'create', '--name', 'Webhook bench', '--enable', '--json'));
      const receiver = await startServer({
        name: 'webhook receiver',
        command: process.execPath,
        args: ['--import', 'tsx', path.join(context.root, 'bench/webhook-receiver.ts')],
        cwd: context.root,
        env: {},
      });
      const database = await openDatabase({ url: databaseUrl, poolSize: PRODUCERS + 2 });
      const closeDatabase = deferCleanup(() => database.close());
      // Webhook bodies are stored encrypted: the key every process of the bench shares (bench/run.ts).
      await openKeyring(database, loadConfig());
      let worker: { pid: number; stop: () => Promise<void> } | undefined;
      try {
        const endpoint = lastJsonLine<{ secret: string }>(await vouch('webhook', 'set', org.id, '--mode', 'live', '--url', `${receiver.url}/hook`, '--json'));
        await fetch(`${receiver.url}/_secret`, { method: 'PUT', body: endpoint.secret });

        // Drain: a backlog queued while no worker runs, then one worker process delivers it.
        const queueStarted = performance.now();
        await backlog(database, org.id, BACKLOG);
        const enqueuePerSecond = BACKLOG / ((performance.now() - queueStarted) / 1000);
        const workerStarted = Date.now();
        worker = await startWorkerProcess(context, env);
        const drainCpu = cpuMeter(worker.pid, receiver.pid);
        const drained = await waitForReceived(receiver, BACKLOG, 120_000);
        const drainUsage = drainCpu(BACKLOG);
        await waitForDelivered(database, BACKLOG);
        const drainPerSecond = (drained.unique - 1) / ((drained.lastAt - drained.firstAt) / 1000);
        const drainWallSeconds = (drained.lastAt - workerStarted) / 1000;

        // Steady: completions at a fixed rate while the worker runs; latency from completion to receipt.
        await fetch(`${receiver.url}/_reset`, { method: 'POST' });
        const steadyCpu = cpuMeter(worker.pid, receiver.pid);
        const produced = await steady(database, org.id, STEADY_RATE, STEADY_SECONDS, BACKLOG);
        const live = await waitForReceived(receiver, produced, 60_000);
        const steadyUsage = steadyCpu(produced);
        await waitForDelivered(database, BACKLOG + produced);

        for (const [phase, result] of [['drain', drained], ['steady', live]] as const) {
          if (result.duplicates > 0 || result.badSignatures > 0) {
            throw new BenchError(`${phase}: ${result.duplicates} duplicate deliveries and ${result.badSignatures} bad signatures`);
          }
        }
        const columns = ['phase', 'events', 'deliveries/s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'dup/bad sig', 'worker µs CPU/delivery', 'receiver µs', 'machine cores busy'];
        const row = (phase: string, result: ReceiverStats, perSecond: number, usage: ReturnType<ReturnType<typeof cpuMeter>>) => [
          phase, result.unique, round(perSecond, 0), result.latency.p50, result.latency.p90, result.latency.p99, result.latency.max,
          `${result.duplicates}/${result.badSignatures}`, usage?.workerUsPerDelivery ?? '-', usage?.receiverUsPerDelivery ?? '-', usage?.machineCores ?? '-',
        ];
        const steadyPerSecond = (live.unique - 1) / ((live.lastAt - live.firstAt) / 1000);
        return {
          section: 'webhooks',
          table: {
            columns,
            rows: [
              row(`drain of ${BACKLOG} queued`, drained, drainPerSecond, drainUsage),
              row(`steady ${STEADY_RATE}/s for ${STEADY_SECONDS} s`, live, steadyPerSecond, steadyUsage),
            ],
          },
          targets: [
            atLeast('deliveries/s draining a backlog', round(drainPerSecond, 0), TARGET_PER_SECOND),
            atMost(`completion-to-delivery p99 ms at ${STEADY_RATE}/s`, live.latency.p99, TARGET_P99_MS),
          ],
          result: {
            backlog: BACKLOG,
            enqueuePerSecond: round(enqueuePerSecond, 0),
            drain: { perSecond: round(drainPerSecond, 0), wallSeconds: round(drainWallSeconds, 2), latency: drained.latency, cpu: drainUsage },
            steady: { rate: STEADY_RATE, seconds: STEADY_SECONDS, events: live.unique, perSecond: round(steadyPerSecond, 0), latency: live.latency, cpu: steadyUsage },
          },
        };
      } finally {
        await worker?.stop();
        await closeDatabase();
        await receiver.stop();
      }
    });
  },
};
