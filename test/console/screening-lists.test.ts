import fs from 'node:fs/promises';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addSource } from '../../src/screening/lists/sources.js';
import { importList } from '../../src/screening/lists/import.js';
import { syncSource } from '../../src/screening/lists/sync.js';
import { buildTestContext, NOWHERE_WEBHOOK_URL, type TestContext } from '../helpers/app.js';
import { operatorUser, portal, portalOrg, type PortalUser } from '../helpers/portal.js';
import { client, expectStyleA } from '../respondents/fixtures.js';

/**
 * The console's watchlists API: each source's freshness (a list imported by hand, a list whose
 * sync failed against a closed port) and the screening volumes per organization; operators only.
 */
describe('console watchlists and screening volumes', () => {
  let t: TestContext;
  let operator: PortalUser;

  beforeAll(async () => {
    t = await buildTestContext({ webhookUrl: NOWHERE_WEBHOOK_URL });
    operator = await operatorUser(t.app, t.database.db);
  });
  afterAll(() => t.close());

  it('shows each source: version, entities, loaded at, and a failed sync with its error and next sync', async () => {
    const db = t.database.db;
    const empty = await portal(t.app, operator, { method: 'GET', url: '/api/console/screening/lists' });
    expect(empty.statusCode).toBe(200);
    const before = empty.json().data.length;

    await importList(db, { source: 'ng-internal', format: 'csv', files: { main: await fs.readFile('test/fixtures/screening/api-watchlist.csv') } });
    await addSource(db, 'ng-remote', { format: 'csv', url: 'http://127.0.0.1:9/ng-list.csv', every: '1h' });
    const outcome = await syncSource(db, 'ng-remote', { allowPrivate: true, timeoutMs: 5_000 });
    expect(outcome.outcome).toBe('failed');

    const listed = (await portal(t.app, operator, { method: 'GET', url: '/api/console/screening/lists' })).json().data as Record<string, unknown>[];
    expect(listed).toHaveLength(before + 2);
    const internal = listed.find((row) => row.name === 'ng-internal')!;
    expect(internal).toMatchObject({ format: 'csv', url: null, version: 1, entities: 3, every: null, nextSyncAt: null, lastFailureAt: null });
    expect(new Date(internal.loadedAt as string).getTime()).toBeGreaterThan(Date.now() - 60_000);
    const remote = listed.find((row) => row.name === 'ng-remote')!;
    expect(remote).toMatchObject({ format: 'csv', url: 'http://127.0.0.1:9/ng-list.csv', version: 0, entities: 0, every: '1h', lastOutcome: 'failed', loadedAt: null, lastSuccessAt: null });
    expect(remote.lastError).toEqual(expect.any(String));
    expect((remote.lastError as string).length).toBeGreaterThan(0);
    const next = new Date(remote.nextSyncAt as string).getTime() - new Date(remote.lastFailureAt as string).getTime();
    expect(next).toBeGreaterThan(3_500_000);
    expect(next).toBeLessThan(3_700_000);
  });

  it('counts per organization: screenings of the last 30 days, hits waiting, confirmed matches, monitored; per mode', async () => {
    const db = t.database.db;
    const http = client(t.app);
    const busy = await portalOrg(db);
    const quiet = await portalOrg(db);
    const screen = async (secret: string, name: string, monitor = false) =>
      (await http.post('/v1/verifications/screenings', secret, { subject: { type: 'person', name }, monitor })).json().data as { id: number; hits: { id: number }[] };
    const hit = await screen(busy.org.testSecret, 'Musa Adamu Karfe', true);
    const confirmed = await screen(busy.org.testSecret, 'Folasade Adeyinka-Bright');
    const old = await screen(busy.org.testSecret, 'Babajide Olumide Farinre');
    await screen(busy.org.testSecret, 'Chinedu Okafor');
    await screen(quiet.org.testSecret, 'Chinedu Okafor', true);
    expect(hit.hits.length).toBeGreaterThan(0);
    const review = await portal(t.app, busy.owner, {
      method: 'POST',
      url: `/api/orgs/${busy.org.id}/screenings/${confirmed.id}/hits/${confirmed.hits[0]!.id}/review?mode=test`,
      payload: { decision: 'true_match', note: 'Same passport' },
    });
    expect(review.statusCode).toBe(200);
    // One screening made 40 days ago: it counts for its hits, not for the last 30 days.
    await sql`update screenings set created_at = now() - interval '40 days' where id = ${old.id}`.execute(db);

    const pendingOf = async (ids: number[]) =>
      Number((await db.selectFrom('screening_hits').select((eb) => eb.fn.countAll<string>().as('n')).where('screening_id', 'in', ids).where('decision', 'is', null).executeTakeFirstOrThrow()).n);
    const res = await portal(t.app, operator, { method: 'GET', url: '/api/console/screening/volumes?mode=test' });
    expect(res.statusCode).toBe(200);
    const rows = res.json().data as { orgId: string }[];
    expect(rows.find((row) => row.orgId === busy.org.id)).toEqual({
      orgId: busy.org.id,
      orgName: busy.org.name,
      screenings30d: 3,
      pendingHits: await pendingOf([hit.id, confirmed.id, old.id]),
      confirmedMatches: 1,
      monitored: 1,
    });
    expect(rows.find((row) => row.orgId === quiet.org.id)).toEqual({ orgId: quiet.org.id, orgName: quiet.org.name, screenings30d: 1, pendingHits: 0, confirmedMatches: 0, monitored: 1 });
    // Busiest review queue first.
    expect(rows.findIndex((row) => row.orgId === busy.org.id)).toBeLessThan(rows.findIndex((row) => row.orgId === quiet.org.id));
    // Live mode: none of these test screenings.
    const live = (await portal(t.app, operator, { method: 'GET', url: '/api/console/screening/volumes' })).json().data as { orgId: string }[];
    expect(live.some((row) => row.orgId === busy.org.id || row.orgId === quiet.org.id)).toBe(false);
    expectStyleA(await portal(t.app, operator, { method: 'GET', url: '/api/console/screening/volumes?mode=all' }), 400, 'VALIDATION_ERROR');
  });

  it('customers (an organization owner) and signed-out callers are refused', async () => {
    const customer = await portalOrg(t.database.db);
    for (const url of ['/api/console/screening/lists', '/api/console/screening/volumes']) {
      expectStyleA(await portal(t.app, customer.owner, { method: 'GET', url }), 403, 'FORBIDDEN');
      expectStyleA(await portal(t.app, undefined, { method: 'GET', url }), 401, 'ACCESS_DENIED');
    }
  });
});
