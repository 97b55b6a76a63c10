import pg from 'pg';
import { withThrowawayDatabase } from '../lib/database.js';
import { BenchError } from '../lib/errors.js';
import { failures, load, type LoadRequest, type LoadSummary } from '../lib/load.js';
import { lastJsonLine, runCommand, startServer, type Env } from '../lib/processes.js';
import { median, round } from '../lib/report.js';
import { atLeast, atMost, type Section } from '../lib/section.js';

/** Address verifications of the one organization listed. */
const ROWS = 1_000_000;
const DEEP_OFFSET = 100_000;
const TARGET_P99_MS = 20;
/** The deep page must keep at least half the first page's throughput ("within 2×"). */
const TARGET_RATIO = 0.5;
/** A second, lighter load shows latency below saturation (reported, not a target). */
const LIGHT_CONNECTIONS = 10;

/**
 * One statement writes the million rows: dense `seq` 1..N (newest = N), a third of them
 * verified with a position, a neighbour and two photos, the rest in progress; then the
 * sequence counter the list's total and window come from.
 */
async function seed(databaseUrl: string, orgId: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const started = performance.now();
  try {
    await client.query(
      `insert into address_verifications
         (org_id, mode, seq, reference, applicant, applicant_id_key, street, city, landmark, lga, state, status,
          latitude, longitude, photo_ids, neighbor, created_at, completed_at, visit_started_at)
       select $1, 'live', g, 'bench-' || g,
         jsonb_build_object('firstname', 'Adaeze', 'lastname', 'Okonkwo', 'middlename', 'Chiamaka', 'phone', '+2348031234567',
                            'idType', 'NIN', 'idNumber', lpad(g::text, 11, '0'), 'birthdate', '14-03-1990'),
         md5(g::text), g || ' Admiralty Way', 'Lekki', 'Opposite the bank', 'Eti-Osa', 'Lagos',
         case when g % 3 = 0 then 'verified' else 'pending' end,
         case when g % 3 = 0 then 6.4474 end, case when g % 3 = 0 then 3.4723 end,
         case when g % 3 = 0 then array[gen_random_uuid(), gen_random_uuid()] else '{}'::uuid[] end,
         case when g % 3 = 0 then '{"name":"Chinedu Eze","comment":"Has lived here for five years","phone":"+2348029876543"}'::jsonb end,
         now() - make_interval(secs => $2 - g),
         case when g % 3 = 0 then now() - make_interval(secs => $2 - g) + interval '2 days' end,
         case when g % 3 = 0 then now() - make_interval(secs => $2 - g) + interval '2 days' end
       from generate_series(1, $2::int) g`,
      [orgId, ROWS],
    );
    await client.query(
      `insert into sequences (org_id, mode, kind, value) values ($1, 'live', 'address', $2)
       on conflict (org_id, mode, kind) do update set value = excluded.value`,
      [orgId, ROWS],
    );
    await client.query('vacuum analyze address_verifications');
  } finally {
    await client.end();
  }
  return round((performance.now() - started) / 1000, 1);
}

const COLUMNS = ['page', 'req/s', 'p50 ms', 'p99 ms', 'requests', 'non-2xx', 'server µs CPU/req'];

function row(name: string, summary: LoadSummary) {
  return [name, round(summary.reqPerSec, 0), summary.p50, summary.p99, summary.requests, summary.non2xx + summary.errors + summary.timeouts, summary.cpu?.serverUsPerRequest ?? '-'];
}

function aggregate(runs: LoadSummary[]) {
  return {
    reqPerSec: round(median(runs.map((run) => run.reqPerSec)), 1),
    p50: median(runs.map((run) => run.p50)),
    p99: median(runs.map((run) => run.p99)),
    failures: runs.map(failures).filter(Boolean),
  };
}

