import pg from 'pg';
import { openDatabase } from '../../src/platform/db/database.js';
import { insertPerson } from '../../src/portal/people.js';
import { createSession, SESSION_COOKIE } from '../../src/portal/sessions.js';
import { checkpointAfterSeed, withThrowawayDatabase } from '../lib/database.js';
import { BenchError } from '../lib/errors.js';
import { failures, paced, summaryCells, type LoadRequest, type LoadSummary } from '../lib/load.js';
import { lastJsonLine, NO_RATE_LIMITS, runCommand, startServer, type Env } from '../lib/processes.js';
import { median, round } from '../lib/report.js';
import { insertInBatches, withSealer } from '../lib/sealed.js';
import { atMost, type Section } from '../lib/section.js';

/** Rows of each kind for the organization listed (issue 8: "100,000 rows for the org"). */
const ROWS = 100_000;
/** Issue 8: every /api list answers p99 ≤ 50 ms at 100 req/s. PORTAL_RATE changes the rate. */
const RATE = Number(process.env.PORTAL_RATE || 100);
const TARGET_P99_MS = 50;
const LOOKUP_TYPES = ['bvn_basic', 'bvn_premium', 'bvn_match', 'nin', 'nin_phone', 'vnin', 'drivers_license', 'cac', 'tin', 'biometrics'];

/**
 * One organization's live data, written by SQL: 100,000 identity lookups 30 s apart (ten types,
 * random masked numbers, 10% not found, 0.2% refused for funds) interleaved with 100,000 usage
 * rows of its address verifications, the 100,000 address verifications themselves (a third
 * verified, 1 in 500 cancelled, 1 in 7 not verified, the rest in progress; their personal
 * columns encrypted as Vouch stores them), and another
 * organization's 200,000 lookups beside them, so the planner sees more than one tenant.
 */
export async function seed(databaseUrl: string, orgId: string, otherOrgId: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const started = performance.now();
  try {
    await client.query(
      `insert into usage_events (org_id, mode, type, subject, outcome, price, created_at)
       select o.id, 'live',
         case when o.id = $1 and g % 2 = 0 then 'address' else ($3::text[])[1 + ((g / 2) % array_length($3::text[], 1))] end,
         lpad(floor(random() * 1000)::int::text, 3, '0') || '******' || lpad(floor(random() * 100)::int::text, 2, '0'),
         case when (g / 2) % 500 = 7 then 'insufficient_funds' when (g / 2) % 10 = 3 then 'not_found' else 'success' end,
         case when (g / 2) % 500 = 7 or (g / 2) % 10 = 3 then 0 else 5000 end,
         now() - make_interval(secs => ($4 - g) * 30)
       from generate_series(1, $4::int) g, (values ($1::uuid), ($2::uuid)) o(id)`,
      [orgId, otherOrgId, LOOKUP_TYPES, ROWS * 2],
    );
    // Written as Vouch stores them (bench/lib/sealed.ts): in clear, `vouch serve` would spend the
    // measured runs encrypting them in the background.
    await withSealer(databaseUrl, (seal) =>
      insertInBatches(
        databaseUrl,
        ROWS,
        ['applicant', 'id_key', 'street', 'city', 'landmark'],
        (g) => {
          const idNumber = String(g).padStart(11, '0');
          return [
            seal.json({ firstname: 'Adaeze', lastname: 'Okonkwo', idType: 'NIN', idNumber }),
            seal.identityIndex('NIN', idNumber),
            seal.value(`${g} Admiralty Way`),
            seal.value('Lekki'),
            // Vouch writes every personal column, an empty landmark too (the column's default '' would be clear text).
            seal.value(''),
          ];
        },
        (unnest) => `
          insert into address_verifications
            (org_id, mode, seq, reference, applicant, applicant_id_key, street, city, landmark, lga, state, status, created_at, completed_at, cancelled_at)
          select $1, 'live', g, 'bench-' || g, applicant::jsonb, id_key, street, city, landmark, 'Eti-Osa', 'Lagos',
            case when g % 3 = 0 then 'verified' when g % 500 = 1 then 'cancelled' when g % 7 = 0 then 'not_verified' else 'pending' end,
            now() - make_interval(secs => ($2 - g) * 60),
            case when g % 3 = 0 or (g % 7 = 0 and g % 500 <> 1) then now() - make_interval(secs => ($2 - g) * 60) + interval '2 days' end,
            case when g % 3 <> 0 and g % 500 = 1 then now() - make_interval(secs => ($2 - g) * 60) + interval '1 hour' end
          from ${unnest}`,
        [orgId, ROWS],
      ),
    );
    await client.query(`insert into sequences (org_id, mode, kind, value) values ($1, 'live', 'address', $2)`, [orgId, ROWS]);
    await client.query('vacuum analyze usage_events');
    await client.query('vacuum analyze address_verifications');
    await checkpointAfterSeed(client);
  } finally {
    await client.end();
  }
  return round((performance.now() - started) / 1000, 1);
}

