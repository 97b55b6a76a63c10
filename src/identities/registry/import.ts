import { performance } from 'node:perf_hooks';
import readline from 'node:readline';
import { Readable } from 'node:stream';
import { sql, type Kysely } from 'kysely';
import { Compile, type Validator } from 'typebox/compile';
import { keyringOf, protectionOf, type FieldProtection } from '../../platform/crypto/fields.js';
import type { Keyring } from '../../platform/crypto/keyring.js';
import type { DB } from '../../platform/db/schema.js';
import { normalizePhone } from '../matching.js';
import { IDENTITY_TYPES, registryKey, type IdentityType, type NinRecord, type RecordOf } from '../records.js';
import { describeErrors, jsonProblem, safeName } from './import-errors.js';
import { IMPORT_SCHEMAS, toStoredRecord } from './import-records.js';
import { checkablePhoto, PhotoChecker, type PhotoCheckOptions, type PhotoCounts, type PhotoReport } from './photo-check.js';

export interface ImportProgress {
  /** Non-blank lines read so far. */
  read: number;
  /** Lines stored so far: their batches are committed. */
  imported: number;
  rejected: number;
  elapsedMs: number;
  /** The photo check so far; absent when the import does not check photos. */
  photos?: PhotoCounts & { waiting: number };
}

export interface ImportOptions {
  /** Called every `progressEveryMs` while the import runs, and once more when it has ended. */
  onProgress?(progress: ImportProgress): void;
  progressEveryMs?: number;
  /** Records per INSERT statement. */
  batchSize?: number;
  /**
   * Checks every accepted record's photo for a face, as the face match will read it
   * (photo-check.ts), and reports the ones without. Off unless asked: `vouch registry import`
   * asks by default; the demo registry's placeholder silhouettes and the tests' records need no
   * model loaded to be stored.
   */
  checkPhotos?: PhotoCheckOptions;
}

export interface ImportResult {
  /** Lines stored (a key repeated in the file counts once per line). */
  imported: number;
  rejected: number;
  /**
   * What the stored lines did: `new` created a key, `updated` replaced a different record,
   * `unchanged` found its record already stored as it is. Importing a file again reports every
   * line unchanged. A key repeated within a batch is compared with the line before it.
   */
  new: number;
  updated: number;
  unchanged: number;
  /** The first MAX_ERRORS rejected lines, 1-based line numbers of the input. */
  errors: { line: number; message: string }[];
  /**
   * The photos of the imported lines (BVN, NIN and drivers license records; a vNIN's photo is a
   * URL and is not fetched): how many were checked, how many showed no face or were no image, and
   * the first 100 such lines. A reported record is stored like any other.
   */
  photos: PhotoReport;
}

const DEFAULT_BATCH_SIZE = 2000;
const DEFAULT_PROGRESS_EVERY_MS = 1000;
const MAX_ERRORS = 100;
const WRITES_AHEAD = 2;
// Joins a batch's column values into one text parameter each, split again by string_to_array:
// far cheaper than array parameters, whose literal escaping dominates the load time. No stored
// value can contain it: JSON.stringify escapes every control character, keys match their
// type's alphanumeric pattern and phones are E.164.
const SEPARATOR = '\x1e';
// NUL and unpaired surrogates survive JSON.parse but PostgreSQL rejects them in jsonb, which
// would fail a whole batch; such lines are rejected on their own instead.
const UNSTORABLE = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const SURROGATE = /[\uD800-\uDFFF]/;

interface Row {
  type: IdentityType;
  key: string;
  phone: string | null;
  record: string;
}

/** How the rows of one statement changed the registry; the others were already stored as they are. */
interface Written {
  inserted: number;
  updated: number;
}

const validators = new Map<string, Validator>(IDENTITY_TYPES.map((type) => [type, Compile(IMPORT_SCHEMAS[type])]));

/**
 * Loads registry records from JSONL (`{"type": T, "record": R}` a line; docs/registry.md). A
 * stream is read as text; an async iterable yields chunks of text, split into lines at newlines.
 * A rejected line stores nothing and does not stop the import. Each batch is one upsert statement,
 * stored whole or not at all, so an interrupted import leaves whole batches and importing the
 * file again completes it: keys already stored as the file has them count as unchanged. A
 * database failure stops the import with the error: the batches before the failed one are
 * stored, and so may be the one written beside it (see BatchWriter). With `checkPhotos`, reading
 * waits for the photo checks when they fall behind (photo-check.ts); a photo without a face is
 * reported, never rejected, and a failure of the face engine stops the import as a database
 * failure does.
 */
