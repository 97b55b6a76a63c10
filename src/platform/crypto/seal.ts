import { createHash } from 'node:crypto';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { FastifyBaseLogger } from 'fastify';
import type { EncryptedFileStore } from '../../files/encrypted-store.js';
import '../../files/tables.js';
import type { Database } from '../db/database.js';
import type { DB } from '../db/schema.js';
import { ENVELOPE_PREFIX, envelopeKeyId, Keyring } from './keyring.js';
import { keyringOf, PROTECTED_COLUMNS, protectionOf } from './fields.js';

/**
 * Bringing stored values under the active data key, in batches, while the service runs:
 *
 * - `legacy` mode (every start): values stored before encryption existed (plain) are encrypted,
 *   and their blind indexes written (the registry's keys and phones, the address-by-identity key).
 * - `all` mode (`vouch keys rotate --reencrypt`): also every value under an older data key.
 *
 * Each batch is one transaction of row updates through the field protection; readers see a row
 * either before or after, and both read the same. Idempotent: a second run finds nothing to do.
 */

const PRIMARY_KEYS: Record<string, string[]> = {
  registry_records: ['type', 'key'],
  upstream_cache: ['type', 'key_hash'],
  address_verifications: ['id'],
  business_verifications: ['id'],
  guarantor_verifications: ['id'],
  employment_verifications: ['id'],
  field_tasks: ['kind', 'verification_id'],
  field_report_keys: ['agent_id', 'key'],
  outbox_messages: ['id'],
  mail_messages: ['id'],
  webhook_deliveries: ['id'],
  idempotency_keys: ['org_id', 'mode', 'key'],
  lookup_consents: ['usage_id'],
  pending_sign_ups: ['token_hash'],
  verification_sessions: ['id'],
  session_liveness_attempts: ['id'],
  screenings: ['id'],
  screening_hits: ['id'],
};

/** Every table with protected columns is covered: a table left out would keep its values under a leaked key after `--reencrypt`. */
export function tablesWithoutPrimaryKeys(): string[] {
  return Object.keys(PROTECTED_COLUMNS).filter((table) => !PRIMARY_KEYS[table]);
}

/** Columns whose plain form is a number (they were double precision before 0020). */
const NUMERIC = new Set(['address_verifications.latitude', 'address_verifications.longitude']);

export interface SealOptions {
  mode: 'legacy' | 'all';
  batchSize?: number;
}

/** Rows (and files) rewritten per table. */
export type SealCounts = Record<string, number>;

type Row = Record<string, unknown>;

/** Whether a raw value (json columns read as text) is encrypted under `active` (any key when undefined). */
function isSealed(kind: 'json' | 'value', raw: string, active: string | undefined): boolean {
  const value = kind === 'json' ? (raw.startsWith(`"${ENVELOPE_PREFIX}`) ? (JSON.parse(raw) as string) : '') : raw;
  const id = envelopeKeyId(value);
  return id !== undefined && (active === undefined || id === active);
}

function needsWork(table: string, columns: Record<string, 'json' | 'value'>, active: string | undefined): RawBuilder<boolean> {
  const prefix = (kind: 'json' | 'value') => `${kind === 'json' ? '"' : ''}${ENVELOPE_PREFIX}${active ? `${active}:` : ''}%`;
  const tests = Object.entries(columns).map(
    ([column, kind]) => sql`(${sql.ref(column)} is not null and ${kind === 'json' ? sql`${sql.ref(column)}::text` : sql.ref(column)} not like ${prefix(kind)})`,
  );
  const registryLegacy = table === 'registry_records' ? [sql`record_mac is null`] : [];
  return sql<boolean>`(${sql.join([...tests, ...registryLegacy], sql` or `)})`;
}

