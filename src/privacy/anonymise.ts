import { sql, type Kysely } from 'kysely';
import type { FileStore } from '../files/store.js';
import type { DB } from '../platform/db/schema.js';
import './tables.js';

/**
 * Blanking a verification's personal data while keeping the row (ids, reference, status, dates,
 * charges): what the retention job does to verifications past their organization's period, and
 * what an erasure does to the verifications of the person erased. Shared by both so they blank
 * the same columns (the personal columns of PROTECTED_COLUMNS in src/platform/crypto/fields.ts).
 */

export const VERIFICATION_KINDS = ['address', 'business', 'guarantor', 'employment'] as const;
export type VerificationKind = (typeof VERIFICATION_KINDS)[number];

export const VERIFICATION_TABLES = {
  address: 'address_verifications',
  business: 'business_verifications',
  guarantor: 'guarantor_verifications',
  employment: 'employment_verifications',
} as const satisfies Record<VerificationKind, keyof DB>;

/** The column holding a verification's status, and the statuses of a verification that ended. */
export const STATUS_COLUMN: Record<VerificationKind, 'status' | 'state'> = { address: 'status', business: 'status', guarantor: 'state', employment: 'state' };
export const ENDED_STATUSES = ['verified', 'not_verified', 'cancelled'] as const;

/** A blanked person: every field the records render, empty (the API's schemas require them). */
const BLANK_PERSON = JSON.stringify({ firstname: '', middlename: '', lastname: '', phone: '', email: '', gender: '', birthdate: '', idType: '', idNumber: '', photo: '' });
const BLANK_ADDRESS = JSON.stringify({ street: '', city: '', landmark: '', lga: '', state: '', country: '' });

/** What every personal column of a verification becomes: empty values (NOT NULL columns) or null. */
const WHOLE_ROW: Record<VerificationKind, Record<string, unknown>> = {
  address: { applicant: BLANK_PERSON, applicant_id_key: null, neighbor: null, street: '', city: '', landmark: '', latitude: null, longitude: null },
  business: { applicant: BLANK_PERSON, neighbor: null, findings: null },
  guarantor: { applicant: BLANK_PERSON, firstname: '', lastname: '', phone: '', email: '', address: BLANK_ADDRESS, response: null },
  employment: { applicant: BLANK_PERSON, employer_email: '', employer_phone: '', attestation: null },
};
/** The consent recorded with a verification (0021): its reference may name the person. */
const CONSENT = { consent_reference: null, consent_obtained_at: null, consent_channel: null };

/**
 * The people a verification names besides its applicant, and the columns that are theirs: an
 * erasure of one of them blanks only those (the applicant's verification stays theirs).
 */
export const PARTY_COLUMNS: Record<string, Record<string, unknown>> = {
  'address:neighbour': { neighbor: null },
  'business:neighbour': { neighbor: null },
  'guarantor:guarantor': { firstname: '', lastname: '', phone: '', email: '', address: BLANK_ADDRESS, response: null },
  'employment:employer': { employer_email: '', employer_phone: '' },
};

/** Outbox messages (to guarantors and employers) name their verification by kind prefix. */
const OUTBOX_PREFIX: Partial<Record<VerificationKind, string>> = { guarantor: 'guarantor%', employment: 'employer%' };
const LINK_KIND: Partial<Record<VerificationKind, string>> = { guarantor: 'guarantor', employment: 'employer' };

const isFieldKind = (kind: VerificationKind): kind is 'address' | 'business' => kind === 'address' || kind === 'business';

function list(values: readonly (string | number)[]) {
  return sql.join(values.map((value) => sql`${value}`));
}

/** The photo ids of field verifications: on the row, and in a report held for review. */
export async function photosOf(db: Kysely<DB>, kind: VerificationKind, ids: readonly number[]): Promise<string[]> {
  if (!isFieldKind(kind) || ids.length === 0) return [];
  const { rows } = await sql<{ photo_ids: string[] }>`select photo_ids from ${sql.table(VERIFICATION_TABLES[kind])} where id in (${list(ids)})`.execute(db);
  const held = await db
    .selectFrom('field_tasks')
    .select('held_report')
    .where('kind', '=', kind)
    .where('verification_id', 'in', [...ids])
    .where('held_report', 'is not', null)
    .execute();
  const photos = new Set<string>();
  for (const row of rows) for (const id of row.photo_ids ?? []) photos.add(id);
  for (const row of held) for (const id of row.held_report?.photoIds ?? []) photos.add(id);
  return [...photos];
}

/** Deletes files from the store (a missing one is not an error), a few at a time. */
export async function deleteFiles(store: FileStore, ids: readonly string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += 8) await Promise.all(ids.slice(i, i + 8).map((id) => store.delete(id)));
}

export interface AnonymiseOptions {
  now: Date;
  /** An erasure: verifications still open are ended (cancelled, reason SUBJECT_ERASED) and their webhook deliveries deleted. */
  erasure?: boolean;
}

export interface AnonymiseCounts {
  verifications: number;
  photos: number;
  outbox: number;
  fieldReportKeys: number;
  webhookDeliveries: number;
}

/**
 * Blanks every personal column of the given verifications (of one kind), deletes their photos
 * (from the store first, then their rows: a crash between leaves rows whose files are gone, and
 * the next run deletes them again), the reports held for review, the field app's stored answers,
 * the messages sent to their respondents. Rows already anonymised are skipped. Each row is
 * updated on its own through the field protection, so each blanked value is encrypted anew.
 */
