import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { TaskLogger } from '../../src/platform/background.js';
import { addSource, setSource } from '../../src/screening/lists/sources.js';
import { listSourceStatuses } from '../../src/screening/lists/status.js';
import { listSyncTask, syncDueSources, syncSource } from '../../src/screening/lists/sync.js';
import { startWorker } from '../../src/worker.js';
import { buildTestContext, type TestContext } from '../helpers/app.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURES = path.join(ROOT, 'test/fixtures/screening/lists');
const TOKEN = 'metrics-token-for-list-sync-tests-0123';

/** How the local publisher answers the next GET. */
type Mode = 'serve' | 'error500' | 'truncate' | 'hang' | 'bad-file';

/** A list publisher on 127.0.0.1: serves `body` with an ETag, answers 304 to a matching If-None-Match, or fails as told. */
function publisher() {
  let body: Buffer = Buffer.alloc(0);
  let mode: Mode = 'serve';
  const requests: { ifNoneMatch?: string }[] = [];
  const hanging: http.ServerResponse[] = [];
  const etag = () => `"${createHash('sha256').update(body).digest('hex').slice(0, 16)}"`;
  const server = http.createServer((req, res) => {
    requests.push({ ifNoneMatch: req.headers['if-none-match'] });
    if (mode === 'error500') return void res.writeHead(500).end('upstream trouble');
    if (mode === 'hang') return void hanging.push(res);
    if (mode === 'truncate') {
      // Announces the whole file, sends half, and closes.
      res.writeHead(200, { 'content-length': body.length, etag: etag() });
      res.write(body.subarray(0, Math.floor(body.length / 2)));
      setTimeout(() => res.socket?.destroy(), 20);
      return;
    }
    if (req.headers['if-none-match'] === etag()) return void res.writeHead(304, { etag: etag() }).end();
    res.writeHead(200, { 'content-type': 'text/csv', 'content-length': body.length, etag: etag() }).end(body);
  });
  return {
    server,
    requests,
    set(next: { body?: Buffer; mode?: Mode }) {
      if (next.body) body = next.body;
      if (next.mode) mode = next.mode;
    },
    release() {
      for (const res of hanging.splice(0)) res.destroy();
    },
    url: () => `http://127.0.0.1:${(server.address() as AddressInfo).port}/lists/ng.csv`,
  };
}

/** The value of one sample of a scrape (0 when absent). */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = match[2] ? match[2].split(/,(?=\w+=")/) : [];
    if (wanted.every((pair) => present.includes(pair))) return Number(match[3]);
  }
  return undefined;
}

