import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB } from '../../platform/db/schema.js';
import type { ListEntity } from '../entity.js';
import { LIST_FORMATS, ListFormatError, parseList, type ListFiles, type ListFormat } from '../formats/index.js';
import { canonicalJson, sha256 } from './canonical.js';
import { checkSourceName, ListSourceError } from './sources.js';
import type { ListOrigin } from './tables.js';

export type { ListFiles };

export interface ImportInput {
  source: string;
  format: ListFormat;
  files: ListFiles;
  origin?: ListOrigin;
  /** Overrides the source's max_shrink for this import (0–1). */
  maxShrink?: number;
  /** Takes a version that shrinks past max_shrink. */
  force?: boolean;
}

export interface ImportResult {
  source: string;
  /** The new version, or the current one when nothing changed. */
  version: number;
  entities: number;
  added: number;
  removed: number;
  changed: number;
  unchanged: boolean;
}

/**
 * A list version refused: a bad or truncated file (with the line, when the parser knows it), a
 * list that shrinks past the guard, a source of another format. Nothing was changed.
 */
export class ListImportError extends Error {
  override name = 'ListImportError';
  constructor(
    message: string,
    readonly reason: 'format' | 'shrink' | 'empty' | 'source',
    readonly line?: number,
  ) {
    super(message);
  }
}

/** Rows per INSERT / UPDATE statement: 6 parameters a row stays well under PostgreSQL's 65,535. */
const BATCH = 1000;

/** sha256 over the main file and each companion in name order: the same bytes give the same digest. */
export function filesDigest(files: ListFiles): string {
  const parts = [sha256(files.main)];
  for (const name of Object.keys(files.companions ?? {}).sort()) parts.push(`${name}:${sha256(files.companions![name]!)}`);
  return parts.length === 1 ? parts[0]! : sha256(parts.join('\n'));
}

function isListFormat(format: string): format is ListFormat {
  return (LIST_FORMATS as readonly string[]).includes(format);
}

/** Reads the file into entities keyed by id; a parse error or a repeated id refuses the file. */
async function readEntities(source: string, format: ListFormat, files: ListFiles): Promise<Map<string, { entity: ListEntity; json: string; digest: string }>> {
  const entities = new Map<string, { entity: ListEntity; json: string; digest: string }>();
  try {
    for (const entity of await parseList(format, { main: files.main, companions: files.companions ?? {} })) {
      if (entities.has(entity.id)) throw new ListImportError(`${source}: the file has entity id ${JSON.stringify(entity.id)} twice; nothing was changed`, 'format');
      const json = canonicalJson(entity);
      entities.set(entity.id, { entity, json, digest: sha256(json) });
    }
  } catch (err) {
    if (err instanceof ListFormatError) {
      // The parser's message starts with "line N: " when it knows the line.
      throw new ListImportError(`${source}: the ${format} file is not valid: ${err.message}; nothing was changed`, 'format', err.line);
    }
    throw err;
  }
  return entities;
}

const count = (n: number) => n.toLocaleString('en-US');

/** A version changing at least this many rows refreshes the table's planner statistics. */
const ANALYZE_AFTER_ROWS = 1_000;

/**
 * Loads one version of a source (made on first use, with the format given), diffed against the
 * current version by entity id and canonical JSON. Everything is written in one transaction that
 * holds the source row's lock: a reader sees the old version or the new one, and two imports of
 * one source run one after the other. A refused file changes nothing; a file with the same
 * bytes, or with no entity changed, makes no version (`unchanged: true`).
 */
