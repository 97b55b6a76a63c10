import pg from 'pg';
import path from 'node:path';
import { PROBE_CONNECTIONS, probeCommits } from '../lib/commit-probe.js';
import { checkpointAfterSeed, withThrowawayDatabase } from '../lib/database.js';
import { BenchError } from '../lib/errors.js';
import { failures, load, paced, summaryCells, type LoadRequest, type LoadSummary } from '../lib/load.js';
import { lastJsonLine, NO_RATE_LIMITS, profilerArgs, runCommand, startServer, type Env, type RunningServer } from '../lib/processes.js';
import { median, round } from '../lib/report.js';
import { insertInBatches, withSealer } from '../lib/sealed.js';
import { atLeast, atMost, type Section } from '../lib/section.js';

/** Address verifications of the one organization listed. */
const ROWS = 1_000_000;
const DEEP_OFFSET = 100_000;
const TARGET_P99_MS = 20;
/** The deep page must keep at least half the first page's throughput ("within 2×"). */
const TARGET_RATIO = 0.5;
/** Issue 22: Vouch ÷ the decrypting baseline, saturated req/s, at each depth. */
const TARGET_AGAINST_BASELINE = 0.8;
/** Issue 22: at the paced rate, Vouch's p99 at most this many times the baseline's, at each depth. */
const TARGET_P99_FACTOR = 1.5;
/**
 * Latency is measured open-loop at a steady rate below saturation (`paced`): at saturation a
 * closed loop of N connections measures its own queue (N ÷ throughput), not the endpoint.
 * Saturated runs are reported too, for Vouch and the bare baseline. LISTS_PACED_RATE changes it.
 */
const PACED_RATE = Number(process.env.LISTS_PACED_RATE || 500);
/**
 * The million rows, written as Vouch stores them (bench/lib/sealed.ts: personal columns
 * encrypted, the ID a blind index): dense `seq` 1..N (newest = N), a third of them verified with
 * a position, a neighbour and two photos, the rest in progress; then the sequence counter the
 * list's total and window come from.
 */
export async function seed(databaseUrl: string, orgId: string): Promise<number> {
  const started = performance.now();
  await withSealer(databaseUrl, (seal) =>
    insertInBatches(
      databaseUrl,
      ROWS,
      ['applicant', 'id_key', 'street', 'city', 'landmark', 'latitude', 'longitude', 'neighbor'],
      (g) => {
        const idNumber = String(g).padStart(11, '0');
        const verified = g % 3 === 0;
        return [
          seal.json({ firstname: 'Adaeze', lastname: 'Okonkwo', middlename: 'Chiamaka', phone: '+2348031234567', idType: 'NIN', idNumber, birthdate: '14-03-1990' }),
          seal.identityIndex('NIN', idNumber),
          seal.value(`${g} Admiralty Way`),
          seal.value('Lekki'),
          seal.value('Opposite the bank'),
          verified ? seal.value(6.4474) : null,
          verified ? seal.value(3.4723) : null,
          verified ? seal.json({ name: 'Chinedu Eze', comment: 'Has lived here for five years', phone: '+2348029876543' }) : null,
        ];
      },
      (unnest) => `
        insert into address_verifications
          (org_id, mode, seq, reference, applicant, applicant_id_key, street, city, landmark, lga, state, status,
           latitude, longitude, photo_ids, neighbor, created_at, completed_at, visit_started_at)
        select $1, 'live', g, 'bench-' || g, applicant::jsonb, id_key, street, city, landmark, 'Eti-Osa', 'Lagos',
          case when g % 3 = 0 then 'verified' else 'pending' end, latitude, longitude,
          case when g % 3 = 0 then array[gen_random_uuid(), gen_random_uuid()] else '{}'::uuid[] end,
          neighbor::jsonb,
          now() - make_interval(secs => $2 - g),
          case when g % 3 = 0 then now() - make_interval(secs => $2 - g) + interval '2 days' end,
          case when g % 3 = 0 then now() - make_interval(secs => $2 - g) + interval '2 days' end
        from ${unnest}`,
      [orgId, ROWS],
    ),
  );
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(
      `insert into sequences (org_id, mode, kind, value) values ($1, 'live', 'address', $2)
       on conflict (org_id, mode, kind) do update set value = excluded.value`,
      [orgId, ROWS],
    );
    await client.query('vacuum analyze address_verifications');
    // The million rows' pages and WAL still being written out would stall the commits of the
    // runs after them (the lists' access-log rows), not the baseline's reads.
    await checkpointAfterSeed(client);
  } finally {
    await client.end();
  }
  return round((performance.now() - started) / 1000, 1);
}

