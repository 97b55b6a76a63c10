import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importList, ListImportError, type ImportInput, type ListFiles } from '../../src/screening/lists/import.js';
import { changedEntities, entitiesAt, ListIndexProvider, listSourceNames } from '../../src/screening/lists/index-provider.js';
import { listSourceStatuses } from '../../src/screening/lists/status.js';
import { openTestDatabase, type TestDatabase } from '../helpers/database.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURES = path.join(ROOT, 'test/fixtures/screening/lists');
/** The screening data kit (../shared/screening/README.md): read in place, never copied here. */
const KIT = path.resolve(ROOT, '../shared/screening');
const hasKit = existsSync(path.join(KIT, 'un/consolidated.xml'));
if (!hasKit) console.warn(`skipping the real-list imports: the screening data kit is not at ${KIT}`);

const fixture = async (name: string): Promise<ListFiles> => ({ main: await readFile(path.join(FIXTURES, name)) });
const kitFile = async (name: string, companions: string[] = []): Promise<ListFiles> => {
  const main = await readFile(path.join(KIT, name));
  const files: Record<string, Buffer> = {};
  for (const companion of companions) files[companion] = await readFile(path.join(KIT, path.dirname(name), companion));
  return { main, companions: files };
};

const silent = { info() {}, warn() {}, error() {} };

