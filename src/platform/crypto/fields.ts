import type {
  ColumnUpdateNode,
  InsertQueryNode,
  Kysely,
  KyselyPlugin,
  OperationNode,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
  UpdateQueryNode,
  ValueNode,
} from 'kysely';
import { ENVELOPE_PREFIX, type Keyring } from './keyring.js';

/**
 * Which columns hold personal data, encrypted on the way in and decrypted on the way out by the
 * database's Kysely plugin (below), so the code around them reads and writes plain values.
 *
 * - `json`: a json/jsonb column. The value written is JSON text (or an object); what is stored is
 *   a JSON string holding the ciphertext of that text; read back, it is the parsed value again.
 * - `value`: a text column. What is stored is the ciphertext of the value's JSON (a string, a
 *   number: latitude and longitude come back as numbers).
 *
 * A new personal column is one line here. Such a column cannot be filtered, sorted or compared in
 * SQL (its ciphertext is random): look it up through a blind index (`Keyring.blindIndex`) kept in
 * a column of its own instead, as `registry_records.key` and `address_verifications.applicant_id_key` are.
 */
export const PROTECTED_COLUMNS: Record<string, Record<string, 'json' | 'value'>> = {
  registry_records: { record: 'json' },
  upstream_cache: { record: 'json' },
  address_verifications: { applicant: 'json', neighbor: 'json', street: 'value', city: 'value', landmark: 'value', latitude: 'value', longitude: 'value', consent_reference: 'value' },
  business_verifications: { applicant: 'json', neighbor: 'json', findings: 'json', consent_reference: 'value' },
  guarantor_verifications: { applicant: 'json', firstname: 'value', lastname: 'value', phone: 'value', email: 'value', address: 'json', response: 'json', consent_reference: 'value' },
  employment_verifications: { applicant: 'json', employer_email: 'value', employer_phone: 'value', attestation: 'json', consent_reference: 'value' },
  field_tasks: { held_report: 'json' },
  field_report_keys: { response: 'json' },
  outbox_messages: { recipient: 'value', subject: 'value', text: 'value', html: 'value', link: 'value', error: 'value' },
  mail_messages: { recipient: 'value', subject: 'value', text: 'value', html: 'value', error: 'value' },
  pending_sign_ups: { email: 'value', name: 'value', organization_name: 'value' },
  webhook_deliveries: { payload: 'json' },
  idempotency_keys: { body: 'value' },
  lookup_consents: { consent_reference: 'value' },
  verification_sessions: { applicant: 'json', metadata: 'json', consent_reference: 'value', user_consent: 'json', id_number: 'value', identity: 'json' },
  session_liveness_attempts: { id_number: 'value' },
  screenings: { subject: 'json', metadata: 'json', consent_reference: 'value' },
  screening_hits: { explanation: 'value', review: 'json' },
};

/**
 * Columns that hold a blind index (`Keyring.blindIndex` in the named domain) of the value the code
 * writes: the plugin turns the value into its index on the way in. The code that looks such a
 * column up computes the same index itself (e.g. `addressIdentityIndex`).
 */
export const BLIND_INDEXED_COLUMNS: Record<string, Record<string, string>> = {
  address_verifications: { applicant_id_key: 'address-identity' },
};

type Treatment = 'json' | 'value' | { index: string };

function treatments(table: string | undefined): Record<string, Treatment> | undefined {
  if (!table) return undefined;
  const protectedColumns = PROTECTED_COLUMNS[table];
  const indexed = BLIND_INDEXED_COLUMNS[table];
  if (!indexed) return protectedColumns;
  return { ...protectedColumns, ...Object.fromEntries(Object.entries(indexed).map(([column, domain]) => [column, { index: domain }])) };
}

/**
 * The result columns whose encrypted values are decrypted: every protected column's name, and
 * `body` (the webhook worker reads `payload::text as body`). Other columns are never touched, so
 * a value that merely looks encrypted (a customer's reference) is returned as it is.
 */
