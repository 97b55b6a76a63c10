import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCREENING_BILLABLES } from '../../src/screening/billing.js';
import { importList } from '../../src/screening/lists/import.js';
import { chargeMonitoring, rescreenPending, rescreenVersion, screeningMonitoringTask } from '../../src/screening/monitoring.js';
import { startWorker } from '../../src/worker.js';
import { buildTestContext, NOWHERE_WEBHOOK_URL, testConfig, type TestContext } from '../helpers/app.js';
import { portal, portalOrg } from '../helpers/portal.js';
import { balanceOf, client, deliveriesOf } from '../respondents/fixtures.js';

const BASE = '/v1/verifications/screenings';
const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/screening');
const SOURCE = 'mon-watch';
const NEWLY_LISTED = 'Tamunoemi Ibiere Georgewill';
const CSV_HEADER = 'id,schema,name,aliases,birthDate,nationality,topics,program,notes\n';

const person = (name: string, extra: Record<string, unknown> = {}) => ({ subject: { type: 'person', name }, ...extra });

describe('screening monitoring', () => {
  let t: TestContext;
  let http: ReturnType<typeof client>;
  const importVersion = (file: string, source = SOURCE) => importList(t.database.db, { source, format: 'csv', files: { main: fs.readFileSync(path.join(FIXTURES, file)) } });

  beforeAll(async () => {
    t = await buildTestContext({ webhookUrl: NOWHERE_WEBHOOK_URL });
    http = client(t.app);
    await importVersion('api-watchlist.csv');
    await importList(t.database.db, { source: 'mon-other', format: 'csv', files: { main: Buffer.from(`${CSV_HEADER}X-1,Person,Somebody Entirely Different,,,,sanction,,\n`) } });
    await t.app.screeningLists.refresh();
  });
  afterAll(() => t.close());

  it('a list change reaches exactly the affected monitored subjects, once, with one screening.match per new hit', async () => {
    // The versions loaded before any monitored screening have no one to re-screen.
    const first = await rescreenPending({ db: t.database.db });
    expect(first.map((r) => [r.source, r.version, r.screened])).toEqual([
      [SOURCE, 1, 0],
      ['mon-other', 1, 0],
    ]);

    const a = await t.org();
    const b = await t.org();
    const create = async (secret: string, body: object) => (await http.post(BASE, secret, body)).json().data;
    const monitoredA = await create(a.liveSecret, person(NEWLY_LISTED, { monitor: true, reference: 'a-1' }));
    const monitoredB = await create(b.liveSecret, person('Tamuno Georgewill', { monitor: true }));
    const unaffected = await create(a.liveSecret, person('Adaeze Oluwaseun Nwankwo', { monitor: true }));
    const unmonitored = await create(a.liveSecret, person(NEWLY_LISTED));
    const deleted = await create(a.liveSecret, person(NEWLY_LISTED, { monitor: true }));
    expect((await http.del(`${BASE}/${deleted.id}`, a.liveSecret)).statusCode).toBe(200);
    const testMode = await create(a.testSecret, person(NEWLY_LISTED, { monitor: true }));
    const otherList = await create(a.liveSecret, person(NEWLY_LISTED, { monitor: true, lists: ['mon-other'] }));
    for (const screening of [monitoredA, monitoredB, unaffected, unmonitored, deleted, testMode, otherList]) expect(screening.hits).toEqual([]);

    const v2 = await importVersion('api-watchlist-v2.csv');
    expect(v2).toMatchObject({ version: 2, added: 1 });
    const results = await rescreenPending({ db: t.database.db });
    expect(results).toEqual([{ source: SOURCE, version: 2, changed: 1, screened: 3, newHits: 2 }]);

    const afterA = (await http.get(`${BASE}/${monitoredA.id}`, a.liveSecret)).json().data;
    expect(afterA.status).toEqual({ status: 'PENDING_REVIEW', subStatus: 'POSSIBLE_MATCH', state: 'IN_REVIEW' });
    expect(afterA.hits).toHaveLength(1);
    expect(afterA.hits[0]).toMatchObject({ entityId: 'API-P-3', source: SOURCE, listVersion: 2, foundBy: 'monitoring', name: NEWLY_LISTED });
    const afterB = (await http.get(`${BASE}/${monitoredB.id}`, b.liveSecret)).json().data;
    expect(afterB.hits.map((hit: { entityId: string }) => hit.entityId)).toEqual(['API-P-3']);
    for (const [screening, secret] of [
      [unaffected, a.liveSecret],
      [unmonitored, a.liveSecret],
      [deleted, a.liveSecret],
      [testMode, a.testSecret],
      [otherList, a.liveSecret],
    ] as const) {
      expect((await http.get(`${BASE}/${screening.id}`, secret)).json().data.hits).toEqual([]);
    }

    const matchesOf = async (orgId: string) => (await deliveriesOf(t.database.db, orgId)).filter((d) => d.type === 'screening.match');
    const deliveredA = await matchesOf(a.id);
    expect(deliveredA).toHaveLength(1);
    expect(deliveredA[0]!.mode).toBe('live');
    const { newHits, ...screening } = deliveredA[0]!.payload.data;
    expect(screening).toEqual(afterA);
    expect(newHits).toEqual(afterA.hits);
    expect(await matchesOf(b.id)).toHaveLength(1);

    // Again: nothing pending; the version re-screened by hand finds nothing new and sends nothing.
    expect(await rescreenPending({ db: t.database.db })).toEqual([]);
    expect(await rescreenVersion({ db: t.database.db }, SOURCE, 2)).toMatchObject({ newHits: 0 });
    expect(await matchesOf(a.id)).toHaveLength(1);
    expect(await matchesOf(b.id)).toHaveLength(1);
    const row = await t.database.db.selectFrom('screening_list_versions').select('rescreened_at').where('source', '=', SOURCE).where('version', '=', 2).executeTakeFirstOrThrow();
    expect(row.rescreened_at).toBeInstanceOf(Date);
  });

  it('two workers at once re-screen a version once', async () => {
    const org = await t.org();
    const monitored = (await http.post(BASE, org.liveSecret, person('Ebiere Alaba Sokari', { monitor: true }))).json().data;
    await importList(t.database.db, { source: 'mon-race', format: 'csv', files: { main: Buffer.from(`${CSV_HEADER}R-1,Person,Ebiere Alaba Sokari,,,NG,sanction,,\n`) } });
    const [one, two] = await Promise.all([rescreenPending({ db: t.database.db }), rescreenPending({ db: t.database.db })]);
    expect([...one, ...two].map((r) => [r.source, r.version, r.newHits])).toEqual([['mon-race', 1, 1]]);
    const deliveries = (await deliveriesOf(t.database.db, org.id)).filter((d) => d.type === 'screening.match');
    expect(deliveries.map((d) => d.payload.data.id)).toEqual([monitored.id]);
  });

  it('charges monitoring monthly after the first month; an empty wallet ends it with screening.monitoring_ended', async () => {
    const price = SCREENING_BILLABLES.screening.defaultPrice;
    const monthly = SCREENING_BILLABLES.screening_monitoring.defaultPrice;
    const paying = await t.org({ fund: price + monthly });
    const broke = await t.org({ fund: price });
    const kept = (await http.post(BASE, paying.liveSecret, person('Adaeze Oluwaseun Nwankwo', { monitor: true }))).json().data;
    const lapsing = (await http.post(BASE, broke.liveSecret, person('Adaeze Oluwaseun Nwankwo', { monitor: true }))).json().data;
    expect(await balanceOf(t.database.db, paying.id)).toBe(monthly);
    const deps = { db: t.database.db };
    // Within the first month nothing is due.
    expect(await chargeMonitoring({ ...deps, now: () => new Date(Date.now() + 20 * 86_400_000) })).toEqual({ charged: 0, ended: 0 });
    const later = new Date(Date.now() + 32 * 86_400_000);
    const billed = await chargeMonitoring({ ...deps, now: () => later });
    expect(billed.charged).toBeGreaterThanOrEqual(1);
    expect(billed.ended).toBeGreaterThanOrEqual(1);
    expect(await balanceOf(t.database.db, paying.id)).toBe(0);
    expect((await http.get(`${BASE}/${kept.id}`, paying.liveSecret)).json().data.monitored).toBe(true);
    const ended = (await http.get(`${BASE}/${lapsing.id}`, broke.liveSecret)).json().data;
    expect(ended).toMatchObject({ monitored: false, monitoringEndReason: 'unpaid' });
    const events = (await deliveriesOf(t.database.db, broke.id)).filter((d) => d.type === 'screening.monitoring_ended');
    expect(events.map((d) => d.payload.data)).toEqual([ended]);
    // Paid up for the next month: the same moment charges nothing more.
    expect(await chargeMonitoring({ ...deps, now: () => later })).toEqual({ charged: 0, ended: 0 });
  });

  it("as the worker's task: a cleared screening waits for review again when a new version lists the subject; the log names no one", async () => {
    const { org, owner } = await portalOrg(t.database.db);
    const created = (await http.post(BASE, org.liveSecret, { subject: { type: 'person', name: 'Ebiere Sokari Worker', aliases: ['Garba Danladi Yusufari'] }, monitor: true })).json().data;
    expect(created.hits.map((hit: { entityId: string }) => hit.entityId)).toEqual(['API-P-1']);
    const cleared = await portal(t.app, owner, {
      method: 'POST',
      url: `/api/orgs/${org.id}/screenings/${created.id}/hits/${created.hits[0].id}/review?mode=live`,
      payload: { decision: 'false_positive', note: 'Another person' },
    });
    expect(cleared.json().status.status).toBe('CLEARED');
    await rescreenPending({ db: t.database.db });
    await importList(t.database.db, { source: 'mon-worker', format: 'csv', files: { main: Buffer.from(`${CSV_HEADER}W-1,Person,Ebiere Sokari Worker,,,NG,sanction,,\n`) } });
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) }));
    const worker = await startWorker({ database: t.database, config: testConfig(), logger, tasks: [screeningMonitoringTask({ intervalMs: 50 })] });
    try {
      for (let i = 0; i < 200; i++) {
        const version = await t.database.db.selectFrom('screening_list_versions').select('rescreened_at').where('source', '=', 'mon-worker').executeTakeFirstOrThrow();
        if (version.rescreened_at) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      await worker.stop();
    }
    const after = (await http.get(`${BASE}/${created.id}`, org.liveSecret)).json().data;
    expect(after.status).toEqual({ status: 'PENDING_REVIEW', subStatus: 'POSSIBLE_MATCH', state: 'IN_REVIEW' });
    expect(after.hits.map((hit: { entityId: string; foundBy: string }) => [hit.entityId, hit.foundBy]).sort()).toEqual([
      ['API-P-1', 'screening'],
      ['W-1', 'monitoring'],
    ]);
    const log = lines.join('');
    expect(log).toContain('screening monitoring: version re-screened');
    expect(log).not.toContain('Ebiere');
    expect(log).not.toContain('Sokari');
  });
});
