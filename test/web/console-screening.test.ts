import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importList } from '../../src/screening/lists/import.js';
import { addSource } from '../../src/screening/lists/sources.js';
import { syncSource } from '../../src/screening/lists/sync.js';
import { bearer, NOWHERE_WEBHOOK_URL } from '../helpers/app.js';
import { buildWebContext, screenshot, watchErrors, type WebContext } from '../helpers/browser.js';
import { operatorUser, type PortalUser } from '../helpers/portal.js';

/**
 * The console's Watchlists page in Chromium: a list imported by hand (its version, entities and
 * when it was loaded), a source whose sync failed against a closed port (the failure and its error,
 * the next sync), and the screening volumes of an organization in test mode.
 * With VOUCH_SCREENSHOTS=1: docs/images/console-watchlists.png.
 */
let web: WebContext;
let operator: PortalUser;

beforeAll(async () => {
  web = await buildWebContext({ webhookUrl: NOWHERE_WEBHOOK_URL });
  operator = await operatorUser(web.app, web.database.db, { origin: web.baseUrl });
}, 90_000);
afterAll(() => web?.close());

const eventually = <T>(check: () => Promise<T>, timeout = 15_000) => expect.poll(check, { timeout });

describe('the Watchlists page of the console', () => {
  it('shows each source with its freshness and the screening volumes per organization', { timeout: 120_000 }, async () => {
    const db = web.database.db;
    await importList(db, { source: 'ng-internal', format: 'csv', files: { main: await fs.readFile('test/fixtures/screening/api-watchlist.csv') } });
    await addSource(db, 'ng-remote', { format: 'csv', url: 'http://127.0.0.1:9/ng-list.csv', every: '1h' });
    expect((await syncSource(db, 'ng-remote', { allowPrivate: true, timeoutMs: 5_000 })).outcome).toBe('failed');
    const { last_error: lastError } = await db.selectFrom('screening_sources').select('last_error').where('name', '=', 'ng-remote').executeTakeFirstOrThrow();

    const org = await web.org({ name: 'Ikeja Credit' });
    for (const name of ['Musa Adamu Karfe', 'Chinedu Okafor']) {
      const res = await web.app.inject({ method: 'POST', url: '/v1/verifications/screenings', headers: bearer(org.testSecret), payload: { subject: { type: 'person', name }, monitor: true } });
      expect(res.statusCode).toBe(201);
    }

    const [name, value] = operator.cookie.split('=') as [string, string];
    const { context, page } = await web.newPage();
    await context.addCookies([{ name, value, url: web.baseUrl }]);
    const errors = watchErrors(page);
    await page.goto('/console');
    await page.getByRole('link', { name: 'Watchlists' }).click();
    await page.getByRole('heading', { name: 'Watchlists', level: 2 }).waitFor();

    const sources = page.getByRole('table', { name: 'Watchlist sources' });
    const internal = sources.getByRole('row').filter({ hasText: 'ng-internal' });
    await internal.waitFor();
    const internalCells = await internal.getByRole('cell').allTextContents();
    expect(internalCells.slice(0, 4)).toEqual(['ng-internalcsv', 'None', '1', '3']);
    expect(internalCells[4]).not.toBe('—');
    expect(internalCells[7]).toBe('Import only');
    const remote = sources.getByRole('row').filter({ hasText: 'ng-remote' });
    const remoteCells = await remote.getByRole('cell').allTextContents();
    expect(remoteCells.slice(0, 4)).toEqual(['ng-remotecsvFailed', 'http://127.0.0.1:9/ng-list.csv', '—', '0']);
    expect(remoteCells[6]).toContain(lastError!);
    expect(remoteCells[7]).toMatch(/\(every 1h\)$/);

    const volumes = page.getByRole('region', { name: 'Screening volumes' });
    await volumes.getByText('No live screenings yet').waitFor();
    await volumes.getByText('Test', { exact: true }).click();
    const row = volumes.getByRole('table', { name: 'Screening volumes, test mode' }).getByRole('row').filter({ hasText: 'Ikeja Credit' });
    await row.waitFor();
    const hits = await db.selectFrom('screening_hits as h').innerJoin('screenings as s', 's.id', 'h.screening_id').select('h.id').where('s.org_id', '=', org.id).execute();
    expect(hits.length).toBeGreaterThan(0);
    await eventually(() => row.getByRole('cell').allTextContents()).toEqual(['Ikeja Credit', '2', String(hits.length), '0', '2']);
    await screenshot(page, 'console-watchlists');
    expect(errors).toEqual([]);
  });
});