export async function importList(db: Kysely<DB>, input: ImportInput): Promise<ImportResult> {
  const source = checkSourceName(input.source);
  if (!isListFormat(input.format)) throw new ListImportError(`format must be one of ${LIST_FORMATS.join(', ')}, got ${JSON.stringify(input.format)}`, 'source');
  if (input.maxShrink !== undefined && !(input.maxShrink >= 0 && input.maxShrink <= 1)) throw new ListImportError('maxShrink must be between 0 and 1', 'source');
  const digest = filesDigest(input.files);
  // The same bytes as the serving version (a publisher without ETags, fetched every 15 minutes): no need to parse them.
  const same = await sameAsCurrent(db, source, input.format, digest);
  if (same) return same;
  const entities = await readEntities(source, input.format, input.files);
  if (entities.size === 0) throw new ListImportError(`${source}: the file has no entities; nothing was changed`, 'empty');

  const result = await db.transaction().execute(async (trx) => {
    await trx.insertInto('screening_sources').values({ name: source, format: input.format }).onConflict((oc) => oc.column('name').doNothing()).execute();
    const row = await trx.selectFrom('screening_sources').select(['format', 'current_version', 'entity_count', 'max_shrink']).where('name', '=', source).forUpdate().executeTakeFirstOrThrow();
    if (row.format !== input.format) throw new ListImportError(`source ${source} is in format ${row.format}, not ${input.format}`, 'source');
    const current = row.current_version;
    const unchanged: ImportResult = { source, version: current, entities: row.entity_count, added: 0, removed: 0, changed: 0, unchanged: true };
    if (current > 0) {
      const last = await trx.selectFrom('screening_list_versions').select('sha256').where('source', '=', source).where('version', '=', current).executeTakeFirst();
      if (last?.sha256 === digest) return unchanged;
    }

    const existing = await currentDigests(trx, source);
    const added: string[] = [];
    const changed: string[] = [];
    for (const [id, next] of entities) {
      const before = existing.get(id);
      if (before === undefined) added.push(id);
      else if (before !== next.digest) changed.push(id);
    }
    const removed = [...existing.keys()].filter((id) => !entities.has(id));
    if (current > 0 && added.length + changed.length + removed.length === 0) return unchanged;

    const maxShrink = input.maxShrink ?? row.max_shrink;
    if (!input.force && existing.size > 0 && removed.length / existing.size > maxShrink) {
      const share = maxShrink === 0.5 ? 'more than half' : `more than ${Math.round(maxShrink * 100)}%`;
      throw new ListImportError(
        `${source}: the new file has ${count(entities.size)} entities where version ${current} has ${count(existing.size)}: ${count(removed.length)} would go, ${share} of the list; nothing was changed (pass --force if that is right)`,
        'shrink',
      );
    }

    const version = current + 1;
    await trx
      .insertInto('screening_list_versions')
      .values({ source, version, entities: entities.size, added: added.length, removed: removed.length, changed: changed.length, sha256: digest, origin: input.origin ?? 'import' })
      .execute();
    const closing = [...removed, ...changed];
    for (let i = 0; i < closing.length; i += BATCH) {
      await trx.updateTable('screening_entities').set({ to_version: version }).where('source', '=', source).where('to_version', 'is', null).where('entity_id', 'in', closing.slice(i, i + BATCH)).execute();
    }
    const writing = [...added, ...changed];
    for (let i = 0; i < writing.length; i += BATCH) {
      const values = writing.slice(i, i + BATCH).map((id) => {
        const next = entities.get(id)!;
        return { source, entity_id: id, from_version: version, data: next.json, digest: next.digest };
      });
      await trx.insertInto('screening_entities').values(values).execute();
    }
    await trx.updateTable('screening_sources').set({ current_version: version, entity_count: entities.size }).where('name', '=', source).execute();
    return { source, version, entities: entities.size, added: added.length, removed: removed.length, changed: changed.length, unchanged: false };
  });
  // A large version changes the table's statistics at once, and autovacuum's analyze comes later.
  // Without fresh ones PostgreSQL took the new rows for a handful and read a large source by
  // sorting all of it for every page: a server holding 1,000,000 fresh entities took over two
  // minutes to load them instead of seconds (docs/benchmarks.md, thirty-third session).
  if (!result.unchanged && result.added + result.removed + result.changed >= ANALYZE_AFTER_ROWS) await sql`analyze screening_entities`.execute(db);
  return result;
}

async function sameAsCurrent(db: Kysely<DB>, source: string, format: ListFormat, digest: string): Promise<ImportResult | undefined> {
  const row = await db
    .selectFrom('screening_sources as s')
    .innerJoin('screening_list_versions as v', (join) => join.onRef('v.source', '=', 's.name').onRef('v.version', '=', 's.current_version'))
    .select(['s.format', 's.current_version', 's.entity_count', 'v.sha256'])
    .where('s.name', '=', source)
    .executeTakeFirst();
  if (!row || row.format !== format || row.sha256 !== digest) return undefined;
  return { source, version: row.current_version, entities: row.entity_count, added: 0, removed: 0, changed: 0, unchanged: true };
}

/** The digest of each current entity of a source, read by keyset so no single result is the whole list. */
async function currentDigests(trx: Transaction<DB>, source: string): Promise<Map<string, string>> {
  const digests = new Map<string, string>();
  let after = '';
  for (;;) {
    const rows = await trx
      .selectFrom('screening_entities')
      .select(['entity_id', 'digest'])
      .where('source', '=', source)
      .where('to_version', 'is', null)
      .where('entity_id', '>', after)
      .orderBy('entity_id')
      .limit(10_000)
      .execute();
    for (const row of rows) digests.set(row.entity_id, row.digest);
    if (rows.length < 10_000) return digests;
    after = rows[rows.length - 1]!.entity_id;
  }
}

/** A ListSourceError is also a refusal the CLI prints as one line. */
export function isListRefusal(err: unknown): err is ListImportError | ListSourceError {
  return err instanceof ListImportError || err instanceof ListSourceError;
}