export async function importRegistry(
  db: Kysely<DB>,
  input: NodeJS.ReadableStream | AsyncIterable<string>,
  options: ImportOptions = {},
): Promise<ImportResult> {
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  const checker = options.checkPhotos ? new PhotoChecker(options.checkPhotos) : undefined;
  let unchecked = 0;
  const result: ImportResult = {
    imported: 0, rejected: 0, new: 0, updated: 0, unchanged: 0, errors: [],
    photos: { checked: 0, noFace: 0, unreadable: 0, unchecked: 0, problems: [] },
  };
  // Keyed by type and key: one statement cannot upsert a row twice, and the last line wins.
  let batch = new Map<string, Row>();
  let batchLines = 0;
  let read = 0;
  const writer = new BatchWriter(db, (written, rows) => {
    result.new += written.inserted;
    result.updated += written.updated;
    result.unchanged += rows - written.inserted - written.updated;
  });
  const flush = async () => {
    if (batchLines === 0) return;
    const full = batch;
    const lines = batchLines;
    batch = new Map();
    batchLines = 0;
    await writer.add(full, lines);
  };

  const started = performance.now();
  const progress = (): ImportProgress => ({
    read,
    imported: writer.storedLines,
    rejected: result.rejected,
    elapsedMs: performance.now() - started,
    ...(checker ? { photos: { ...checker.counts, waiting: checker.waiting } } : {}),
  });
  const onProgress = options.onProgress;
  const ticker = onProgress ? setInterval(() => onProgress(progress()), options.progressEveryMs ?? DEFAULT_PROGRESS_EVERY_MS) : undefined;
  ticker?.unref();

  const stream = 'pipe' in input ? input : Readable.from(input);
  const lines = readline.createInterface({ input: stream, crlfDelay: Infinity });
  let lineNumber = 0;
  try {
    for await (const text of lines) {
      lineNumber += 1;
      const line = lineNumber === 1 ? text.replace(/^\uFEFF/, '') : text;
      if (line.trim() === '') continue;
      read += 1;
      const parsed = parseLine(line);
      if (typeof parsed === 'string') {
        result.rejected += 1;
        if (result.errors.length < MAX_ERRORS) result.errors.push({ line: lineNumber, message: parsed });
        continue;
      }
      const { row, photo } = parsed;
      result.imported += 1;
      // Waits while the checks are behind: the line's batch is stored whatever its photo shows.
      if (photo !== undefined) {
        if (checker) await checker.add(lineNumber, photo);
        else unchecked += 1;
      }
      const id = `${row.type}:${row.key}`;
      const earlier = batch.get(id);
      // Only a batch's last line of a key reaches the database, which counts it; each line
      // before it is replaced unwritten, so this line is counted against it instead.
      if (earlier !== undefined) {
        if (earlier.record === row.record && earlier.phone === row.phone) result.unchanged += 1;
        else result.updated += 1;
      }
      batch.set(id, row);
      batchLines += 1;
      if (batchLines >= batchSize) await flush();
    }
    await flush();
    await writer.finish();
    await checker?.finish();
  } finally {
    clearInterval(ticker);
    lines.close();
    await Promise.all([writer.settle(), checker?.settle()]);
  }
  result.photos = checker ? checker.report() : { ...result.photos, unchecked };
  onProgress?.(progress());
  return result;
}

/**
 * Writes batches while the next ones are parsed, two statements at a time: PostgreSQL spends
 * part of each statement waiting (commit flush, round trips) that the other one fills. A batch
 * starts once every batch before the previous one is stored, and also waits for the previous one
 * when they share a key, so the last line of a key wins. A failed write stops every later batch
 * but the one already running beside it.
 */
class BatchWriter {
  /** Lines of the batches committed so far. */
  storedLines = 0;
  private last: { keys: Map<string, Row>; stored: Promise<void> } | undefined;
  // Settles once the batch before the last one and every batch before it are stored.
  private storedBeforeLast: Promise<void> = Promise.resolve();
  private readonly unfinished: Promise<void>[] = [];

  constructor(
    private readonly db: Kysely<DB>,
    private readonly onStored: (written: Written, rows: number) => void,
  ) {}

  /** Queues a batch of `lines` lines; waits while WRITES_AHEAD batches are unfinished. */
  async add(batch: Map<string, Row>, lines: number): Promise<void> {
    const last = this.last;
    const storedThroughLast = last?.stored ?? Promise.resolve();
    const sharesKey = last !== undefined && [...batch.keys()].some((key) => last.keys.has(key));
    const written = (sharesKey ? storedThroughLast : this.storedBeforeLast).then(() => writeBatch(this.db, [...batch.values()]));
    // allSettled, not all: `stored` must not settle while this batch's statement still runs.
    const stored = Promise.allSettled([storedThroughLast, written]).then(([before, own]) => {
      if (before.status === 'rejected') throw before.reason;
      if (own.status === 'rejected') throw own.reason;
      this.storedLines += lines;
      this.onStored(own.value, batch.size);
    });
    // Awaited by add, finish or settle; until then a failure must not count as unhandled.
    stored.catch(() => {});
    this.storedBeforeLast = storedThroughLast;
    this.last = { keys: batch, stored };
    this.unfinished.push(stored);
    while (this.unfinished.length > WRITES_AHEAD) await this.unfinished.shift();
  }

  /** Waits until every batch is stored; rejects with the first failure. */
  async finish(): Promise<void> {
    while (this.unfinished.length > 0) await this.unfinished.shift();
  }

  /** Waits until no statement is running, whatever the outcome. */
  async settle(): Promise<void> {
    await Promise.allSettled(this.unfinished);
  }
}

