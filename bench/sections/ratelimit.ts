import net from 'node:net';
import pg from 'pg';
import { withThrowawayDatabase } from '../lib/database.js';
import { BenchError } from '../lib/errors.js';
import { failures, load, type LoadRequest, type LoadSummary } from '../lib/load.js';
import { lastJsonLine, NO_RATE_LIMITS, runCommand, startServer, type Env, type RunningServer } from '../lib/processes.js';
import { median, round } from '../lib/report.js';
import { atLeast, atMost, type BenchContext, type Section, type Target } from '../lib/section.js';

/** The limit the exactness runs count against (per secret, a minute), as in issue 19's report. */
const LIMIT = 60;
const PROCESSES = 2;
const BURST = 200;
/** Paced: this many requests at this rate, alternating between the processes (12 s). */
const PACED_REQUESTS = 120;
const PACED_RATE = 10;
/** Windows are fixed minutes on the clock (docs/rate-limits.md); a run must not straddle two. */
const WINDOW_MS = 60_000;
const RUN_MS = 16_000;
/** The PostgreSQL store may cost at most this much throughput against the Redis store. */
const TARGET_RATIO = 0.9;

const SANDBOX_BVN = '22345678901';
const SANDBOX_APPLICANT = JSON.stringify({ firstname: 'Adaeze', lastname: 'Okonkwo', dob: '14-03-1990' });

interface Store {
  name: 'postgres' | 'redis';
  env: Env;
}

function redisReachable(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port || 6379) });
    socket.setTimeout(1_000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits for the next window when less than a run is left of this one. */
async function freshWindow(): Promise<void> {
  const left = WINDOW_MS - (Date.now() % WINDOW_MS);
  if (left < RUN_MS) await sleep(left + 250);
}

function lookup(server: RunningServer, secret: string): LoadRequest {
  return {
    url: `${server.url}/v1/verifications/identities/bvn/${SANDBOX_BVN}`,
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: SANDBOX_APPLICANT,
  };
}

async function send(request: LoadRequest): Promise<number> {
  const response = await fetch(request.url, { method: request.method ?? 'GET', headers: request.headers ?? {}, body: request.body ?? null });
  await response.arrayBuffer();
  return response.status;
}

interface Admitted {
  requests: number;
  /** Answers other than 429. */
  admitted: number;
  /** Answers other than 200 and 429: a setup problem. */
  other: number;
  /** Seconds from the first request to the first 429. */
  firstLimitedAfter: number | undefined;
}

async function count(sends: { at: number; status: Promise<number> }[], started: number): Promise<Admitted> {
  const answers = await Promise.all(sends.map(async ({ at, status }) => ({ at, status: await status })));
  const limited = answers.filter((answer) => answer.status === 429);
  return {
    requests: answers.length,
    admitted: answers.length - limited.length,
    other: answers.filter((answer) => answer.status !== 200 && answer.status !== 429).length,
    firstLimitedAfter: limited.length > 0 ? round((Math.min(...limited.map((answer) => answer.at)) - started) / 1000, 1) : undefined,
  };
}

async function startPair(context: BenchContext, databaseUrl: string, store: Store, limits: Env): Promise<RunningServer[]> {
  const servers: RunningServer[] = [];
  try {
    for (let i = 0; i < PROCESSES; i++) {
      servers.push(
        await startServer({
          name: `vouch ${store.name} #${i + 1}`,
          command: process.execPath,
          args: [context.vouchMain, 'serve'],
          cwd: context.root,
          env: { DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', VOUCH_DEMO: 'off', VOUCH_WORKER: 'off', ...store.env, ...limits },
        }),
      );
    }
    return servers;
  } catch (err) {
    await Promise.all(servers.map((server) => server.stop()));
    throw err;
  }
}

/** A burst of 200 at once, then 120 paced at 10/s, both spread over the two processes, each for its own secret. */
async function exactness(servers: RunningServer[], burstSecret: string, pacedSecret: string): Promise<{ burst: Admitted; paced: Admitted }> {
  await freshWindow();
  let started = performance.now();
  const burst = await count(
    Array.from({ length: BURST }, (_, i) => ({ at: performance.now(), status: send(lookup(servers[i % PROCESSES]!, burstSecret)) })),
    started,
  );
  started = performance.now();
  const sends: { at: number; status: Promise<number> }[] = [];
  for (let i = 0; i < PACED_REQUESTS; i++) {
    const due = started + (i * 1000) / PACED_RATE;
    await sleep(Math.max(0, due - performance.now()));
    sends.push({ at: performance.now(), status: send(lookup(servers[i % PROCESSES]!, pacedSecret)) });
  }
  return { burst, paced: await count(sends, started) };
}

/** Rows of `rate_limit_counters` inserted or updated so far, from PostgreSQL's statistics. */
async function counterWrites(databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ writes: string }>(`select n_tup_ins + n_tup_upd as writes from pg_stat_user_tables where relname = 'rate_limit_counters'`);
    return Number(rows[0]?.writes ?? 0);
  } finally {
    await client.end();
  }
}

interface Throughput {
  reqPerSec: number;
  p50: number;
  p99: number;
  requests: number;
  /** Rows of the shared counters written per 1,000 requests (0 for Redis). */
  writesPer1000: number;
  serverUsPerRequest: number | undefined;
}