/** Encrypts what is not yet under the active key (see the module comment); returns the rows rewritten per table. */
export async function sealStoredValues(db: Kysely<DB>, { mode, batchSize = 500 }: SealOptions): Promise<SealCounts> {
  const keyring = keyringOf(db);
  const counts: SealCounts = {};
  for (const [table, columns] of Object.entries(PROTECTED_COLUMNS)) {
    const keys = PRIMARY_KEYS[table];
    if (!keys) continue;
    counts[table] = 0;
    let previous = '';
    for (;;) {
      const active = mode === 'all' ? keyring.activeKeyId() : undefined;
      const selected = [
        ...keys.map((key) => sql.ref(key)),
        ...Object.entries(columns).map(([column, kind]) => (kind === 'json' ? sql`${sql.ref(column)}::text as ${sql.ref(column)}` : sql.ref(column))),
        ...(table === 'registry_records' ? [sql`phone`, sql`record_mac`] : []),
        ...(table === 'address_verifications' ? [sql`applicant_id_key`] : []),
      ];
      // Without the plugin: the stored form, to tell plain from encrypted and old keys from the active one.
      const { rows } = await sql<Row>`
        select ${sql.join(selected)} from ${sql.table(table)} where ${needsWork(table, columns, active)}
        order by ${sql.join(keys.map((key) => sql.ref(key)))} limit ${batchSize}`.execute(db.withoutPlugins());
      if (rows.length === 0) break;
      const ids = JSON.stringify(rows.map((row) => keys.map((key) => row[key])));
      // A batch that changed nothing would come back the same: stop rather than loop.
      if (ids === previous) throw new Error(`${table}: rows could not be re-encrypted (is another process writing under an older key?)`);
      previous = ids;
      await db.transaction().execute(async (trx) => {
        for (const row of rows) await sealRow(trx, keyring, table, columns, keys, row, active);
      });
      counts[table] += rows.length;
    }
  }
  return counts;
}

async function sealRow(trx: Kysely<DB>, keyring: Keyring, table: string, columns: Record<string, 'json' | 'value'>, keys: string[], row: Row, active: string | undefined): Promise<void> {
  const set: Row = {};
  let legacy = false;
  for (const [column, kind] of Object.entries(columns)) {
    const raw = row[column];
    if (raw === null || raw === undefined) continue;
    const text = String(raw);
    if (isSealed(kind, text, active)) continue;
    const sealed = isSealed(kind, text, undefined);
    if (!sealed) legacy = true;
    if (kind === 'json') {
      // The JSON text as stored (webhook bodies keep their bytes).
      set[column] = sealed ? keyring.decrypt(JSON.parse(text) as string) : text;
    } else {
      set[column] = sealed ? JSON.parse(keyring.decrypt(text)) : NUMERIC.has(`${table}.${column}`) ? Number(text) : text;
    }
  }
  if (table === 'registry_records' && row.record_mac === null) {
    await sealRegistryRow(trx, keyring, row, set);
    return;
  }
  // The address-by-identity key of a plain row is an unkeyed SHA-256: written again, the plugin makes it a blind index.
  if (table === 'address_verifications' && legacy && typeof row.applicant_id_key === 'string') set.applicant_id_key = row.applicant_id_key;
  if (Object.keys(set).length === 0) return;
  let update = (trx as Kysely<any>).updateTable(table).set(set);
  for (const key of keys) update = update.where(key, '=', row[key]);
  // Only if nobody wrote the row since it was read (the API runs meanwhile): else the next batch sees it again.
  for (const column of Object.keys(set)) {
    if (column in columns) update = update.where(sql`${sql.ref(column)}::text`, '=', String(row[column]));
  }
  await update.execute();
}

/** A registry row imported before encryption: its key and phone become blind indexes, its record ciphertext. */
async function sealRegistryRow(trx: Kysely<DB>, keyring: Keyring, row: Row, set: Row): Promise<void> {
  const protection = protectionOf(trx);
  const type = row.type as string;
  const recordText = (set.record as string | undefined) ?? keyring.decrypt(JSON.parse(row.record as string) as string);
  const key = keyring.blindIndex(type, row.key as string);
  const phone = row.phone === null ? null : keyring.blindIndex('phone', row.phone as string);
  // A row imported again since the upgrade already holds the key: that newer one stays.
  await sql`
    insert into registry_records (type, key, phone, record, record_mac)
    values (${type}, ${key}, ${phone}, ${protection.protect('json', recordText)}::jsonb, ${keyring.blindIndex('registry-record', `${type}\0${recordText}`)})
    on conflict (type, key) do nothing`.execute(trx);
  await sql`delete from registry_records where type = ${type} and key = ${row.key as string}`.execute(trx);
}