export const lists: Section = {
  name: 'lists',
  description: `GET /v1/verifications/addresses, page 1 against offset ${DEEP_OFFSET}, with ${ROWS.toLocaleString('en')} address rows for one organization`,
  async run(context) {
    return withThrowawayDatabase(context.serverUrl, async (databaseUrl) => {
      const env: Env = { DATABASE_URL: databaseUrl, VOUCH_DEMO: 'off', LOG_LEVEL: 'warn' };
      const vouch = (...args: string[]) => runCommand(process.execPath, [context.vouchMain, ...args], { cwd: context.root, env });
      await vouch('migrate', '--json');
      const org = lastJsonLine<{ id: string; liveSecret: string }>(await vouch('org', 'create', '--name', 'Lists', '--risk-level', 'LOW', '--enable', '--json'));
      const seedSeconds = await seed(databaseUrl, org.id);
      process.stderr.write(`bench: lists: ${ROWS} rows written in ${seedSeconds} s\n`);

      const server = await startServer({
        name: 'vouch',
        command: process.execPath,
        args: [context.vouchMain, 'serve'],
        cwd: context.root,
        env: { ...env, VOUCH_WORKER: 'off', DATABASE_POOL_SIZE: process.env.DATABASE_POOL_SIZE || '20' },
      });
      try {
        const headers = { authorization: `Bearer ${org.liveSecret}` };
        const pages: [string, LoadRequest][] = [
          ['page 1', { url: `${server.url}/v1/verifications/addresses`, headers }],
          [`offset ${DEEP_OFFSET}`, { url: `${server.url}/v1/verifications/addresses?offset=${DEEP_OFFSET}`, headers }],
        ];
        for (const [name, request] of pages) {
          const response = await fetch(request.url, { headers });
          const body = (await response.json()) as { _pagination?: { total: number }; data?: { reference: string }[] };
          const offset = name === 'page 1' ? 0 : DEEP_OFFSET;
          if (response.status !== 200 || body._pagination?.total !== ROWS || body.data?.[0]?.reference !== `bench-${ROWS - offset}`) {
            throw new BenchError(`${name} answered ${response.status} with an unexpected page: ${JSON.stringify(body).slice(0, 300)}`);
          }
        }
        const runs: Record<'first' | 'deep' | 'lightFirst' | 'lightDeep', LoadSummary[]> = { first: [], deep: [], lightFirst: [], lightDeep: [] };
        const light = { ...context.load, connections: Math.min(LIGHT_CONNECTIONS, context.load.connections) };
        const rows = [];
        // Page 1 and the deep page alternate, so both see the same machine state.
        for (let pass = 1; pass <= context.rounds; pass++) {
          const suffix = context.rounds > 1 ? ` #${pass}` : '';
          for (const [settings, firstKey, deepKey, label] of [
            [context.load, 'first', 'deep', ''],
            [light, 'lightFirst', 'lightDeep', `, ${light.connections} conn.`],
          ] as const) {
            const first = await load(pages[0]![1], settings, server.pid);
            const deep = await load(pages[1]![1], settings, server.pid);
            runs[firstKey].push(first);
            runs[deepKey].push(deep);
            rows.push(row(`${pages[0]![0]}${label}${suffix}`, first), row(`${pages[1]![0]}${label}${suffix}`, deep));
          }
        }
        const [first, deep, lightFirst, lightDeep] = [runs.first, runs.deep, runs.lightFirst, runs.lightDeep].map(aggregate) as [
          ReturnType<typeof aggregate>, ReturnType<typeof aggregate>, ReturnType<typeof aggregate>, ReturnType<typeof aggregate>,
        ];
        const failed = [first, deep, lightFirst, lightDeep].flatMap((summary) => summary.failures);
        if (failed.length > 0) throw new BenchError(`responses other than 2xx under load: ${failed.join('; ')}`);
        const ratio = round(deep.reqPerSec / first.reqPerSec, 3);
        return {
          section: 'lists',
          table: { columns: COLUMNS, rows: [...rows, [`ratio deep/page 1 (${context.load.connections} conn.)`, ratio, '', '', '', '', '']] },
          targets: [
            atLeast(`req/s at offset ${DEEP_OFFSET} ÷ req/s at page 1`, ratio, TARGET_RATIO),
            atMost('page 1 p99 ms', first.p99, TARGET_P99_MS),
            atMost(`offset ${DEEP_OFFSET} p99 ms`, deep.p99, TARGET_P99_MS),
          ],
          result: { ...context.load, rounds: context.rounds, rows: ROWS, seedSeconds, first, deep, ratio, light: { connections: light.connections, first: lightFirst, deep: lightDeep } },
        };
      } finally {
        await server.stop();
      }
    });
  },
};
