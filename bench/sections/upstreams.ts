import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { withThrowawayDatabase } from '../lib/database.js';
import { BenchError } from '../lib/errors.js';
import { failures, load, type LoadRequest, type LoadSummary } from '../lib/load.js';
import { freePort, lastJsonLine, NO_RATE_LIMITS, runCommand, startServer, type Env, type RunningServer } from '../lib/processes.js';
import { atLeast, atMost, type BenchContext, type Section } from '../lib/section.js';

/**
 * Live lookups through upstream providers (issue 9). A local provider speaking the verification
 * API answers each BVN lookup in 300 ms; Vouch sits in front of it with 200 connections open:
 *
 * - direct: the provider alone (the baseline: what a client would see without Vouch);
 * - healthy: Vouch → the provider; Vouch's added latency is its p50/p99 minus the direct ones;
 * - dead primary: the first source refuses connections, the provider is second;
 * - hanging primary: the first source accepts and never answers (time limit UPSTREAM_TIMEOUT_MS),
 *   the provider is second; every lookup must be answered, by the secondary.
 *
 * The failure scenarios have no warm-up: their measured run includes the breaker opening.
 */

const CONNECTIONS = 200;
const DELAY_MS = 300;
const TIMEOUT_MS = 1_000;
const FUNDING = '100000000000';
const BVN = '22298765432';

interface Scenario {
  name: string;
  /** Sources in order, as `vouch upstream add` arguments. */
  sources: { name: string; url: string }[];
}

async function prepare(context: BenchContext, databaseUrl: string, env: Env, scenario: Scenario): Promise<string> {
  const vouch = (...args: string[]) => runCommand(process.execPath, [context.vouchMain, ...args], { cwd: context.root, env: { ...env, DATABASE_URL: databaseUrl } });
  await vouch('migrate', '--json');
  const org = lastJsonLine<{ liveSecret: string }>(await vouch('org', 'create', '--name', `Bench ${scenario.name}`, '--enable', '--fund', FUNDING, '--json'));
  for (const source of scenario.sources) {
    await vouch('upstream', 'add', source.name, '--kind', 'verifyme', '--url', source.url, '--secret', 'sk_live_bench_upstream_secret', '--types', 'bvn', '--timeout-ms', String(TIMEOUT_MS), '--json');
  }
  await vouch('upstream', 'order', 'bvn', ...scenario.sources.map((source) => source.name), 'embedded');
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

const COLUMNS = ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'requests', 'non-2xx', 'answered by'];

