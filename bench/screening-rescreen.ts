/**
 * `npx tsx bench/screening-rescreen.ts [--subjects N] [--changed N] [--server URL] [--json]`
 *
 * Monitoring end to end on PostgreSQL (issue 51's target: re-screening 1,000,000 monitored
 * subjects after a change of 100 entries in 10 minutes or less). In a throwaway database on the
 * server (default postgres://postgres@127.0.0.1:5432/test):
 * 1. a list of `changed` synthetic entities is imported as version 1 of a source;
 * 2. N live monitored screenings (default 1,000,000) are written as Vouch stores them, each
 *    subject sealed under the database's data key, each screened against version 1;
 * 3. version 2 replaces every entity with another `changed` ones (a change of 2 × `changed` rows:
 *    `changed` removed, `changed` added);
 * 4. `rescreenVersion` re-screens every subject against what version 2 added, timed: wall time,
 *    this process's CPU, and the hits and `screening.match` events it stored.
 * The seed is not timed. The database server's own CPU is not in the process figure.
 */
import { parseArgs } from 'node:util';
import { AccountsService } from '../src/accounts/service.js';
import { loadConfig } from '../src/config.js';
import { openKeyring } from '../src/platform/crypto/open.js';
import { openDatabase } from '../src/platform/db/database.js';
import { migrate } from '../src/platform/db/migrate.js';
import type { ScreeningSubject } from '../src/screening/entity.js';
import { importList } from '../src/screening/lists/import.js';
import { setWebhookEndpoint } from '../src/webhooks/endpoints.js';
import { rescreenVersion } from '../src/screening/monitoring.js';
import type { StoredSubject } from '../src/screening/tables.js';
import { assertPostgresReachable, DEFAULT_SERVER_URL, displayUrl, withThrowawayDatabase } from './lib/database.js';
import { listCsv, seededRandom, syntheticEntities, syntheticSubject } from './lib/screening-names.js';

const { values: args } = parseArgs({
  options: {
    subjects: { type: 'string', default: '1000000' },
    changed: { type: 'string', default: '100' },
    server: { type: 'string', default: process.env.DATABASE_URL ?? DEFAULT_SERVER_URL },
    json: { type: 'boolean', default: false },
  },
});
const SUBJECTS = Number(args.subjects);
const CHANGED = Number(args.changed);
const SOURCE = 'bench-watch';
const BATCH = 2_000;

function stored(subject: ScreeningSubject): StoredSubject {
  const [name = '', ...aliases] = subject.names;
  const out: StoredSubject = { type: subject.type, name, aliases };
  if (subject.birthDate !== undefined) out.dob = subject.birthDate;
  if (subject.nationality !== undefined) out.nationality = subject.nationality;
  return out;
}

async function main(): Promise<void> {
  if (!Number.isSafeInteger(SUBJECTS) || SUBJECTS < 1 || !Number.isSafeInteger(CHANGED) || CHANGED < 1) throw new Error('--subjects and --changed take whole numbers of 1 or more');
  await assertPostgresReachable(args.server);
  await withThrowawayDatabase(args.server, async (url) => {
    const database = await openDatabase({ url, poolSize: 4 });
    try {
      await migrate(database.db);
      await openKeyring(database, loadConfig());
      const db = database.db;
      const org = await new AccountsService(db).create({ name: 'Rescreen bench', enabled: true });
      // With an endpoint, each screening.match delivery keeps its body (the screening and its hits), as in use.
      await setWebhookEndpoint(db, { orgId: org.id, mode: 'live' }, { url: 'http://127.0.0.1:9/hooks' }, { allowPrivateUrls: true });

      // Version 1, and the subjects screened against it. Some subjects share the entities' names,
      // as customers of a bank would share names with a list.
      const first = [...syntheticEntities(CHANGED, 11, SOURCE)];
      await importList(db, { source: SOURCE, format: 'csv', files: { main: listCsv(first) } });
      const random = seededRandom(7);
      const seedStarted = Date.now();
      const lists = JSON.stringify([{ source: SOURCE, version: 1 }]);
      const now = new Date();
      for (let start = 0; start < SUBJECTS; start += BATCH) {
        const rows = [];
        for (let i = start; i < Math.min(SUBJECTS, start + BATCH); i++) {
          rows.push({
            org_id: org.id,
            mode: 'live' as const,
            seq: i + 1,
            reference: `cust-${i + 1}`,
            subject: JSON.stringify(stored(syntheticSubject(random))),
            metadata: '{}',
            lists,
            sources: null,
            threshold: 0.8,
            state: 'clear' as const,
            monitored: true,
            monitoring_paid_until: new Date(now.getTime() + 30 * 86_400_000),
            price: 0,
            created_at: now,
            updated_at: now,
          });
        }
        await db.insertInto('screenings').values(rows).execute();
      }
      const seedSeconds = (Date.now() - seedStarted) / 1000;

      // Version 2: every entity replaced by another.
      const second = [...syntheticEntities(CHANGED, 12, SOURCE)].map((entity, i) => ({ ...entity, id: `B2-${i + 1}` }));
      const imported = await importList(db, { source: SOURCE, format: 'csv', files: { main: listCsv(second) }, maxShrink: 1 });

      const cpu = process.cpuUsage();
      const started = process.hrtime.bigint();
      const result = await rescreenVersion({ db }, SOURCE, imported.version);
      const wallSeconds = Number(process.hrtime.bigint() - started) / 1e9;
      const used = process.cpuUsage(cpu);
      const events = await db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll<string>().as('n')).where('event_type', '=', 'screening.match').executeTakeFirst();
      const report = {
        server: displayUrl(args.server),
        subjects: SUBJECTS,
        change: { removed: imported.removed, added: imported.added, changed: imported.changed },
        seedSeconds,
        rescreen: { ...result, wallSeconds, cpuSeconds: (used.user + used.system) / 1e6, deliveries: Number(events?.n ?? 0) },
      };
      if (args.json) console.log(JSON.stringify(report));
      else {
        console.log(`monitoring end to end on ${report.server}: ${SUBJECTS.toLocaleString('en')} monitored subjects (seeded in ${seedSeconds.toFixed(0)} s)`);
        console.log(`version ${imported.version}: ${imported.removed} removed, ${imported.added} added, ${imported.changed} changed`);
        console.log(`re-screen: ${result.screened.toLocaleString('en')} screened against ${result.changed} entities in ${wallSeconds.toFixed(1)} s wall, ${report.rescreen.cpuSeconds.toFixed(1)} s of this process's CPU; ${result.newHits} new hits, ${report.rescreen.deliveries} screening.match deliveries queued`);
      }
    } finally {
      database.protection.keyring?.close();
      await database.close();
    }
  });
}

await main();
