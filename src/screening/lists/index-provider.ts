import type { Kysely } from 'kysely';
import type { TaskLogger } from '../../platform/background.js';
import type { DB } from '../../platform/db/schema.js';
import type { IndexedEntity, ListEntity } from '../entity.js';
import { ScreeningIndex } from '../matching/index.js';

/** The lists a screening runs against: one index over every source's serving version, and which versions those are. */
export interface CurrentLists {
  index: ScreeningIndex;
  lists: { source: string; version: number; format: string; entities: number; loadedAt: Date }[];
}

/** Rows per page when the index is built: a page is parsed and dropped before the next is read. */
const PAGE = 5000;

type Versions = { name: string; current_version: number }[];

const signatureOf = (versions: Versions) => versions.map((row) => `${row.name}@${row.current_version}`).join(',');

function asEntity(data: unknown): ListEntity {
  return (typeof data === 'string' ? JSON.parse(data) : data) as ListEntity;
}

/**
 * The entities of `source` as they were at `version`, in id order, page by page (keyset): the
 * rows that version had added or kept. Versions committed while the pages are read do not show:
 * their rows start after `version`, and the rows they close end after it.
 *
 * Two reads, each on an index of its own: the rows still current (`to_version is null`: the
 * partial unique index on (source, entity_id), a range scan per page), and the rows a later
 * version has closed since (usually none; the to_version index), merged in id order. One query
 * with `to_version is null or to_version > $version` used neither index: every page sorted the
 * whole source again, and a server holding 1,000,000 entities took minutes to start.
 */
export async function* entitiesAt(db: Kysely<DB>, source: string, version: number, page = PAGE): AsyncGenerator<IndexedEntity> {
  const closedSince = await db
    .selectFrom('screening_entities')
    .select(['entity_id', 'data'])
    .where('source', '=', source)
    .where('to_version', '>', version)
    .where('from_version', '<=', version)
    .orderBy('entity_id')
    .execute();
  const entity = (row: { data: unknown }) => Object.assign(asEntity(row.data), { source, listVersion: version });
  let next = 0;
  let after = '';
  for (;;) {
    const rows = await db
      .selectFrom('screening_entities')
      .select(['entity_id', 'data'])
      .where('source', '=', source)
      .where('to_version', 'is', null)
      .where('entity_id', '>', after)
      .where('from_version', '<=', version)
      .orderBy('entity_id')
      .limit(page)
      .execute();
    for (const row of rows) {
      while (next < closedSince.length && closedSince[next]!.entity_id < row.entity_id) yield entity(closedSince[next++]!);
      yield entity(row);
    }
    if (rows.length < page) break;
    after = rows[rows.length - 1]!.entity_id;
  }
  while (next < closedSince.length) yield entity(closedSince[next++]!);
}

/** Loads every source's serving version into one ScreeningIndex. */
async function loadCurrentLists(db: Kysely<DB>): Promise<{ lists: CurrentLists; signature: string }> {
  const sources = await db
    .selectFrom('screening_sources as s')
    .innerJoin('screening_list_versions as v', (join) => join.onRef('v.source', '=', 's.name').onRef('v.version', '=', 's.current_version'))
    .select(['s.name', 's.format', 's.current_version', 'v.entities', 'v.loaded_at'])
    .orderBy('s.name')
    .execute();
  // The index keeps the entity objects; this array only holds references to them until it is built.
  const entities: IndexedEntity[] = [];
  for (const source of sources) for await (const entity of entitiesAt(db, source.name, source.current_version)) entities.push(entity);
  const lists = sources.map((source) => ({ source: source.name, version: source.current_version, format: source.format, entities: source.entities, loadedAt: source.loaded_at }));
  return { lists: { index: new ScreeningIndex(entities), lists }, signature: signatureOf(sources) };
}

/**
 * The in-memory index screenings use. It polls the sources' versions (one small query) and, when
 * one changed, builds a new index in the background and swaps the reference: a screening holds
 * the CurrentLists it started with, so it answers from exactly one version of each list.
 */
export class ListIndexProvider {
  private snapshot: CurrentLists;
  private signature: string;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Rebuilds run one after another; a refresh waits for its own. */
  private queue: Promise<void> = Promise.resolve();
  private rebuilding = false;

  private constructor(
    private readonly db: Kysely<DB>,
    private readonly log: TaskLogger,
    private readonly pollMs: number,
    first: { lists: CurrentLists; signature: string },
  ) {
    this.snapshot = first.lists;
    this.signature = first.signature;
  }

  static async start(db: Kysely<DB>, log: TaskLogger, options: { pollMs?: number } = {}): Promise<ListIndexProvider> {
    const provider = new ListIndexProvider(db, log, options.pollMs ?? 5000, await loadCurrentLists(db));
    provider.schedule();
    return provider;
  }

  current(): CurrentLists {
    return this.snapshot;
  }

  /** Rebuilds from the database now (after an import in this process, and for tests). */
  refresh(): Promise<void> {
    const run = this.queue.then(() => this.rebuild());
    this.queue = run.catch(() => undefined);
    return run;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }

  private async rebuild(): Promise<void> {
    if (this.closed) return;
    this.rebuilding = true;
    try {
      const next = await loadCurrentLists(this.db);
      if (this.closed) return;
      this.snapshot = next.lists;
      this.signature = next.signature;
      const total = next.lists.lists.reduce((sum, list) => sum + list.entities, 0);
      this.log.info({ lists: next.lists.lists.map((list) => `${list.source}@${list.version}`), entities: total }, 'screening index rebuilt');
    } finally {
      this.rebuilding = false;
    }
  }

  private schedule(): void {
    if (this.closed) return;
    this.timer = setTimeout(() => void this.poll().finally(() => this.schedule()), this.pollMs);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    if (this.rebuilding) return;
    try {
      const versions = await this.db.selectFrom('screening_sources').select(['name', 'current_version']).where('current_version', '>', 0).orderBy('name').execute();
      if (signatureOf(versions) !== this.signature) await this.refresh();
    } catch (err) {
      // The serving index stays; the next poll tries again.
      if (!this.closed) this.log.error({ err }, 'screening index: reloading the lists failed');
    }
  }
}

/** The entities a version added or changed (monitoring screens its subjects against these). */
export async function changedEntities(db: Kysely<DB>, source: string, version: number): Promise<IndexedEntity[]> {
  const rows = await db.selectFrom('screening_entities').select('data').where('source', '=', source).where('from_version', '=', version).orderBy('entity_id').execute();
  return rows.map((row) => Object.assign(asEntity(row.data), { source, listVersion: version }));
}

/** The sources a screening can run against: those with a version loaded. */
export async function listSourceNames(db: Kysely<DB>): Promise<string[]> {
  const rows = await db.selectFrom('screening_sources').select('name').where('current_version', '>', 0).orderBy('name').execute();
  return rows.map((row) => row.name);
}