const COLUMNS = ['server', 'page', 'load', 'req/s', 'p50 ms', 'p99 ms', 'requests', 'non-2xx', 'server µs CPU/req'];

/**
 * `logged` is the baseline's page with the access-log row Vouch writes for it, in the same statement
 * (bench/baseline-server.ts). It shows what the log's durable write costs a server that does nothing
 * else, and is reported beside the targets, which stay against the bare baseline. It runs paced
 * only, after every round: its writes (the log's index, its WAL, the autovacuum they call) stay out
 * of the runs the targets read (docs/benchmarks.md, eighteenth session).
 */
type Server = 'vouch' | 'baseline' | 'logged';
const SERVER_NAMES: Record<Server, string> = { vouch: 'vouch', baseline: 'baseline', logged: 'baseline + access log' };
type Depth = 'first' | 'deep';
type Load = 'saturated' | 'paced';
type RunKey = `${Server} ${Depth} ${Load}`;

function aggregate(runs: LoadSummary[]) {
  return {
    reqPerSec: round(median(runs.map((run) => run.reqPerSec)), 1),
    p50: median(runs.map((run) => run.p50)),
    p99: median(runs.map((run) => run.p99)),
    serverUsPerRequest: median(runs.map((run) => run.cpu?.serverUsPerRequest ?? 0)),
    failures: runs.map(failures).filter(Boolean),
  };
}

/**
 * The order of a round's four runs of one kind: the two servers take turns at each depth, and who
 * goes first alternates from round to round (ABBA). The first run of a kind inherits what the runs
 * before it left (the saturated runs' writes still being flushed, their garbage still collected), so
 * with a fixed order one server would always take it: Vouch's page 1 did, and its p99 ratio was the
 * worse of the two depths in every run of the eleventh and twelfth sessions (docs/benchmarks.md).
 */
function runOrder(pass: number): [Server, Depth][] {
  return pass % 2 === 1
    ? [['vouch', 'first'], ['baseline', 'first'], ['baseline', 'deep'], ['vouch', 'deep']]
    : [['baseline', 'first'], ['vouch', 'first'], ['vouch', 'deep'], ['baseline', 'deep']];
}

async function startServers(root: string, vouchMain: string, env: Env): Promise<Record<'vouch' | 'baseline', RunningServer>> {
  // Both pools the same size; DATABASE_POOL_SIZE in the environment changes both.
  const pool = process.env.DATABASE_POOL_SIZE || '20';
  const vouch = await startServer({
    name: 'vouch',
    command: process.execPath,
    args: [...profilerArgs(), vouchMain, 'serve'],
    cwd: root,
    env: { ...env, ...NO_RATE_LIMITS, VOUCH_WORKER: 'off', DATABASE_POOL_SIZE: pool },
  });
  try {
    const baseline = await startServer({
      name: 'baseline',
      command: process.execPath,
      args: ['--import', 'tsx', path.join(root, 'bench/baseline-server.ts')],
      cwd: root,
      env: { DATABASE_URL: env.DATABASE_URL!, DATABASE_POOL_SIZE: pool },
    });
    return { vouch, baseline };
  } catch (err) {
    await vouch.stop();
    throw err;
  }
}

