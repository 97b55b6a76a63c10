import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { deferCleanup } from '../lib/cleanup.js';
import { withThrowawayDatabase } from '../lib/database.js';
import { BenchError } from '../lib/errors.js';
import { failures, load, paced, summaryCells, type LoadRequest, type LoadSettings, type LoadSummary } from '../lib/load.js';
import { lastJsonLine, NO_RATE_LIMITS, runCommand, startServer, type Env, type RunningServer } from '../lib/processes.js';
import { atLeast, atMost, type BenchContext, type Section } from '../lib/section.js';
import { bvnImportLines, syntheticBvn } from '../lib/synthetic.js';

/**
 * Live lookups through upstream providers (issue 9). A local provider speaking the verification
 * API answers each BVN lookup in 300 ms; Vouch sits in front of it with 200 connections open:
 *
 * - direct: the provider alone (the baseline: what a client would see without Vouch);
 * - embedded: Vouch answering the same lookups from its embedded registry, no upstream: the CPU
 *   a lookup costs Vouch itself, against which an upstream lookup's CPU is read (issue 22);
 * - healthy: Vouch → the provider; Vouch's added latency is its p50/p99 minus the direct ones;
 * - dead primary: the first source stops (its port then refuses connections), the provider is
 *   second;
 * - hanging primary: the first source starts accepting lookups and never answering them (time
 *   limit TIMEOUT_MS), the provider is second; every lookup must be answered, by the secondary.
 *
 * In the failure scenarios the primary is a second healthy provider through the warm-up (so
 * Vouch is warm, as a server in service is), and fails the moment the measured run starts: the
 * run includes the failures, the breaker opening and the failover.
 *
 * Each scenario runs twice: closed loop (autocannon, 200 connections, each sending its next
 * lookup when the last is answered) and open loop (`paced`: lookups due at a steady PACED_RATE,
 * which at 300 ms each keeps about 200 in flight). With a provider that answers every lookup in
 * exactly 300 ms, the closed loop moves in lock step: 200 answers arrive in the same
 * millisecond, Vouch handles them one after another, and the last waits for the 199 before it.
 * Real clients do not synchronise like that; the open loop is what "200 concurrent lookups"
 * means in service, and the targets are read from it. Both are reported.
 */

const CONNECTIONS = 200;
/** Lookups due per second in the open-loop runs: about CONNECTIONS in flight at DELAY_MS each. */
const PACED_RATE = 600;
const DELAY_MS = 300;
const TIMEOUT_MS = 1_000;
const FUNDING = '100000000000';
const BVN = '22298765432';

interface Scenario {
  name: string;
  /** Sources in order, as `vouch upstream add` arguments. */
  sources: { name: string; url: string }[];
  /** The BVN imported into the embedded registry (the `embedded` scenario: no upstream at all). */
  registry?: boolean;
  /** Makes the primary fail after the warm-up. */
  breakPrimary?(): Promise<void>;
}

type Style = 'closed' | 'paced';

/** One load run of the given style: closed loop (autocannon) or open loop at PACED_RATE. */
function drive(style: Style, request: LoadRequest, settings: LoadSettings, serverPid?: number): Promise<LoadSummary> {
  if (style === 'closed') return load(request, settings, serverPid);
  // Sockets to spare: a stall must not make due lookups wait for a free connection.
  return paced(request, { ...settings, connections: CONNECTIONS + 100, rate: PACED_RATE }, serverPid);
}

async function prepare(context: BenchContext, databaseUrl: string, env: Env, scenario: Scenario): Promise<string> {
  const vouch = (...args: string[]) => runCommand(process.execPath, [context.vouchMain, ...args], { cwd: context.root, env: { ...env, DATABASE_URL: databaseUrl } });
  await vouch('migrate', '--json');
  const org = lastJsonLine<{ liveSecret: string }>(await vouch('org', 'create', '--name', `Bench ${scenario.name}`, '--enable', '--fund', FUNDING, '--json'));
  for (const source of scenario.sources) {
    await vouch('upstream', 'add', source.name, '--kind', 'verifyme', '--url', source.url, '--secret', 'sk_live_bench_upstream_secret', '--types', 'bvn', '--timeout-ms', String(TIMEOUT_MS), '--json');
  }
  await vouch('upstream', 'order', 'bvn', ...scenario.sources.map((source) => source.name), 'embedded');
  if (scenario.registry) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vouch-bench-'));
    const removeDir = deferCleanup(async () => fs.rmSync(dir, { recursive: true, force: true }));
    try {
      const file = path.join(dir, 'registry.jsonl');
      fs.writeFileSync(file, bvnImportLines(100, [{ ...syntheticBvn(100), bvn: BVN }]));
      await vouch('registry', 'import', file, '--json');
    } finally {
      await removeDir();
    }
  }
  return org.liveSecret;
}