const DECRYPTED_NAMES = new Set([...Object.values(PROTECTED_COLUMNS).flatMap((columns) => Object.keys(columns)), 'body']);

const QUOTED_PREFIX = `"${ENVELOPE_PREFIX}`;

/** Raised when personal data must be stored or read and no key is loaded: says what to do. */
export class NoKeyringError extends Error {
  override name = 'NoKeyringError';
  constructor() {
    super('personal data cannot be encrypted or read: VOUCH_ENCRYPTION_KEY is not set (32 random bytes, e.g. `openssl rand -base64 32`; the same value on every Vouch process that shares this database)');
  }
}

/** Raised (a programming error, caught by the tests) when a protected column is written with an SQL expression. */
export class UnencryptableWriteError extends Error {
  override name = 'UnencryptableWriteError';
}

function nameOf(node: OperationNode | undefined): string | undefined {
  if (!node) return undefined;
  switch (node.kind) {
    case 'TableNode':
      return (node as unknown as { table: { identifier: { name: string } } }).table.identifier.name;
    case 'AliasNode':
      return nameOf((node as unknown as { node: OperationNode }).node);
    case 'ColumnNode':
      return (node as unknown as { column: { name: string } }).column.name;
    case 'ReferenceNode':
      return nameOf((node as unknown as { column: OperationNode }).column);
    default:
      return undefined;
  }
}

/**
 * The Kysely plugin every database of the app carries (src/platform/db/database.ts). Writes of
 * protected columns through the query builder are encrypted; raw SQL is not seen, so code that
 * writes a protected column in raw SQL encrypts itself (the registry import). Results are
 * decrypted by column name, whichever query (builder or raw) produced them.
 */
export class FieldProtection implements KyselyPlugin {
  keyring: Keyring | undefined;

  private ring(): Keyring {
    if (!this.keyring) throw new NoKeyringError();
    return this.keyring;
  }

  /** The stored form of `value` for a column of `kind`; null and undefined stay as they are. */
  protect(kind: Treatment, value: unknown): unknown {
    if (value === null || value === undefined) return value;
    if (typeof kind === 'object') return this.ring().blindIndex(kind.index, String(value));
    if (kind === 'json') {
      const text = typeof value === 'string' ? value : JSON.stringify(value);
      return JSON.stringify(this.ring().encrypt(text));
    }
    return this.ring().encrypt(JSON.stringify(value));
  }

  /** A stored value back in its plain form (values that are not encrypted are returned as they are). */
  reveal(value: unknown): unknown {
    if (typeof value !== 'string') return value;
    if (value.startsWith(ENVELOPE_PREFIX)) return JSON.parse(this.ring().decrypt(value));
    // A json column cast to text (`payload::text`): the JSON text as written.
    if (value.startsWith(QUOTED_PREFIX)) return this.ring().decrypt(JSON.parse(value) as string);
    return value;
  }

  transformQuery({ node }: PluginTransformQueryArgs): RootOperationNode {
    if (node.kind === 'InsertQueryNode') return this.insert(node);
    if (node.kind === 'UpdateQueryNode') return this.update(node);
    return node;
  }

  private insert(node: InsertQueryNode): InsertQueryNode {
    const table = nameOf(node.into);
    const spec = treatments(table);
    if (!spec || !node.columns) return node;
    const kinds = node.columns.map((column) => spec[column.column.name]);
    if (!kinds.some(Boolean)) return node;
    let values = node.values;
    if (values?.kind === 'ValuesNode') {
      const rows = (values as unknown as { values: readonly OperationNode[] }).values.map((row) => {
        if (row.kind === 'PrimitiveValueListNode') {
          const list = (row as unknown as { values: readonly unknown[] }).values;
          return { ...row, values: list.map((value, i) => (kinds[i] ? this.protect(kinds[i], value) : value)) };
        }
        if (row.kind === 'ValueListNode') {
          const list = (row as unknown as { values: readonly OperationNode[] }).values;
          return { ...row, values: list.map((value, i) => (kinds[i] ? this.protectNode(`${table}.${node.columns![i]!.column.name}`, kinds[i], value) : value)) };
        }
        throw new UnencryptableWriteError(`${table}: personal columns must be inserted as values, not ${row.kind}`);
      });
      values = { ...values, values: rows } as OperationNode;
    } else if (values) {
      throw new UnencryptableWriteError(`${table}: personal columns cannot be inserted from a select`);
    }
    const onConflict = node.onConflict?.updates ? { ...node.onConflict, updates: this.updates(table!, spec, node.onConflict.updates) } : node.onConflict;
    return { ...node, values, onConflict } as InsertQueryNode;
  }