export const lists: Section = {
  name: 'lists',
  // Its targets are ratios of p99 latencies at 500 requests/s, 50 of 5,000 requests a run: one
  // round's ratio moved from 1.21 to 1.81 on one quiet machine (docs/benchmarks.md, twenty-eighth
  // session). Three paired rounds and their medians read the same thing steadily.
  defaultRounds: 3,
  description: `GET /v1/verifications/addresses, page 1 against offset ${DEEP_OFFSET}, with ${ROWS.toLocaleString('en')} address rows for one organization, beside a bare baseline`,
  async run(context) {
    return withThrowawayDatabase(context.serverUrl, async (databaseUrl) => {
      const env: Env = { DATABASE_URL: databaseUrl, VOUCH_DEMO: 'off', LOG_LEVEL: 'warn' };
      const vouch = (...args: string[]) => runCommand(process.execPath, [context.vouchMain, ...args], { cwd: context.root, env });
      await vouch('migrate', '--json');
      const org = lastJsonLine<{ id: string; liveSecret: string }>(await vouch('org', 'create', '--name', 'Lists', '--risk-level', 'LOW', '--enable', '--json'));
      const seedSeconds = await seed(databaseUrl, org.id);
      process.stderr.write(`bench: lists: ${ROWS} rows written in ${seedSeconds} s\n`);

      const servers = await startServers(context.root, context.vouchMain, env);
      try {
        const headers = { authorization: `Bearer ${org.liveSecret}` };
        const baselinePage = (path: string, depth: Depth) => ({ url: `${servers.baseline.url}/${path}/${org.id}${depth === 'deep' ? `?offset=${DEEP_OFFSET}` : ''}` });
        const requests: Record<Server, Record<Depth, LoadRequest>> = {
          vouch: {
            first: { url: `${servers.vouch.url}/v1/verifications/addresses`, headers },
            deep: { url: `${servers.vouch.url}/v1/verifications/addresses?offset=${DEEP_OFFSET}`, headers },
          },
          baseline: { first: baselinePage('addresses', 'first'), deep: baselinePage('addresses', 'deep') },
          logged: { first: baselinePage('addresses-logged', 'first'), deep: baselinePage('addresses-logged', 'deep') },
        };
        const pidOf = (server: Server) => servers[server === 'vouch' ? 'vouch' : 'baseline'].pid;
        for (const server of ['vouch', 'baseline', 'logged'] as const) {
          for (const depth of ['first', 'deep'] as const) {
            const request = requests[server][depth];
            const response = await fetch(request.url, request.headers ? { headers: request.headers } : {});
            const body = (await response.json()) as { _pagination?: { total: number }; data?: { reference: string }[] };
            const offset = depth === 'first' ? 0 : DEEP_OFFSET;
            if (response.status !== 200 || body._pagination?.total !== ROWS || body.data?.length !== 20 || body.data[0]?.reference !== `bench-${ROWS - offset}`) {
              throw new BenchError(`${server} ${depth} page answered ${response.status} with an unexpected page: ${JSON.stringify(body).slice(0, 300)}`);
            }
          }
        }

        const drive = (loadKind: Load, request: LoadRequest, pid: number) =>
          loadKind === 'saturated' ? load(request, context.load, pid) : paced(request, { ...context.load, rate: PACED_RATE }, pid);
        const runs = new Map<RunKey, LoadSummary[]>();
        const rows: (string | number)[][] = [];
        const measure = async (server: Server, depth: Depth, loadKind: Load, pass: number) => {
          const summary = await drive(loadKind, requests[server][depth], pidOf(server));
          const key: RunKey = `${server} ${depth} ${loadKind}`;
          runs.set(key, [...(runs.get(key) ?? []), summary]);
          rows.push([
            SERVER_NAMES[server],
            depth === 'first' ? 'page 1' : `offset ${DEEP_OFFSET}`,
            `${loadKind === 'paced' ? `${PACED_RATE} req/s, ≤ ${context.load.connections} conn.` : `${context.load.connections} conn.`}${context.rounds > 1 ? ` #${pass}` : ''}`,
            ...summaryCells(summary),
          ]);
        };
        // Every combination in turn (runOrder), round after round, so all see the same machine state.
        for (let pass = 1; pass <= context.rounds; pass++) {
          for (const loadKind of ['saturated', 'paced'] as const) {
            for (const [server, depth] of runOrder(pass)) await measure(server, depth, loadKind, pass);
          }
        }
        for (let pass = 1; pass <= context.rounds; pass++) {
          for (const depth of pass % 2 === 1 ? (['first', 'deep'] as const) : (['deep', 'first'] as const)) await measure('logged', depth, 'paced', pass);
        }
        // Last, beside no server's load: what the log's commit costs the machine, without the server.
        const commits = await probeCommits(databaseUrl, { rate: PACED_RATE, seconds: context.load.duration });
        for (const [kind, label] of [['read', 'select 1'], ['commit', 'one-row insert, committed']] as const) {
          const probe = commits[kind];
          rows.push(['PostgreSQL alone', label, `${PACED_RATE}/s, ${PROBE_CONNECTIONS} conn.`, '', probe.p50, probe.p99, probe.count, '', '']);
        }
        const result = Object.fromEntries([...runs].map(([key, summaries]) => [key, aggregate(summaries)])) as Record<RunKey, ReturnType<typeof aggregate>>;
        const failed = Object.values(result).flatMap((summary) => summary.failures);
        if (failed.length > 0) throw new BenchError(`responses other than 2xx under load: ${failed.join('; ')}`);
        const ratio = round(result['vouch deep saturated'].reqPerSec / result['vouch first saturated'].reqPerSec, 3);
        const againstBaseline = round(result['vouch first saturated'].reqPerSec / result['baseline first saturated'].reqPerSec, 3);
        const deepAgainstBaseline = round(result['vouch deep saturated'].reqPerSec / result['baseline deep saturated'].reqPerSec, 3);
        const p99Factor = (depth: Depth, against: Server = 'baseline') => round(result[`vouch ${depth} paced`].p99 / Math.max(result[`${against} ${depth} paced`].p99, 0.1), 2);
        rows.push(['vouch', `offset ${DEEP_OFFSET} ÷ page 1`, 'req/s, saturated', ratio, '', '', '', '', '']);
        rows.push(['vouch ÷ baseline', 'page 1', 'req/s, saturated', againstBaseline, '', '', '', '', '']);
        rows.push(['vouch ÷ baseline', `offset ${DEEP_OFFSET}`, 'req/s, saturated', deepAgainstBaseline, '', '', '', '', '']);
        rows.push(['vouch ÷ baseline', 'page 1', `p99 at ${PACED_RATE} req/s`, p99Factor('first'), '', '', '', '', '']);
        rows.push(['vouch ÷ baseline', `offset ${DEEP_OFFSET}`, `p99 at ${PACED_RATE} req/s`, p99Factor('deep'), '', '', '', '', '']);
        rows.push([`vouch ÷ ${SERVER_NAMES.logged}`, 'page 1', `p99 at ${PACED_RATE} req/s`, p99Factor('first', 'logged'), '', '', '', '', '']);
        rows.push([`vouch ÷ ${SERVER_NAMES.logged}`, `offset ${DEEP_OFFSET}`, `p99 at ${PACED_RATE} req/s`, p99Factor('deep', 'logged'), '', '', '', '', '']);
        return {
          section: 'lists',
          table: { columns: COLUMNS, rows },
          targets: [
            atLeast(`req/s at offset ${DEEP_OFFSET} ÷ req/s at page 1`, ratio, TARGET_RATIO),
            atMost(`page 1 p99 ms at ${PACED_RATE} req/s`, result['vouch first paced'].p99, TARGET_P99_MS),
            atMost(`offset ${DEEP_OFFSET} p99 ms at ${PACED_RATE} req/s`, result['vouch deep paced'].p99, TARGET_P99_MS),
            atLeast('page 1 req/s, Vouch ÷ baseline (saturated)', againstBaseline, TARGET_AGAINST_BASELINE),
            atLeast(`offset ${DEEP_OFFSET} req/s, Vouch ÷ baseline (saturated)`, deepAgainstBaseline, TARGET_AGAINST_BASELINE),
            atMost(`page 1 p99 at ${PACED_RATE} req/s, Vouch ÷ baseline`, p99Factor('first'), TARGET_P99_FACTOR),
            atMost(`offset ${DEEP_OFFSET} p99 at ${PACED_RATE} req/s, Vouch ÷ baseline`, p99Factor('deep'), TARGET_P99_FACTOR),
          ],
          result: { ...context.load, pacedRate: PACED_RATE, rounds: context.rounds, rows: ROWS, seedSeconds, ratio, againstBaseline, deepAgainstBaseline, p99Factor: { first: p99Factor('first'), deep: p99Factor('deep') }, p99AgainstLogged: { first: p99Factor('first', 'logged'), deep: p99Factor('deep', 'logged') }, commitProbe: commits, runs: result },
        };
      } finally {
        await Promise.all([servers.vouch.stop(), servers.baseline.stop()]);
      }
    });
  },
};