/** Which source answered the lookups, from the usage records. */
async function answeredBy(databaseUrl: string): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ source: string | null; count: string }>(
      `select source, count(*) as count from usage_events where outcome = 'success' group by source`,
    );
    return Object.fromEntries(rows.map((row) => [row.source ?? '(none)', Number(row.count)]));
  } finally {
    await client.end();
  }
}

function lookup(url: string, secret: string): LoadRequest {
  return {
    url: `${url}/v1/verifications/identities/bvn/${BVN}?type=premium`,
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: '{}',
  };
}

interface Outcome {
  summary: LoadSummary;
  answeredBy: Record<string, number>;
}

const round1 = (value: number) => Math.round(value * 10) / 10;

/** The share of the answered lookups that the secondary (`provider`) answered, in percent. */
function bySecondary(outcome: Outcome): number {
  const answered = Object.values(outcome.answeredBy).reduce((sum, n) => sum + n, 0);
  return answered === 0 ? 0 : Math.round(((outcome.answeredBy.provider ?? 0) / answered) * 1000) / 10;
}

/**
 * One scenario on a fresh database and a fresh `vouch serve`. A failure scenario warms up with
 * its primary healthy, lets the warm-up's last lookups finish, breaks the primary and measures;
 * its "answered by" counts the measured lookups only.
 */
async function runScenario(context: BenchContext, style: Style, scenario: Scenario, settings: LoadSettings): Promise<Outcome> {
  return withThrowawayDatabase(context.serverUrl, async (databaseUrl) => {
    const env: Env = { VOUCH_DEMO: 'off', LOG_LEVEL: 'warn', VOUCH_ENCRYPTION_KEY: randomBytes(32).toString('base64') };
    const secret = await prepare(context, databaseUrl, env, scenario);
    const vouch: RunningServer = await startServer({
      name: `vouch (${scenario.name}, ${style})`,
      command: process.execPath,
      args: [context.vouchMain, 'serve'],
      cwd: context.root,
      env: { ...env, ...NO_RATE_LIMITS, DATABASE_URL: databaseUrl, DATABASE_POOL_SIZE: process.env.DATABASE_POOL_SIZE || '20' },
    });
    try {
      const request = lookup(vouch.url, secret);
      if (!scenario.breakPrimary) return { summary: await drive(style, request, settings, vouch.pid), answeredBy: await answeredBy(databaseUrl) };
      await drive(style, request, { ...settings, duration: settings.warmup, warmup: 0 });
      await new Promise((resolve) => setTimeout(resolve, DELAY_MS + 500));
      const before = await answeredBy(databaseUrl);
      await scenario.breakPrimary();
      const summary = await drive(style, request, { ...settings, warmup: 0 }, vouch.pid);
      const after = await answeredBy(databaseUrl);
      const counts = Object.fromEntries(Object.entries(after).map(([source, n]) => [source, n - (before[source] ?? 0)] as const).filter(([, n]) => n > 0));
      return { summary, answeredBy: counts };
    } finally {
      await vouch.stop();
    }
  });
}

const COLUMNS = ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'requests', 'non-2xx', 'server µs CPU/lookup', 'answered by'];
/** Issue 22: Vouch's CPU per upstream lookup at most twice an embedded lookup's, in the same run (open loop). */
const TARGET_CPU_FACTOR = 2;