/**
 * One statement, so one transaction: the batch is stored whole or not at all. A key already
 * holding the same record and phone is left alone (not even `updated_at` moves), which is what
 * makes a re-run cheap and its `unchanged` count true; `xmax = 0` tells an inserted row from an
 * updated one. Nothing is stored in clear (docs/data-protection.md): the key and the phone are
 * blind indexes, the record is ciphertext, and `record_mac` (an HMAC of the record) is what tells
 * an unchanged record from a changed one, since two encryptions of a record never match.
 */
async function writeBatch(db: Kysely<DB>, rows: Row[]): Promise<Written> {
  const protection = protectionOf(db);
  const keyring = keyringOf(db);
  const stored = rows.map((row) => registryRow(protection, keyring, row));
  const column = (pick: (row: StoredRow) => string) => stored.map(pick).join(SEPARATOR);
  const { rows: [counts] } = await sql<{ inserted: string; updated: string }>`
    with upserted as (
      insert into registry_records (type, key, phone, record, record_mac)
      select t, k, nullif(p, ''), r::jsonb, m
      from unnest(
        string_to_array(${column((row) => row.type)}, ${SEPARATOR}),
        string_to_array(${column((row) => row.key)}, ${SEPARATOR}),
        string_to_array(${column((row) => row.phone ?? '')}, ${SEPARATOR}),
        string_to_array(${column((row) => row.record)}, ${SEPARATOR}),
        string_to_array(${column((row) => row.recordMac)}, ${SEPARATOR})
      ) as x (t, k, p, r, m)
      on conflict (type, key) do update
        set phone = excluded.phone, record = excluded.record, record_mac = excluded.record_mac, updated_at = now()
        where registry_records.record_mac is distinct from excluded.record_mac or registry_records.phone is distinct from excluded.phone
      returning xmax = 0 as inserted
    )
    select count(*) filter (where inserted) as inserted, count(*) filter (where not inserted) as updated from upserted
  `.execute(db);
  return { inserted: Number(counts?.inserted ?? 0), updated: Number(counts?.updated ?? 0) };
}

interface StoredRow {
  type: IdentityType;
  key: string;
  phone: string | null;
  record: string;
  recordMac: string;
}

/** A registry row as stored: blind indexes for the key and phone, the record encrypted and MACed. */
function registryRow(protection: FieldProtection, keyring: Keyring, row: Row): StoredRow {
  return {
    type: row.type,
    key: registryIndex(keyring, row.type, row.key),
    phone: row.phone === null ? null : keyring.blindIndex('phone', row.phone),
    record: protection.protect('json', row.record) as string,
    recordMac: keyring.blindIndex('registry-record', `${row.type}\0${row.record}`),
  };
}

/**
 * The stored key of a registry record: the blind index of its normalised key (`registryKey`)
 * in the domain of its type ("bvn", "nin", ...), the same index any other table would keep.
 */
export function registryIndex(keyring: Keyring, type: IdentityType, key: string): string {
  return keyring.blindIndex(type, key);
}

/** The row a line stores and the photo it holds for the face match, or why it is rejected. */
function parseLine(line: string): { row: Row; photo: string | undefined } | string {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    return jsonProblem(error);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return 'must be a JSON object {"type": ..., "record": {...}}';
  }
  const unexpected: string[] = [];
  for (const name in value) if (name !== 'type' && name !== 'record') unexpected.push(`${safeName(name)} is not allowed (only type and record)`);
  if (unexpected.length > 0) return unexpected.join('; ');
  const { type, record } = value as { type?: unknown; record?: unknown };
  const validator = typeof type === 'string' ? validators.get(type) : undefined;
  if (validator === undefined) {
    const got = type === undefined ? 'is required' : typeof type === 'string' && safeName(type) === type ? `"${type}" is unknown` : 'is unknown';
    return `type ${got}: expected one of ${IDENTITY_TYPES.join(', ')}`;
  }
  if (record === undefined) return 'record is required';
  const identityType = type as IdentityType;
  if (!validator.Check(record)) return describeErrors(validator.Errors(record), IMPORT_SCHEMAS[identityType]);
  const fields = record as Record<string, unknown>;
  // Only a \u escape or a raw surrogate can put such a character in a parsed string.
  if (line.includes('\\u') || SURROGATE.test(line)) {
    for (const [name, field] of Object.entries(fields)) {
      if (typeof field === 'string' && UNSTORABLE.test(field)) {
        return `record.${name} contains a NUL character or an unpaired surrogate`;
      }
    }
  }
  const key = registryKey(identityType, record as RecordOf[IdentityType]);
  const stored = toStoredRecord(identityType, fields, key);
  if (typeof stored === 'string') return stored;
  const row: Row = {
    type: identityType,
    key,
    // The same normalisation as the NIN-by-phone route; an invalid number is kept but not keyed.
    phone: identityType === 'nin' ? (normalizePhone((stored as NinRecord).phone) ?? null) : null,
    record: JSON.stringify(stored),
  };
  return { row, photo: checkablePhoto(identityType, stored) };
}
