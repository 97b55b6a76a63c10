import readline from 'node:readline';
import { Readable } from 'node:stream';
import { sql, type Kysely } from 'kysely';
import { Compile, type Validator } from 'typebox/compile';
import type { TLocalizedValidationError } from 'typebox/error';
import type { DB } from '../../platform/db/schema.js';
import { normalizePhone } from '../matching.js';
import { IDENTITY_TYPES, RECORD_SCHEMAS, registryKey, type IdentityType, type NinRecord, type RecordOf } from '../records.js';

export interface ImportOptions {
  /** Called after each batch is stored, with the number of (non-blank) lines read so far. */
  onProgress?(done: number): void;
  /** Records per INSERT statement. */
  batchSize?: number;
}

export interface ImportResult {
  /** Lines stored (a key repeated in the file counts once per line). */
  imported: number;
  rejected: number;
  /** The first MAX_ERRORS rejected lines, 1-based line numbers of the input. */
  errors: { line: number; message: string }[];
}

const DEFAULT_BATCH_SIZE = 2000;
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

const validators = new Map<string, Validator>(IDENTITY_TYPES.map((type) => [type, Compile(RECORD_SCHEMAS[type])]));

/**
 * Loads registry records from JSONL (`{"type": T, "record": R}` a line; DESIGN.md "Registry
 * import format"). A stream is read as text; an async iterable yields chunks of text, split into
 * lines at newlines. A rejected line stores nothing and does not stop the import. A database
 * failure does, with the error: the batches before the failed one are stored, and so may be the
 * one written beside it (see BatchWriter); importing the file again completes it.
 */