export const upstreams: Section = {
  name: 'upstreams',
  description: `BVN lookups through Vouch to a provider answering in ${DELAY_MS} ms, ${CONNECTIONS} connections: added latency, and failover from a dead or hanging primary`,
  async run(context) {
    const settings = { ...context.load, connections: CONNECTIONS };
    const upstreamScript = path.join(context.root, 'bench/upstream-server.ts');
    const startUpstream = (name: string) =>
      startServer({ name, command: process.execPath, args: ['--import', 'tsx', upstreamScript], cwd: context.root, env: { UPSTREAM_DELAY_MS: String(DELAY_MS) } });
    const provider = await startUpstream('provider');
    const primaries: RunningServer[] = [];
    /** A healthy provider that a failure scenario breaks after its warm-up. */
    const primary = async (name: string) => {
      const server = await startUpstream(name);
      primaries.push(server);
      return server;
    };
    const directRequest: LoadRequest = { url: `${provider.url}/v1/verifications/identities/bvn/${BVN}?type=premium`, method: 'POST', body: '{}' };
    const scenarios = async (): Promise<Scenario[]> => {
      const dying = await primary('dying primary');
      const hanging = await primary('hanging primary');
      return [
        // The same lookups answered by the embedded registry: the CPU a lookup costs Vouch without an upstream.
        { name: 'embedded', sources: [], registry: true },
        { name: 'healthy', sources: [{ name: 'provider', url: provider.url }] },
        { name: 'dead primary', sources: [{ name: 'dead', url: dying.url }, { name: 'provider', url: provider.url }], breakPrimary: () => dying.stop() },
        {
          name: 'hanging primary',
          sources: [{ name: 'hanging', url: hanging.url }, { name: 'provider', url: provider.url }],
          breakPrimary: async () => void process.kill(hanging.pid, 'SIGUSR2'),
        },
      ];
    };
    try {
      const results = {} as Record<Style, { direct: LoadSummary; outcomes: Record<string, Outcome> }>;
      for (const style of ['closed', 'paced'] as const) {
        const direct = await drive(style, directRequest, settings);
        if (failures(direct)) throw new BenchError(`the provider alone answered other than 2xx: ${failures(direct)}`);
        const outcomes: Record<string, Outcome> = {};
        for (const scenario of await scenarios()) outcomes[scenario.name] = await runScenario(context, style, scenario, settings);
        results[style] = { direct, outcomes };
      }

      const describe = (counts: Record<string, number>) => Object.entries(counts).map(([source, n]) => `${source} ${n}`).join(', ');
      const row = (name: string, summary: LoadSummary, counts?: Record<string, number>) => [
        name,
        ...summaryCells(summary),
        counts ? describe(counts) : '-',
      ];
      const rows = (['closed', 'paced'] as const).flatMap((style) => {
        const { direct, outcomes } = results[style];
        const label = style === 'closed' ? `closed loop, ${CONNECTIONS} connections` : `open loop, ${PACED_RATE}/s`;
        return [
          row(`${label}: provider alone (baseline)`, direct),
          row(`${label}: vouch, embedded registry (no upstream)`, outcomes.embedded!.summary, outcomes.embedded!.answeredBy),
          row(`${label}: vouch → provider`, outcomes.healthy!.summary, outcomes.healthy!.answeredBy),
          row(`${label}: primary dies`, outcomes['dead primary']!.summary, outcomes['dead primary']!.answeredBy),
          row(`${label}: primary hangs (limit ${TIMEOUT_MS} ms)`, outcomes['hanging primary']!.summary, outcomes['hanging primary']!.answeredBy),
        ];
      });
      for (const style of ['closed', 'paced'] as const) {
        for (const [name, outcome] of Object.entries(results[style].outcomes)) {
          const failed = failures(outcome.summary);
          if (failed) process.stderr.write(`bench: ${name} (${style}) had responses other than 2xx: ${failed}\n`);
        }
      }
      // The targets are read from the open loop (see the top of the file); the closed loop is reported beside it.
      const { direct, outcomes } = results.paced;
      const healthy = outcomes.healthy!;
      const dead = outcomes['dead primary']!;
      const hang = outcomes['hanging primary']!;
      const addedP50 = round1(healthy.summary.p50 - direct.p50);
      const addedP99 = round1(healthy.summary.p99 - direct.p99);
      const everyOutcome = (['closed', 'paced'] as const).flatMap((style) => Object.values(results[style].outcomes));
      const embeddedCpu = outcomes.embedded!.summary.cpu?.serverUsPerRequest ?? 0;
      const cpuFactor = embeddedCpu > 0 ? Math.round(((healthy.summary.cpu?.serverUsPerRequest ?? 0) / embeddedCpu) * 100) / 100 : 0;
      return {
        section: 'upstreams',
        table: { columns: COLUMNS, rows },
        targets: [
          atMost('added p50 ms (vouch − provider alone, open loop)', addedP50, 5),
          atMost('added p99 ms (vouch − provider alone, open loop)', addedP99, 20),
          atMost('dead primary: p99 ms (open loop)', dead.summary.p99, DELAY_MS + 50),
          atMost(`hanging primary: p99 ms (open loop; time limit ${TIMEOUT_MS} + 400)`, hang.summary.p99, TIMEOUT_MS + 400),
          atLeast('hanging primary: % of lookups answered by the secondary (both loops)', Math.min(...(['closed', 'paced'] as const).map((style) => bySecondary(results[style].outcomes['hanging primary']!))), 100),
          atMost('server CPU per lookup, vouch → provider ÷ embedded registry (open loop)', cpuFactor, TARGET_CPU_FACTOR),
          atMost('non-2xx answers in all runs', everyOutcome.reduce((sum, o) => sum + o.summary.non2xx + o.summary.errors + o.summary.timeouts, 0), 0),
        ],
        result: { connections: CONNECTIONS, pacedRate: PACED_RATE, delayMs: DELAY_MS, timeoutMs: TIMEOUT_MS, results, addedP50, addedP99, cpuFactor },
      };
    } finally {
      for (const server of primaries) await server.stop();
      await provider.stop();
    }
  },
};