export const upstreams: Section = {
  name: 'upstreams',
  description: `BVN lookups through Vouch to a provider answering in ${DELAY_MS} ms, ${CONNECTIONS} connections: added latency, and failover from a dead or hanging primary`,
  async run(context) {
    const settings = { ...context.load, connections: CONNECTIONS };
    const upstreamScript = path.join(context.root, 'bench/upstream-server.ts');
    const startUpstream = (name: string, extra: Env) =>
      startServer({ name, command: process.execPath, args: ['--import', 'tsx', upstreamScript], cwd: context.root, env: { UPSTREAM_DELAY_MS: String(DELAY_MS), ...extra } });
    const provider = await startUpstream('provider', {});
    const hanging = await startUpstream('hanging', { UPSTREAM_HANG: '1' });
    const deadUrl = `http://127.0.0.1:${await freePort()}`;
    try {
      const direct = await load({ url: `${provider.url}/v1/verifications/identities/bvn/${BVN}?type=premium`, method: 'POST', body: '{}' }, settings);
      if (failures(direct)) throw new BenchError(`the provider alone answered other than 2xx: ${failures(direct)}`);

      const scenarios: Scenario[] = [
        { name: 'healthy', sources: [{ name: 'provider', url: provider.url }] },
        { name: 'dead primary', sources: [{ name: 'dead', url: deadUrl }, { name: 'provider', url: provider.url }] },
        { name: 'hanging primary', sources: [{ name: 'hanging', url: hanging.url }, { name: 'provider', url: provider.url }] },
      ];
      const results: Record<string, { summary: LoadSummary; answeredBy: Record<string, number> }> = {};
      for (const scenario of scenarios) {
        const outcome = await withThrowawayDatabase(context.serverUrl, async (databaseUrl) => {
          const env: Env = { VOUCH_DEMO: 'off', LOG_LEVEL: 'warn', VOUCH_ENCRYPTION_KEY: randomBytes(32).toString('base64') };
          const secret = await prepare(context, databaseUrl, env, scenario);
          const vouch: RunningServer = await startServer({
            name: `vouch (${scenario.name})`,
            command: process.execPath,
            args: [context.vouchMain, 'serve'],
            cwd: context.root,
            env: { ...env, ...NO_RATE_LIMITS, DATABASE_URL: databaseUrl, DATABASE_POOL_SIZE: process.env.DATABASE_POOL_SIZE || '20' },
          });
          try {
            const request = lookup(vouch.url, secret);
            const summary = await load(request, scenario.name === 'healthy' ? settings : { ...settings, warmup: 0 }, vouch.pid);
            return { summary, answeredBy: await answeredBy(databaseUrl) };
          } finally {
            await vouch.stop();
          }
        });
        results[scenario.name] = outcome;
      }

      const healthy = results.healthy!;
      const dead = results['dead primary']!;
      const hang = results['hanging primary']!;
      const addedP50 = healthy.summary.p50 - direct.p50;
      const addedP99 = healthy.summary.p99 - direct.p99;
      const total = (counts: Record<string, number>) => Object.values(counts).reduce((sum, n) => sum + n, 0);
      const bySecondary = (outcome: typeof hang) => {
        const answered = total(outcome.answeredBy);
        return answered === 0 ? 0 : Math.round(((outcome.answeredBy.provider ?? 0) / answered) * 1000) / 10;
      };
      const describe = (counts: Record<string, number>) => Object.entries(counts).map(([source, n]) => `${source} ${n}`).join(', ');
      const row = (name: string, summary: LoadSummary, counts?: Record<string, number>) => [
        name,
        Math.round(summary.reqPerSec),
        summary.p50,
        summary.p99,
        summary.requests,
        summary.non2xx + summary.errors + summary.timeouts,
        counts ? describe(counts) : '-',
      ];
      for (const [name, outcome] of Object.entries(results)) {
        const failed = failures(outcome.summary);
        if (failed) process.stderr.write(`bench: ${name} had responses other than 2xx: ${failed}\n`);
      }
      return {
        section: 'upstreams',
        table: {
          columns: COLUMNS,
          rows: [
            row('provider alone (baseline)', direct),
            row('vouch → provider', healthy.summary, healthy.answeredBy),
            row('vouch, primary refuses connections', dead.summary, dead.answeredBy),
            row(`vouch, primary hangs (time limit ${TIMEOUT_MS} ms)`, hang.summary, hang.answeredBy),
          ],
        },
        targets: [
          atMost('added p50 ms (vouch − provider alone)', addedP50, 5),
          atMost('added p99 ms (vouch − provider alone)', addedP99, 20),
          atMost('dead primary: p99 ms', dead.summary.p99, DELAY_MS + 50),
          atMost(`hanging primary: p99 ms (time limit ${TIMEOUT_MS} + 400)`, hang.summary.p99, TIMEOUT_MS + 400),
          atLeast('hanging primary: % of lookups answered by the secondary', bySecondary(hang), 100),
          atMost('non-2xx answers in all scenarios', [healthy, dead, hang].reduce((sum, o) => sum + o.summary.non2xx + o.summary.errors + o.summary.timeouts, 0), 0),
        ],
        result: { connections: CONNECTIONS, delayMs: DELAY_MS, timeoutMs: TIMEOUT_MS, direct, results, addedP50, addedP99 },
      };
    } finally {
      await hanging.stop();
      await provider.stop();
    }
  },
};