/**
 * Files: `legacy` encrypts the files stored before encryption (`sealed` false); `all` also
 * re-encrypts every file under an older data key (each file is read to see its key).
 */
export async function sealStoredFiles(db: Kysely<DB>, store: EncryptedFileStore, { mode, batchSize = 100 }: SealOptions): Promise<number> {
  const keyring = keyringOf(db);
  let done = 0;
  let after = '';
  for (;;) {
    let query = db.selectFrom('uploaded_files').select(['id', 'content_type', 'sealed']).where('id', '>', after || '00000000-0000-0000-0000-000000000000').orderBy('id').limit(batchSize);
    if (mode === 'legacy') query = query.where('sealed', '=', false);
    const rows = await query.execute();
    if (rows.length === 0) return done;
    for (const row of rows) {
      const stored = await store.getStored(row.id);
      const active = keyring.activeKeyId();
      if (stored && Keyring.fileKeyId(stored) !== active) {
        const plain = Keyring.isEncryptedFile(stored) ? keyring.decryptBytes(stored, row.id) : stored;
        await store.putStored(row.id, keyring.encryptBytes(plain, row.id), row.content_type);
        done += 1;
      }
      if (!row.sealed) await db.updateTable('uploaded_files').set({ sealed: true }).where('id', '=', row.id).execute();
    }
    after = rows[rows.length - 1]!.id;
  }
}

/**
 * The `settings` row saying a legacy pass found nothing left in clear, for the protected columns
 * of its value (`protectedColumnsDigest`). Nothing is stored in clear since 0020 (the field
 * protection encrypts every write, files are recorded sealed, the registry import writes
 * `record_mac`), so once a pass has brought everything under encryption, later starts skip it
 * instead of scanning every protected table again (1.5 s of the database per million address
 * verifications). A release that protects another column has another digest, so its first start
 * runs the pass for the values already stored there; a database restored from before the pass
 * has no such row.
 */
export const LEGACY_SEALED_SETTING = 'legacy_values_sealed';

/** What the legacy pass covers: every protected table and column, in a fixed order. */
export function protectedColumnsDigest(): string {
  const covered = Object.entries(PROTECTED_COLUMNS)
    .filter(([table]) => PRIMARY_KEYS[table])
    .map(([table, columns]) => `${table}(${Object.keys(columns).sort().join(',')})`)
    .sort();
  return createHash('sha256').update(covered.join(';')).digest('hex');
}

/**
 * Encrypts what an earlier release stored in clear (`legacy` mode, values then files), unless a
 * pass over the same protected columns recorded that nothing was left; records it once a pass
 * finds nothing more to do. Returns what it rewrote, or null when it was skipped.
 */
export async function sealLegacy(database: Database, store: EncryptedFileStore): Promise<{ rows: SealCounts; files: number } | null> {
  const digest = protectedColumnsDigest();
  const done = await database.db.selectFrom('settings').select('value').where('name', '=', LEGACY_SEALED_SETTING).executeTakeFirst();
  if (done?.value === digest) return null;
  const rows = await sealStoredValues(database.db, { mode: 'legacy' });
  const files = await sealStoredFiles(database.db, store, { mode: 'legacy' });
  await database.db
    .insertInto('settings')
    .values({ name: LEGACY_SEALED_SETTING, value: digest })
    .onConflict((oc) => oc.column('name').doUpdateSet({ value: digest }))
    .execute();
  return { rows, files };
}

/**
 * At start: `sealLegacy` without holding up the API. Logs counts only. A failure is logged and
 * retried at the next start (nothing is recorded as done).
 */
export function sealLegacyInBackground(database: Database, store: EncryptedFileStore, log: Pick<FastifyBaseLogger, 'info' | 'error'>): void {
  void (async () => {
    try {
      const sealed = await sealLegacy(database, store);
      if (!sealed) return;
      const total = Object.values(sealed.rows).reduce((sum, n) => sum + n, 0);
      if (total + sealed.files > 0) log.info(sealed, 'personal data stored before encryption is now encrypted');
    } catch (err) {
      log.error({ err: (err as Error).message }, 'encrypting data stored before encryption failed; it is retried at the next start');
    }
  })();
}