export async function anonymiseVerifications(
  db: Kysely<DB>,
  store: FileStore,
  kind: VerificationKind,
  ids: readonly number[],
  { now, erasure = false }: AnonymiseOptions,
): Promise<AnonymiseCounts> {
  const counts: AnonymiseCounts = { verifications: 0, photos: 0, outbox: 0, fieldReportKeys: 0, webhookDeliveries: 0 };
  if (ids.length === 0) return counts;
  const photos = await photosOf(db, kind, ids);
  await deleteFiles(store, photos);
  const table = VERIFICATION_TABLES[kind];
  const status = STATUS_COLUMN[kind];
  await db.transaction().execute(async (trx) => {
    const loose = trx as unknown as Kysely<any>;
    for (const id of ids) {
      const row = await sql<{ open: boolean }>`
        select ${sql.ref(status)} not in ('verified', 'not_verified', 'cancelled') as open from ${sql.table(table)}
         where id = ${id} and anonymised_at is null for update`.execute(trx);
      const found = row.rows[0];
      if (!found) continue;
      const end = erasure && found.open ? { [status]: 'cancelled', reason: 'SUBJECT_ERASED', cancelled_at: now } : {};
      await loose
        .updateTable(table)
        .set({ ...WHOLE_ROW[kind], ...CONSENT, ...(isFieldKind(kind) ? { photo_ids: sql`'{}'::uuid[]` } : {}), ...end, anonymised_at: now })
        .where('id', '=', id)
        .execute();
      counts.verifications += 1;
    }
    if (photos.length > 0) {
      const gone = await trx.deleteFrom('uploaded_files').where('id', 'in', photos).executeTakeFirst();
      counts.photos = Number(gone.numDeletedRows);
    }
    if (isFieldKind(kind)) {
      await trx
        .updateTable('field_tasks')
        .set({ held_report: null, held_at: null })
        .where('kind', '=', kind)
        .where('verification_id', 'in', [...ids])
        .where('held_report', 'is not', null)
        .execute();
      if (erasure) {
        await trx
          .updateTable('field_tasks')
          .set({ closed_at: now, outcome: 'cancelled' })
          .where('kind', '=', kind)
          .where('verification_id', 'in', [...ids])
          .where('closed_at', 'is', null)
          .execute();
      }
      const keys = await trx.deleteFrom('field_report_keys').where('kind', '=', kind).where('verification_id', 'in', [...ids]).executeTakeFirst();
      counts.fieldReportKeys = Number(keys.numDeletedRows);
    }
    const prefix = OUTBOX_PREFIX[kind];
    if (prefix) {
      const outbox = await trx.deleteFrom('outbox_messages').where('kind', 'like', prefix).where('verification_id', 'in', [...ids]).executeTakeFirst();
      counts.outbox = Number(outbox.numDeletedRows);
    }
    const linkKind = LINK_KIND[kind];
    if (erasure && linkKind) {
      await sql`update respondent_links set used_at = ${now} where kind = ${linkKind} and verification_id in (${list(ids)}) and used_at is null`.execute(trx);
    }
    if (erasure) {
      const deliveries = await trx.deleteFrom('webhook_deliveries').where('resource_kind', '=', kind).where('resource_id', 'in', [...ids]).executeTakeFirst();
      counts.webhookDeliveries = Number(deliveries.numDeletedRows);
    }
  });
  return counts;
}

/**
 * Blanks one party's columns (a neighbour, a guarantor, an employer's contact) on the given rows;
 * an open verification is ended (cancelled, SUBJECT_ERASED): it cannot go on without them.
 */
export async function erasePartyColumns(db: Kysely<DB>, kind: VerificationKind, party: string, ids: readonly number[], now: Date): Promise<number> {
  const columns = PARTY_COLUMNS[`${kind}:${party}`];
  if (!columns || ids.length === 0) return 0;
  const table = VERIFICATION_TABLES[kind];
  const status = STATUS_COLUMN[kind];
  return db.transaction().execute(async (trx) => {
    const loose = trx as unknown as Kysely<any>;
    let count = 0;
    for (const id of ids) {
      const row = await sql<{ open: boolean }>`
        select ${sql.ref(status)} not in ('verified', 'not_verified', 'cancelled') as open from ${sql.table(table)} where id = ${id} for update`.execute(trx);
      const found = row.rows[0];
      if (!found) continue;
      const end = found.open ? { [status]: 'cancelled', reason: 'SUBJECT_ERASED', cancelled_at: now } : {};
      await loose.updateTable(table).set({ ...columns, ...end }).where('id', '=', id).execute();
      if (found.open && isFieldKind(kind)) {
        await trx.updateTable('field_tasks').set({ closed_at: now, outcome: 'cancelled', held_report: null, held_at: null }).where('kind', '=', kind).where('verification_id', '=', id).where('closed_at', 'is', null).execute();
      }
      const linkKind = LINK_KIND[kind];
      if (found.open && linkKind) await sql`update respondent_links set used_at = ${now} where kind = ${linkKind} and verification_id = ${id} and used_at is null`.execute(trx);
      count += 1;
    }
    const prefix = OUTBOX_PREFIX[kind];
    // The messages to the guarantor or employer were theirs (their address, a link to answer).
    if (prefix && party !== 'neighbour') await trx.deleteFrom('outbox_messages').where('kind', 'like', prefix).where('verification_id', 'in', [...ids]).execute();
    return count;
  });
}