describe('list sync from a publisher', () => {
  let t: TestContext;
  const pub = publisher();
  const logs: { level: string; obj: unknown; msg: string }[] = [];
  const record = (level: string) => (obj: unknown, msg?: string) => void logs.push({ level, obj, msg: msg ?? '' });
  const logger = { info: record('info'), warn: record('warn'), error: record('error') } as unknown as TaskLogger;
  const db = () => t.database.db;
  const sync = (options: { timeoutMs?: number } = {}) => syncSource(db(), 'ng', { allowPrivate: true, logger, timeoutMs: options.timeoutMs ?? 5000 });
  const status = async () => (await listSourceStatuses(db())).find((s) => s.name === 'ng')!;
  const current = async () =>
    db().selectFrom('screening_entities').select(['entity_id', 'from_version']).where('source', '=', 'ng').where('to_version', 'is', null).orderBy('entity_id').execute();

  beforeAll(async () => {
    t = await buildTestContext({ config: { metricsToken: TOKEN } });
    await new Promise<void>((resolve) => pub.server.listen(0, '127.0.0.1', resolve));
    pub.set({ body: await readFile(path.join(FIXTURES, 'v1.csv')) });
  });
  afterAll(async () => {
    pub.release();
    await new Promise((resolve) => pub.server.close(resolve));
    await t?.close();
  });

  it('fetches a new source, then asks conditionally and takes a 304 as fresh', async () => {
    await addSource(db(), 'ng', { format: 'csv', url: pub.url(), every: '15m' });
    const first = await sync();
    expect(first).toEqual({ source: 'ng', outcome: 'updated', version: 1, entities: 5, added: 5, removed: 0, changed: 0 });
    expect(pub.requests.at(-1)!.ifNoneMatch).toBeUndefined();

    const second = await sync();
    expect(second).toMatchObject({ outcome: 'not_modified', version: 1, entities: 5 });
    expect(pub.requests.at(-1)!.ifNoneMatch).toMatch(/^"[0-9a-f]{16}"$/);
    const s = await status();
    expect(s).toMatchObject({ version: 1, entities: 5, lastOutcome: 'not_modified', lastFailureAt: null, lastError: null, every: '15m' });
    expect(Date.parse(s.lastSuccessAt!)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('keeps serving through a 500, a truncated body, a hang past the timeout and a bad file, and says why', async () => {
    const before = await current();
    pub.set({ mode: 'error500' });
    expect(await sync()).toMatchObject({ outcome: 'failed', version: 1, error: 'HTTP 500 Internal Server Error' });
    expect(await status()).toMatchObject({ version: 1, entities: 5, lastOutcome: 'failed', lastError: 'HTTP 500 Internal Server Error' });

    // A changed file, cut short on the wire.
    pub.set({ mode: 'truncate', body: await readFile(path.join(FIXTURES, 'v2.csv')) });
    const cut = await sync();
    expect(cut).toMatchObject({ outcome: 'failed', version: 1 });
    expect(cut.error).toMatch(/closed before the whole file arrived|cut short/);

    pub.set({ mode: 'hang' });
    const started = Date.now();
    const hung = await sync({ timeoutMs: 300 });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(hung).toMatchObject({ outcome: 'failed', version: 1, error: 'no complete answer within 300 ms' });
    pub.release();

    // Served whole, but not a valid list: the parser's line.
    pub.set({ mode: 'serve', body: await readFile(path.join(FIXTURES, 'bad-line.csv')) });
    const bad = await sync();
    expect(bad).toMatchObject({ outcome: 'failed', version: 1 });
    expect(bad.error).toMatch(/line 4/);

    // A list that would lose most of its entries waits for the operator.
    pub.set({ body: Buffer.from('id,schema,name,aliases,birthDate,nationality,topics,program,notes\nNG-001,Person,Abubakar Shekau Yusuf,,1973,NG,sanction,NSL,\n') });
    const shrunk = await sync();
    expect(shrunk.error).toMatch(/1 entities where version 1 has 5: 4 would go, more than half/);

    expect(await current()).toEqual(before);
    const s = await status();
    expect(s).toMatchObject({ version: 1, entities: 5, lastOutcome: 'failed' });
    expect(Date.parse(s.lastFailureAt!)).toBeGreaterThanOrEqual(Date.parse(s.lastSuccessAt!));
    // The log names the source, version and kind of failure, never the file's content.
    const warnings = logs.filter((l) => l.level === 'warn');
    expect(warnings.length).toBeGreaterThanOrEqual(5);
    for (const line of warnings) {
      expect(JSON.stringify(line)).not.toMatch(/Shekau|Mamman|Okafor|Jama'atu/);
      expect(line.obj).toMatchObject({ source: 'ng', version: 1 });
    }
  });

  it('recovers with a changed file: a new version', async () => {
    pub.set({ mode: 'serve', body: await readFile(path.join(FIXTURES, 'v2.csv')) });
    expect(await sync()).toEqual({ source: 'ng', outcome: 'updated', version: 2, entities: 5, added: 1, removed: 1, changed: 1 });
    const s = await status();
    expect(s).toMatchObject({ version: 2, lastOutcome: 'updated' });
    expect(Date.parse(s.lastSuccessAt!)).toBeGreaterThan(Date.parse(s.lastFailureAt!));
    expect(await db().selectFrom('screening_list_versions').select(['version', 'origin']).where('source', '=', 'ng').orderBy('version').execute()).toEqual([
      { version: 1, origin: 'sync' },
      { version: 2, origin: 'sync' },
    ]);
  });

  it('shows freshness in /metrics', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.statusCode).toBe(200);
    expect(sample(res.body, 'vouch_screening_list_entities', { source: 'ng' })).toBe(5);
    expect(sample(res.body, 'vouch_screening_list_version', { source: 'ng' })).toBe(2);
    expect(sample(res.body, 'vouch_screening_list_sync_ok', { source: 'ng' })).toBe(1);
    const age = sample(res.body, 'vouch_screening_list_last_success_age_seconds', { source: 'ng' });
    expect(age).toBeGreaterThanOrEqual(0);
    expect(age).toBeLessThan(60);
    expect(sample(res.body, 'vouch_screening_list_sync_failures_total', { source: 'ng' })).toBeGreaterThanOrEqual(5);
    expect(sample(res.body, 'vouch_screening_list_syncs_total', { source: 'ng', outcome: 'not_modified' })).toBeGreaterThanOrEqual(1);
  });

  it('the worker syncs what is due, each source once, on its own interval', async () => {
    pub.set({ body: await readFile(path.join(FIXTURES, 'v1.csv')) });
    await addSource(db(), 'ng-two', { format: 'csv', url: pub.url().replace('ng.csv', 'two.csv'), every: '1h' });
    const now = new Date();
    // ng was attempted just now (its interval has not passed); ng-two never was.
    const [a, b] = await Promise.all([syncDueSources(db(), { allowPrivate: true, now: () => now }), syncDueSources(db(), { allowPrivate: true, now: () => now })]);
    const outcomes = [...a, ...b];
    expect(outcomes.map((o) => o.source)).toEqual(['ng-two']);
    expect(outcomes[0]).toMatchObject({ outcome: 'updated', version: 1 });
    // An hour later both are due; a disabled one is not.
    await setSource(db(), 'ng-two', { enabled: false });
    const later = new Date(now.getTime() + 3600_000 + 1000);
    expect((await syncDueSources(db(), { allowPrivate: true, now: () => later })).map((o) => [o.source, o.outcome])).toEqual([['ng', 'updated']]);
    const s = (await listSourceStatuses(db())).find((x) => x.name === 'ng-two')!;
    expect(s.nextSyncAt).toBeNull();

    // The task in a worker: private addresses follow the configuration.
    await setSource(db(), 'ng-two', { enabled: true });
    await db().updateTable('screening_sources').set({ last_attempt_at: null }).execute();
    const config = { ...loadConfig({ VOUCH_WORKER: 'off' }), allowPrivateUrls: false };
    const worker = await startWorker({ database: t.database, config, logger, tasks: [listSyncTask({ checkIntervalMs: 60_000 })] });
    await expect.poll(async () => (await status()).lastOutcome, { timeout: 10_000 }).toBe('failed');
    await worker.stop();
    expect((await status()).lastError).toMatch(/loopback or private network address/);
  });
});