/** A signed-in owner of the organization: the cookie the web app would send. */
export async function signIn(databaseUrl: string, orgId: string): Promise<string> {
  const database = await openDatabase({ url: databaseUrl, poolSize: 1 });
  try {
    const personId = await insertPerson(database.db, { email: 'bench-owner@example.com', name: 'Bench Owner', password: 'a bench passphrase 42', verified: true });
    await database.db.insertInto('memberships').values({ org_id: orgId, person_id: personId, role: 'owner' }).execute();
    const { token } = await createSession(database.db, { personId });
    return `${SESSION_COOKIE}=${token}`;
  } finally {
    await database.close();
  }
}

interface Probe {
  name: string;
  path: string;
  /** What a correct first answer holds: the total, and whether it is capped. */
  expect: { total: number; totalCapped: boolean } | { minTotal: number };
}

function probes(orgId: string): Probe[] {
  const lookups = `/api/orgs/${orgId}/lookups?mode=live`;
  const addresses = `/api/orgs/${orgId}/verifications?mode=live&kind=address`;
  // Lookups are 30 s apart, newest now: one day holds 2,880 of them.
  const dayStart = new Date(Date.now() - 20 * 86_400_000).toISOString();
  const dayEnd = new Date(Date.now() - 19 * 86_400_000).toISOString();
  return [
    { name: 'lookups, page 1', path: lookups, expect: { total: 10_000, totalCapped: true } },
    { name: 'lookups, offset 9,980', path: `${lookups}&offset=9980`, expect: { total: 10_000, totalCapped: true } },
    { name: 'lookups, type=nin', path: `${lookups}&type=nin`, expect: { minTotal: 9_000 } },
    { name: 'lookups, outcome=insufficient_funds (rare)', path: `${lookups}&outcome=insufficient_funds`, expect: { minTotal: 1 } },
    { name: 'lookups, q=223 (search)', path: `${lookups}&q=223`, expect: { minTotal: 1 } },
    { name: 'lookups, one day (from/to)', path: `${lookups}&from=${dayStart}&to=${dayEnd}`, expect: { minTotal: 1 } },
    { name: 'addresses, page 1', path: addresses, expect: { total: ROWS, totalCapped: false } },
    { name: 'addresses, offset 99,980', path: `${addresses}&offset=99980`, expect: { total: ROWS, totalCapped: false } },
    { name: 'addresses, status=cancelled (rare)', path: `${addresses}&status=cancelled`, expect: { minTotal: 1 } },
    { name: 'addresses, status=in_progress', path: `${addresses}&status=in_progress`, expect: { total: 10_000, totalCapped: true } },
    { name: 'addresses, q=bench-5000 (search)', path: `${addresses}&q=bench-5000`, expect: { total: 11, totalCapped: false } },
  ];
}

const COLUMNS = ['list', 'load', 'req/s', 'p50 ms', 'p99 ms', 'requests', 'non-2xx', 'server µs CPU/req'];