export async function importRegistry(
  db: Kysely<DB>,
  input: NodeJS.ReadableStream | AsyncIterable<string>,
  options: ImportOptions = {},
): Promise<ImportResult> {
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  const result: ImportResult = { imported: 0, rejected: 0, errors: [] };
  // Keyed by type and key: one statement cannot upsert a row twice, and the last line wins.
  let batch = new Map<string, Row>();
  let batchLines = 0;
  let done = 0;
  const writer = new BatchWriter(db, options.onProgress);
  const flush = async () => {
    if (batchLines === 0) return;
    const full = batch;
    batch = new Map();
    batchLines = 0;
    await writer.add(full, done);
  };

  const stream = 'pipe' in input ? input : Readable.from(input);
  const lines = readline.createInterface({ input: stream, crlfDelay: Infinity });
  let lineNumber = 0;
  try {
    for await (const text of lines) {
      lineNumber += 1;
      const line = lineNumber === 1 ? text.replace(/^\uFEFF/, '') : text;
      if (line.trim() === '') continue;
      done += 1;
      const row = parseLine(line);
      if (typeof row === 'string') {
        result.rejected += 1;
        if (result.errors.length < MAX_ERRORS) result.errors.push({ line: lineNumber, message: row });
        continue;
      }
      result.imported += 1;
      batch.set(`${row.type}:${row.key}`, row);
      batchLines += 1;
      if (batchLines >= batchSize) await flush();
    }
    await flush();
    await writer.finish();
  } finally {
    lines.close();
    await writer.settle();
  }
  if (writer.reported !== done) options.onProgress?.(done);
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
  /** Lines covered by the progress reported so far. */
  reported = 0;
  private last: { keys: Map<string, Row>; stored: Promise<void> } | undefined;
  // Settles once the batch before the last one and every batch before it are stored.
  private storedBeforeLast: Promise<void> = Promise.resolve();
  private readonly unfinished: Promise<void>[] = [];

  constructor(
    private readonly db: Kysely<DB>,
    private readonly onProgress: ((done: number) => void) | undefined,
  ) {}

  /** Queues a batch of the lines up to `doneAt`; waits while WRITES_AHEAD batches are unfinished. */
  async add(batch: Map<string, Row>, doneAt: number): Promise<void> {
    const last = this.last;
    const storedThroughLast = last?.stored ?? Promise.resolve();
    const sharesKey = last !== undefined && [...batch.keys()].some((key) => last.keys.has(key));
    const written = (sharesKey ? storedThroughLast : this.storedBeforeLast).then(() => writeBatch(this.db, [...batch.values()]));
    // allSettled, not all: `stored` must not settle while this batch's statement still runs.
    const stored = Promise.allSettled([storedThroughLast, written]).then(([before, own]) => {
      if (before.status === 'rejected') throw before.reason;
      if (own.status === 'rejected') throw own.reason;
      this.reported = doneAt;
      this.onProgress?.(doneAt);
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

async function writeBatch(db: Kysely<DB>, rows: Row[]): Promise<void> {
  const column = (pick: (row: Row) => string) => rows.map(pick).join(SEPARATOR);
  await sql`
    insert into registry_records (type, key, phone, record)
    select t, k, nullif(p, ''), r::jsonb
    from unnest(
      string_to_array(${column((row) => row.type)}, ${SEPARATOR}),
      string_to_array(${column((row) => row.key)}, ${SEPARATOR}),
      string_to_array(${column((row) => row.phone ?? '')}, ${SEPARATOR}),
      string_to_array(${column((row) => row.record)}, ${SEPARATOR})
    ) as x (t, k, p, r)
    on conflict (type, key) do update
      set phone = excluded.phone, record = excluded.record, updated_at = now()
  `.execute(db);
}

/** The row a line stores, or why it is rejected. */
function parseLine(line: string): Row | string {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    return `not valid JSON (${(error as Error).message})`;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return 'must be a JSON object {"type": ..., "record": {...}}';
  }
  const unexpected: string[] = [];
  for (const name in value) if (name !== 'type' && name !== 'record') unexpected.push(`${name} is not allowed (only type and record)`);
  if (unexpected.length > 0) return unexpected.join('; ');
  const { type, record } = value as { type?: unknown; record?: unknown };
  const validator = typeof type === 'string' ? validators.get(type) : undefined;
  if (validator === undefined) {
    const got = type === undefined ? 'is required' : `${JSON.stringify(type)} is unknown`;
    return `type ${got}: expected one of ${IDENTITY_TYPES.join(', ')}`;
  }
  if (record === undefined) return 'record is required';
  if (!validator.Check(record)) return describeErrors(validator.Errors(record), RECORD_SCHEMAS[type as IdentityType]);
  // Only a \u escape or a raw surrogate can put such a character in a parsed string.
  if (line.includes('\\u') || SURROGATE.test(line)) {
    for (const [name, field] of Object.entries(record as Record<string, unknown>)) {
      if (typeof field === 'string' && UNSTORABLE.test(field)) {
        return `record.${name} contains a NUL character or an unpaired surrogate`;
      }
    }
  }
  const identityType = type as IdentityType;
  return {
    type: identityType,
    key: registryKey(identityType, record as RecordOf[IdentityType]),
    // The same normalisation as the NIN-by-phone route; an invalid number is kept but not keyed.
    phone: identityType === 'nin' ? (normalizePhone((record as NinRecord).phone) ?? null) : null,
    record: JSON.stringify(record),
  };
}

type JsonSchema = {
  anyOf?: JsonSchema[];
  const?: unknown;
  type?: string;
  pattern?: string;
  minimum?: number;
  description?: string;
  [key: string]: unknown;
};

/** TypeBox errors as one line naming each field: `record.bvn must match pattern ^\d{11}$`. */
function describeErrors(errors: TLocalizedValidationError[], root: unknown): string {
  // A union reports each failed branch and then itself; only the union's own error is described.
  const unions = errors.filter((error) => error.keyword === 'anyOf').map((error) => `${error.schemaPath}/anyOf/`);
  const messages: string[] = [];
  for (const error of errors) {
    if (unions.some((prefix) => error.schemaPath.startsWith(prefix))) continue;
    const path = fieldPath(error.instancePath);
    const schema = schemaAt(root, error.schemaPath);
    switch (error.keyword) {
      case 'required':
        for (const name of error.params.requiredProperties) messages.push(`${path}.${name} is required`);
        break;
      case 'additionalProperties':
        for (const name of error.params.additionalProperties) messages.push(`${path}.${name} is not allowed`);
        break;
      case 'boolean':
        // `additionalProperties: false` reports each extra field twice; the error above names it.
        if (!error.schemaPath.endsWith('/additionalProperties')) messages.push(`${path} ${error.message}`);
        break;
      case 'anyOf':
        messages.push(`${path} must be ${describeUnion(schema?.anyOf ?? [])}`);
        break;
      case 'type':
        messages.push(`${path} must be ${withArticle(String(error.params.type))}${explain(schema)}`);
        break;
      case 'pattern':
        messages.push(`${path} must match pattern ${error.params.pattern}${explain(schema)}`);
        break;
      default:
        messages.push(`${path} ${error.message}`);
    }
  }
  return messages.join('; ');
}

function fieldPath(instancePath: string): string {
  const segments = instancePath
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
  return ['record', ...segments].join('.');
}

function schemaAt(root: unknown, schemaPath: string): JsonSchema | undefined {
  let node: unknown = root;
  for (const segment of schemaPath.split('/').slice(1)) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[segment];
  }
  return typeof node === 'object' && node !== null ? (node as JsonSchema) : undefined;
}

function describeUnion(branches: JsonSchema[]): string {
  if (branches.length > 0 && branches.every((branch) => 'const' in branch)) {
    return `one of ${branches.map((branch) => JSON.stringify(branch.const)).join(', ')}`;
  }
  return branches
    .map((branch) => {
      const kind = withArticle(branch.type ?? 'value');
      if (branch.pattern !== undefined) return `${kind} matching ${branch.pattern}`;
      if (branch.minimum !== undefined) return `${kind} >= ${branch.minimum}`;
      return kind;
    })
    .join(' or ');
}

function withArticle(noun: string): string {
  return `${/^[aeiou]/.test(noun) ? 'an' : 'a'} ${noun}`;
}

function explain(schema: JsonSchema | undefined): string {
  return schema?.description ? ` (${schema.description})` : '';
}