/** Both processes loaded at once (half the connections each), at a limit no request reaches. */
async function throughput(context: BenchContext, databaseUrl: string, servers: RunningServer[], secret: string): Promise<Throughput> {
  const settings = { ...context.load, connections: Math.max(1, Math.floor(context.load.connections / PROCESSES)) };
  // The warm-up apart, so its counter writes stay out of the figure: PostgreSQL's backends report
  // their statistics within a second of going idle.
  if (settings.warmup > 0) await Promise.all(servers.map((server) => load(lookup(server, secret), { ...settings, duration: settings.warmup, warmup: 0 })));
  await sleep(1_500);
  const before = await counterWrites(databaseUrl);
  const runs = await Promise.all(servers.map((server) => load(lookup(server, secret), { ...settings, warmup: 0 }, server.pid)));
  await sleep(1_500);
  const writes = (await counterWrites(databaseUrl)) - before;
  const failed = runs.map(failures).filter(Boolean);
  if (failed.length > 0) throw new BenchError(`responses other than 2xx under load: ${failed.join('; ')}`);
  const requests = runs.reduce((sum, run) => sum + run.requests, 0);
  const cpu = runs.map((run) => run.cpu?.serverUsPerRequest).filter((value) => value !== undefined);
  return {
    reqPerSec: round(runs.reduce((sum, run: LoadSummary) => sum + run.reqPerSec, 0), 1),
    p50: Math.max(...runs.map((run) => run.p50)),
    p99: Math.max(...runs.map((run) => run.p99)),
    requests,
    writesPer1000: round((writes * 1000) / Math.max(requests, 1), 2),
    serverUsPerRequest: cpu.length === runs.length ? Math.round(median(cpu)) : undefined,
  };
}

const COLUMNS = ['store', 'run', 'requests', `admitted (limit ${LIMIT})`, 'first 429 after s', 'req/s', 'p50 / p99 ms', 'counter rows written /1k req', 'server µs CPU/req'];

export const ratelimit: Section = {
  name: 'ratelimit',
  description: `rate limits across ${PROCESSES} API processes: admitted at ${LIMIT}/min (burst, paced) and req/s at a limit never reached, PostgreSQL store against Redis store`,
  async run(context) {
    const redisUrl = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
    const stores: Store[] = [{ name: 'postgres', env: { REDIS_URL: '' } }];
    if (await redisReachable(redisUrl)) stores.push({ name: 'redis', env: { REDIS_URL: redisUrl } });
    else process.stderr.write(`bench: ratelimit: Redis unreachable at ${redisUrl}: the PostgreSQL store alone\n`);

    return withThrowawayDatabase(context.serverUrl, async (databaseUrl) => {
      const vouch = (...args: string[]) => runCommand(process.execPath, [context.vouchMain, ...args], { cwd: context.root, env: { DATABASE_URL: databaseUrl, VOUCH_DEMO: 'off', LOG_LEVEL: 'warn' } });
      await vouch('migrate', '--json');
      const secret = async (name: string) => lastJsonLine<{ testSecret: string }>(await vouch('org', 'create', '--name', name, '--enable', '--json')).testSecret;

      const rows: (string | number)[][] = [];
      const targets: Target[] = [];
      const result: Record<string, unknown> = { limit: LIMIT, processes: PROCESSES, burst: BURST, paced: { requests: PACED_REQUESTS, perSecond: PACED_RATE } };
      for (const store of stores) {
        const servers = await startPair(context, databaseUrl, store, { VOUCH_RATE_LIMIT: String(LIMIT), VOUCH_RATE_LIMIT_PER_ADDRESS: '100000000' });
        try {
          const runs = await exactness(servers, await secret(`${store.name} burst`), await secret(`${store.name} paced`));
          for (const [name, run] of Object.entries(runs)) {
            if (run.other > 0) throw new BenchError(`${store.name} ${name}: ${run.other} answers other than 200 and 429`);
            rows.push([store.name, name, run.requests, run.admitted, run.firstLimitedAfter ?? '-', '', '', '', '']);
            targets.push(atMost(`${store.name} ${name}: admitted (limit ${LIMIT} + 1 per process)`, run.admitted, LIMIT + PROCESSES));
          }
          result[store.name] = { ...runs };
        } finally {
          await Promise.all(servers.map((server) => server.stop()));
        }
      }

      const measured: Record<string, Throughput[]> = {};
      const loaded = await secret('loaded');
      for (let pass = 1; pass <= context.rounds; pass++) {
        // Alternating, so both stores see the same machine state.
        for (const store of stores) {
          const servers = await startPair(context, databaseUrl, store, NO_RATE_LIMITS);
          try {
            const run = await throughput(context, databaseUrl, servers, loaded);
            (measured[store.name] ??= []).push(run);
            const suffix = context.rounds > 1 ? ` #${pass}` : '';
            rows.push([store.name, `high limit${suffix}`, run.requests, '', '', round(run.reqPerSec, 0), `${run.p50} / ${run.p99}`, run.writesPer1000, run.serverUsPerRequest ?? '-']);
          } finally {
            await Promise.all(servers.map((server) => server.stop()));
          }
        }
      }
      const reqPerSec = Object.fromEntries(Object.entries(measured).map(([name, runs]) => [name, round(median(runs.map((run) => run.reqPerSec)), 1)]));
      result.throughput = measured;
      if (reqPerSec.redis) {
        const ratio = round(reqPerSec.postgres! / reqPerSec.redis, 3);
        result.ratio = ratio;
        rows.push(['ratio postgres/redis', 'high limit', '', '', '', ratio, '', '', '']);
        targets.push(atLeast('req/s, PostgreSQL store ÷ Redis store', ratio, TARGET_RATIO));
      }
      return { section: 'ratelimit', table: { columns: COLUMNS, rows }, targets, result };
    });
  },
};