export const portal: Section = {
  name: 'portal',
  description: `the portal's /api lists (identity lookups, address verifications) with ${ROWS.toLocaleString('en')} rows of each for one organization, at ${RATE} req/s`,
  async run(context) {
    return withThrowawayDatabase(context.serverUrl, async (databaseUrl) => {
      const env: Env = { DATABASE_URL: databaseUrl, VOUCH_DEMO: 'off', LOG_LEVEL: 'warn' };
      const vouch = (...args: string[]) => runCommand(process.execPath, [context.vouchMain, ...args], { cwd: context.root, env });
      await vouch('migrate', '--json');
      const org = lastJsonLine<{ id: string }>(await vouch('org', 'create', '--name', 'Portal bench', '--risk-level', 'LOW', '--enable', '--json'));
      const other = lastJsonLine<{ id: string }>(await vouch('org', 'create', '--name', 'Neighbour', '--enable', '--json'));
      const seedSeconds = await seed(databaseUrl, org.id, other.id);
      process.stderr.write(`bench: portal: rows written in ${seedSeconds} s\n`);
      const cookie = await signIn(databaseUrl, org.id);

      const server = await startServer({
        name: 'vouch',
        command: process.execPath,
        args: [context.vouchMain, 'serve'],
        cwd: context.root,
        env: { ...env, ...NO_RATE_LIMITS, VOUCH_WORKER: 'off', DATABASE_POOL_SIZE: process.env.DATABASE_POOL_SIZE || '20' },
      });
      try {
        const list = probes(org.id);
        const request = (probe: Probe): LoadRequest => ({ url: `${server.url}${probe.path}`, headers: { cookie } });
        for (const probe of list) {
          const response = await fetch(request(probe).url, { headers: { cookie } });
          const body = (await response.json()) as { total?: number; totalCapped?: boolean; data?: unknown[] };
          const expected = probe.expect;
          const right =
            response.status === 200 &&
            (body.data?.length ?? 0) > 0 &&
            ('minTotal' in expected ? (body.total ?? 0) >= expected.minTotal : body.total === expected.total && body.totalCapped === expected.totalCapped);
          if (!right) throw new BenchError(`${probe.name} answered ${response.status} with an unexpected page: ${JSON.stringify(body).slice(0, 300)}\nthe server's last output:\n${server.output()}`);
        }

        const runs = new Map<string, LoadSummary[]>();
        const rows: (string | number)[][] = [];
        for (let pass = 1; pass <= context.rounds; pass++) {
          for (const probe of list) {
            const summary = await paced(request(probe), { ...context.load, rate: RATE }, server.pid);
            runs.set(probe.name, [...(runs.get(probe.name) ?? []), summary]);
            rows.push([
              probe.name,
              `${RATE} req/s, ≤ ${context.load.connections} conn.${context.rounds > 1 ? ` #${pass}` : ''}`,
              ...summaryCells(summary),
            ]);
          }
        }
        const failed = [...runs.values()].flat().map(failures).filter(Boolean);
        if (failed.length > 0) throw new BenchError(`responses other than 2xx under load: ${failed.join('; ')}`);
        const result = Object.fromEntries(
          [...runs].map(([name, summaries]) => [
            name,
            { p50: median(summaries.map((s) => s.p50)), p99: median(summaries.map((s) => s.p99)), serverUsPerRequest: median(summaries.map((s) => s.cpu?.serverUsPerRequest ?? 0)) },
          ]),
        );
        return {
          section: 'portal',
          table: { columns: COLUMNS, rows },
          targets: Object.entries(result).map(([name, summary]) => atMost(`${name}: p99 ms at ${RATE} req/s`, summary.p99, TARGET_P99_MS)),
          result: { ...context.load, rate: RATE, rounds: context.rounds, rows: ROWS, seedSeconds, runs: result },
        };
      } finally {
        await server.stop();
      }
    });
  },
};