  private update(node: UpdateQueryNode): UpdateQueryNode {
    const table = nameOf(node.table);
    const spec = treatments(table);
    if (!spec || !node.updates) return node;
    return { ...node, updates: this.updates(table!, spec, node.updates) } as UpdateQueryNode;
  }

  private updates(table: string, spec: Record<string, Treatment>, updates: readonly ColumnUpdateNode[]): ColumnUpdateNode[] {
    return updates.map((update) => {
      const column = nameOf(update.column);
      const kind = column ? spec[column] : undefined;
      if (!kind) return update;
      // `excluded.col` in an upsert: the value inserted, already encrypted.
      if (update.value.kind === 'ReferenceNode' && nameOf((update.value as unknown as { table?: OperationNode }).table) === 'excluded') return update;
      return { ...update, value: this.protectNode(`${table}.${column}`, kind, update.value) };
    });
  }

  private protectNode(name: string, kind: Treatment, node: OperationNode): OperationNode {
    if (node.kind === 'DefaultInsertValueNode') return node;
    if (node.kind !== 'ValueNode') throw new UnencryptableWriteError(`${name} holds personal data: write it as a value, not an SQL expression (${node.kind})`);
    const value = node as ValueNode;
    return { ...value, value: this.protect(kind, value.value) } as ValueNode;
  }

  async transformResult({ result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const rows = result.rows;
    if (rows.length === 0) return result;
    // Every row of a result has the same columns: the ones that may hold personal data are found once.
    const names = Object.keys(rows[0]!).filter((name) => DECRYPTED_NAMES.has(name));
    if (names.length === 0) return result;
    // The values are opened together (on the decryption thread when there are many: a list page).
    const places: { row: UnknownRow; name: string }[] = [];
    const values: string[] = [];
    for (const row of rows) {
      for (const name of names) {
        const value = row[name];
        if (typeof value !== 'string') continue;
        if (value.startsWith(ENVELOPE_PREFIX)) {
          places.push({ row, name });
          values.push(value);
        } else if (value.startsWith(QUOTED_PREFIX)) {
          row[name] = this.reveal(value);
        }
      }
    }
    if (values.length === 0) return result;
    const plain = await this.ring().decryptJsonMany(values);
    for (let i = 0; i < places.length; i++) {
      const { row, name } = places[i]!;
      row[name] = plain[i];
    }
    return result;
  }
}

/** The field protection of a database (or a transaction on it): every app database carries one. */
export function protectionOf(db: Kysely<any>): FieldProtection {
  const found = db.getExecutor().plugins.find((plugin): plugin is FieldProtection => plugin instanceof FieldProtection);
  if (!found) throw new Error('this database has no field protection plugin (open it with openDatabase)');
  return found;
}

/** The keyring of a database (or a transaction on it); throws NoKeyringError when none is loaded. */
export function keyringOf(db: Kysely<any>): Keyring {
  const keyring = protectionOf(db).keyring;
  if (!keyring) throw new NoKeyringError();
  return keyring;
}

/** The stored address-by-identity key: the blind index of the SHA-256 of "<idClass>:<idNumber>" (src/addresses/input.ts). */
export function addressIdentityIndex(keyring: Keyring, identityKey: string): string {
  return keyring.blindIndex(BLIND_INDEXED_COLUMNS.address_verifications!.applicant_id_key!, identityKey);
}