describe('watchlist versions', () => {
  let database: TestDatabase;
  const db = () => database.db;
  const load = (input: Omit<ImportInput, 'format'> & { format?: ImportInput['format'] }) => importList(db(), { format: 'csv', ...input });

  /** What a refused import must leave: the source's version, count and current rows as they were. */
  async function snapshot(source: string) {
    const row = await db().selectFrom('screening_sources').select(['current_version', 'entity_count']).where('name', '=', source).executeTakeFirst();
    const rows = await db().selectFrom('screening_entities').select(['entity_id', 'from_version', 'to_version', 'digest']).where('source', '=', source).orderBy('entity_id').orderBy('from_version').execute();
    const versions = await db().selectFrom('screening_list_versions').select('version').where('source', '=', source).execute();
    return { row, rows, versions: versions.length };
  }

  beforeAll(async () => {
    database = await openTestDatabase();
  });
  afterAll(async () => {
    await database?.cleanup();
  });

  it('loads a first version, then a second with what was added, removed and changed; the old version stays readable', async () => {
    const first = await load({ source: 'ng-sanctions', files: await fixture('v1.csv') });
    expect(first).toEqual({ source: 'ng-sanctions', version: 1, entities: 5, added: 5, removed: 0, changed: 0, unchanged: false });

    const second = await load({ source: 'ng-sanctions', files: await fixture('v2.csv') });
    expect(second).toEqual({ source: 'ng-sanctions', version: 2, entities: 5, added: 1, removed: 1, changed: 1, unchanged: false });

    // Version 1's rows are still there, at version 1: NG-004 (removed) and NG-002 as it was.
    const atOne = await db()
      .selectFrom('screening_entities')
      .select(['entity_id', 'data'])
      .where('source', '=', 'ng-sanctions')
      .where('from_version', '<=', 1)
      .where((eb) => eb.or([eb('to_version', 'is', null), eb('to_version', '>', 1)]))
      .orderBy('entity_id')
      .execute();
    expect(atOne.map((row) => row.entity_id)).toEqual(['NG-001', 'NG-002', 'NG-003', 'NG-004', 'NG-005']);
    expect(atOne.find((row) => row.entity_id === 'NG-002')!.data.aliases).toEqual(['Mohammed Nur']);
    // Unchanged entities share one row between the versions.
    const ng001 = await db().selectFrom('screening_entities').selectAll().where('source', '=', 'ng-sanctions').where('entity_id', '=', 'NG-001').execute();
    expect(ng001).toHaveLength(1);
    expect(ng001[0]).toMatchObject({ from_version: 1, to_version: null });

    const changed = await changedEntities(db(), 'ng-sanctions', 2);
    expect(changed.map((e) => [e.id, e.source, e.listVersion])).toEqual([
      ['NG-002', 'ng-sanctions', 2],
      ['NG-006', 'ng-sanctions', 2],
    ]);
    expect(changed[0]!.aliases).toEqual(['Mohammed Nur', 'Muhammadu Nur']);
    expect(await listSourceNames(db())).toContain('ng-sanctions');

    const versions = await db().selectFrom('screening_list_versions').selectAll().where('source', '=', 'ng-sanctions').orderBy('version').execute();
    expect(versions.map((v) => [v.version, v.entities, v.added, v.removed, v.changed, v.origin, v.rescreened_at])).toEqual([
      [1, 5, 5, 0, 0, 'import', null],
      [2, 5, 1, 1, 1, 'import', null],
    ]);
    expect(versions[0]!.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refreshes the planner statistics after a large version, so the index is read by range rather than sorted whole', async () => {
    const analyzed = async () =>
      (await sql<{ at: Date | null }>`select last_analyze as at from pg_stat_user_tables where relname = 'screening_entities'`.execute(db())).rows[0]?.at?.getTime() ?? 0;
    const before = await analyzed();
    const lines = ['id,schema,name,aliases,birthDate,nationality,topics,program,notes'];
    for (let i = 0; i < 1_200; i++) lines.push(`BIG-${i},Person,Person Number ${i} Adeyemi,,,NG,sanction,BIG,`);
    await load({ source: 'big', files: { main: Buffer.from(lines.join('\n')) } });
    await expect.poll(analyzed, { timeout: 5_000 }).toBeGreaterThan(before);
    // A small change leaves them to autovacuum.
    const after = await analyzed();
    await load({ source: 'small', files: await fixture('v1.csv') });
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(await analyzed()).toBe(after);
  });

  it('makes no version for the same file, nor for a file with the same entities in another order', async () => {
    const again = await load({ source: 'ng-sanctions', files: await fixture('v2.csv') });
    expect(again).toEqual({ source: 'ng-sanctions', version: 2, entities: 5, added: 0, removed: 0, changed: 0, unchanged: true });

    const text = (await readFile(path.join(FIXTURES, 'v2.csv'), 'utf8')).trimEnd().split('\n');
    const reordered = [text[0], ...text.slice(1).reverse()].join('\n') + '\n';
    const shuffled = await load({ source: 'ng-sanctions', files: { main: Buffer.from(reordered) } });
    expect(shuffled).toMatchObject({ version: 2, unchanged: true });
    expect((await snapshot('ng-sanctions')).versions).toBe(2);
  });

  it('refuses a file with a bad line, naming the line, and changes nothing', async () => {
    const before = await snapshot('ng-sanctions');
    const refused = await load({ source: 'ng-sanctions', files: await fixture('bad-line.csv') }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ListImportError);
    expect((refused as ListImportError).reason).toBe('format');
    expect((refused as ListImportError).line).toBe(4);
    expect((refused as Error).message).toMatch(/^ng-sanctions: the csv file is not valid: line 4: .*nothing was changed$/);
    expect(await snapshot('ng-sanctions')).toEqual(before);
  });

  it('refuses a list that would lose more than half its entities unless forced, and says how many', async () => {
    const before = await snapshot('ng-sanctions');
    const refused = await load({ source: 'ng-sanctions', files: await fixture('shrunk.csv') }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ListImportError);
    expect((refused as Error).message).toBe(
      'ng-sanctions: the new file has 2 entities where version 2 has 5: 3 would go, more than half of the list; nothing was changed (pass --force if that is right)',
    );
    expect(await snapshot('ng-sanctions')).toEqual(before);

    // The source's own guard can be loosened per import, or the shrink forced.
    expect(await load({ source: 'ng-sanctions', files: await fixture('shrunk.csv'), maxShrink: 0.7 }).then((r) => r.version)).toBe(3);
    const restored = await load({ source: 'ng-sanctions', files: await fixture('v2.csv') });
    expect(restored).toMatchObject({ version: 4, entities: 5, added: 3, removed: 0, changed: 0 });
    const forced = await load({ source: 'ng-sanctions', files: await fixture('shrunk.csv'), force: true });
    expect(forced).toMatchObject({ version: 5, entities: 2, removed: 3 });
  });

  it('refuses an empty file, a bad source name, an unknown format and a source of another format', async () => {
    const header = 'id,schema,name,aliases,birthDate,nationality,topics,program,notes\n';
    await expect(load({ source: 'empty-list', files: { main: Buffer.from(header) } })).rejects.toThrow(/empty-list: .*(no entities|holds no).*nothing was changed/);
    expect(await db().selectFrom('screening_list_versions').select('version').where('source', '=', 'empty-list').execute()).toEqual([]);
    await expect(load({ source: 'Bad Name', files: await fixture('v1.csv') })).rejects.toThrow(/source name must be lowercase letters, digits and dashes/);
    await expect(importList(db(), { source: 'x', format: 'pdf' as 'csv', files: await fixture('v1.csv') })).rejects.toThrow(/format must be one of .*csv/);
    await expect(importList(db(), { source: 'ng-sanctions', format: 'un-xml', files: await fixture('v1.csv') })).rejects.toThrow(/is not valid|is in format csv, not un-xml/);
  });

  it('runs two imports of one source one after the other, never interleaved', async () => {
    const [a, b] = await Promise.all([load({ source: 'race', files: await fixture('v1.csv') }), load({ source: 'race', files: await fixture('v2.csv') })]);
    const results = [a, b].sort((x, y) => x.version - y.version);
    expect(results.map((r) => r.version)).toEqual([1, 2]);
    expect(results[0]).toMatchObject({ added: 5, removed: 0 });
    expect(results[1]).toMatchObject({ added: 1, removed: 1, changed: 1 });
    const current = await db().selectFrom('screening_entities').select('entity_id').where('source', '=', 'race').where('to_version', 'is', null).execute();
    expect(current).toHaveLength(5);
  });

  describe('the in-memory index', () => {
    it('serves every source at its current version, and swaps atomically while screenings run', async () => {
      await load({ source: 'swap', files: await fixture('v1.csv') });
      const provider = await ListIndexProvider.start(db(), silent, { pollMs: 20 });
      try {
        const first = provider.current();
        expect(first.lists.find((l) => l.source === 'swap')).toMatchObject({ version: 1, format: 'csv', entities: 5 });
        const subject = { type: 'person' as const, names: ['Mamman Nur Adamu'] };
        const seen = new Set<string>();
        let stop = false;
        const screenings = (async () => {
          while (!stop) {
            const lists = provider.current();
            const version = lists.lists.find((l) => l.source === 'swap')!.version;
            const hits = lists.index.screen(subject, { threshold: 0.7, sources: new Set(['swap']), limit: 10 });
            const hit = hits.find((h) => h.entity.id === 'NG-002');
            expect(hit, `version ${version}`).toBeDefined();
            // Every answer comes from the one version the screening started with.
            for (const h of hits) expect(h.entity.listVersion).toBe(version);
            expect(hit!.entity.aliases).toEqual(version === 1 ? ['Mohammed Nur'] : ['Mohammed Nur', 'Muhammadu Nur']);
            seen.add(String(version));
            await new Promise((resolve) => setImmediate(resolve));
          }
        })();
        await load({ source: 'swap', files: await fixture('v2.csv') });
        // The poll finds version 2 without being told, and the screenings move to it.
        await expect.poll(() => provider.current().lists.find((l) => l.source === 'swap')?.version, { timeout: 10_000 }).toBe(2);
        await expect.poll(() => seen.has('2'), { timeout: 10_000 }).toBe(true);
        stop = true;
        await screenings;
        expect(seen).toEqual(new Set(['1', '2']));
        // The old snapshot is untouched by the swap.
        expect(first.lists.find((l) => l.source === 'swap')!.version).toBe(1);
        const ng006 = provider.current().index.screen({ type: 'person', names: ['Oluwabunmi Okafor'] }, { threshold: 0.7, sources: new Set(['swap']), limit: 5 });
        expect(ng006.map((h) => h.entity.id)).toContain('NG-006');
      } finally {
        provider.close();
      }
    });

    it('reads a version as it was after later versions closed some of its rows, in id order, across pages', async () => {
      await load({ source: 'paged', files: await fixture('v1.csv') });
      await load({ source: 'paged', files: await fixture('v2.csv') });
      const read = async (version: number, page: number) => {
        const out: { id: string; aliases: string[]; listVersion: number }[] = [];
        for await (const entity of entitiesAt(db(), 'paged', version, page)) out.push({ id: entity.id, aliases: entity.aliases, listVersion: entity.listVersion });
        return out;
      };
      // Version 1 as it was: NG-004 (removed by 2) and NG-002 before its new alias (closed by 2)
      // come from the closed rows, merged among the current ones; NG-006 (added by 2) is not there.
      const one = [
        { id: 'NG-001', aliases: ['Abu Muhammad Shekau', 'Imam Shekau'], listVersion: 1 },
        { id: 'NG-002', aliases: ['Mohammed Nur'], listVersion: 1 },
        { id: 'NG-003', aliases: ['JAS', 'Boko Haram'], listVersion: 1 },
        { id: 'NG-004', aliases: ['Abu Hafsat'], listVersion: 1 },
        { id: 'NG-005', aliases: ['Ansaru'], listVersion: 1 },
      ];
      for (const page of [1, 2, 3, 5000]) expect(await read(1, page), `page ${page}`).toEqual(one);
      const two = await read(2, 2);
      expect(two.map((entity) => entity.id)).toEqual(['NG-001', 'NG-002', 'NG-003', 'NG-005', 'NG-006']);
      expect(two.find((entity) => entity.id === 'NG-002')!.aliases).toEqual(['Mohammed Nur', 'Muhammadu Nur']);
    });

    it('refresh() reloads at once, and a removed source leaves the index', async () => {
      const provider = await ListIndexProvider.start(db(), silent, { pollMs: 60_000 });
      try {
        await load({ source: 'late', files: await fixture('v1.csv') });
        expect(provider.current().lists.some((l) => l.source === 'late')).toBe(false);
        await provider.refresh();
        expect(provider.current().lists.find((l) => l.source === 'late')).toMatchObject({ version: 1, entities: 5 });
        await db().deleteFrom('screening_sources').where('name', '=', 'late').execute();
        await provider.refresh();
        expect(provider.current().lists.some((l) => l.source === 'late')).toBe(false);
        expect(await listSourceNames(db())).not.toContain('late');
      } finally {
        provider.close();
      }
    });
  });

  describe.skipIf(!hasKit)('the official files in the data kit', () => {
    it('imports the UN consolidated list, and refuses it truncated, naming the line', async () => {
      const un = await kitFile('un/consolidated.xml');
      const result = await importList(db(), { source: 'un', format: 'un-xml', files: un });
      expect(result).toMatchObject({ source: 'un', version: 1, removed: 0, changed: 0, unchanged: false });
      expect(result.entities).toBeGreaterThan(1000);
      const qdi = await db().selectFrom('screening_entities').select('data').where('source', '=', 'un').where('to_version', 'is', null).where('entity_id', 'like', 'QDi.%').limit(1).executeTakeFirstOrThrow();
      expect(qdi.data.schema).toBe('Person');

      const cut = un.main.subarray(0, Math.floor(un.main.length / 2));
      const refused = await importList(db(), { source: 'un', format: 'un-xml', files: { main: cut } }).catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(ListImportError);
      expect((refused as Error).message).toMatch(/^un: the un-xml file is not valid: .*line \d+/);
      expect(await db().selectFrom('screening_sources').select(['current_version', 'entity_count']).where('name', '=', 'un').executeTakeFirst()).toEqual({ current_version: 1, entity_count: result.entities });
    });

    it('imports the OFAC XML, the OFAC CSV trio and FollowTheMoney lines', async () => {
      const xml = await importList(db(), { source: 'ofac-cons', format: 'ofac-xml', files: await kitFile('ofac/consolidated.xml') });
      expect(xml).toMatchObject({ version: 1, unchanged: false });
      expect(xml.entities).toBeGreaterThan(500);

      const csv = await importList(db(), { source: 'ofac-sdn', format: 'ofac-csv', files: await kitFile('ofac/sdn.csv', ['alt.csv', 'add.csv', 'sdn_comments.csv']) });
      expect(csv).toMatchObject({ version: 1, unchanged: false });
      expect(csv.entities).toBeGreaterThan(7000);
      const uid36 = await db().selectFrom('screening_entities').select('data').where('source', '=', 'ofac-sdn').where('entity_id', '=', '36').executeTakeFirstOrThrow();
      expect(uid36.data.aliases.length).toBeGreaterThan(0);

      const ftm = await importList(db(), { source: 'os-zala', format: 'ftm', files: await kitFile('ftm/yente-zala.ftm.jsonl') });
      expect(ftm).toMatchObject({ version: 1, unchanged: false });
      // Persons and companies only: the Sanction, Ownership, Address ... lines are not subjects.
      expect(ftm.entities).toBeLessThanOrEqual(17);
    });
  });

  it('shows each source with its version, count and load time', async () => {
    const statuses = await listSourceStatuses(db());
    const swap = statuses.find((s) => s.name === 'swap')!;
    expect(swap).toMatchObject({ format: 'csv', url: null, every: null, version: 2, entities: 5, nextSyncAt: null, lastSuccessAt: null, maxShrink: 0.5 });
    expect(Date.parse(swap.loadedAt!)).toBeGreaterThan(Date.now() - 60_000);
  });
});
