import { sql, type Kysely } from 'kysely';
import type { DB } from '../platform/db/schema.js';
import { renderScreening } from './render.js';
import { hitsOf } from './repository.js';

/**
 * Screenings under the retention job (docs/screening.md, "Data protection"): a screening that is
 * not monitored is deleted with its hits once its last activity (made, reviewed, monitoring
 * ended: `updated_at`) is older than its organization's verification period. A monitored one is
 * kept while monitored. Batched and idempotent like the rest of the job.
 */
export async function applyScreeningRetention(
  db: Kysely<DB>,
  { now, verificationDays, batchSize = 200, shouldStop }: { now: Date; verificationDays: number; batchSize?: number; shouldStop?: () => boolean },
): Promise<number> {
  let deleted = 0;
  for (;;) {
    const { rows } = await sql<{ id: number }>`
      select s.id from screenings s left join retention_settings r on r.org_id = s.org_id
       where not s.monitored
         and s.updated_at < (${now}::timestamptz - make_interval(days => coalesce(r.verification_days, ${verificationDays}::int)))
       order by s.updated_at limit ${batchSize}`.execute(db);
    const ids = rows.map((row) => Number(row.id));
    if (ids.length > 0) deleted += Number((await db.deleteFrom('screenings').where('id', 'in', ids).executeTakeFirst()).numDeletedRows);
    if (ids.length < batchSize || shouldStop?.() === true) return deleted;
  }
}

/** What a subject request knows of the person from their other records: names, and birth years. */
export interface KnownPerson {
  /** Each name as its sorted, folded words ("adaeze obiorah"). */
  names: Set<string>;
  birthYears: Set<string>;
}

/** A name as its words, case, accents and order aside: how a subject request compares names. */
export function nameKey(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean)
    .sort()
    .join(' ');
}

/**
 * The names and birth years the records name (registry records, applicants: `firstname`,
 * `middlename`, `lastname`, `birthdate` or `dob`), with and without the middle name.
 */
export function knownPersonOf(records: readonly unknown[]): KnownPerson {
  const person: KnownPerson = { names: new Set(), birthYears: new Set() };
  for (const record of records) {
    if (record === null || typeof record !== 'object') continue;
    const r = record as Record<string, unknown>;
    const text = (key: string) => (typeof r[key] === 'string' ? (r[key] as string).trim() : '');
    const [first, middle, last] = [text('firstname'), text('middlename'), text('lastname')];
    if (first && last) {
      person.names.add(nameKey(`${first} ${last}`));
      if (middle) person.names.add(nameKey(`${first} ${middle} ${last}`));
    }
    const year = /\b(\d{4})\b/.exec(text('birthdate') || text('dob'))?.[1];
    if (year) person.birthYears.add(year);
  }
  return person;
}

export interface ScreeningOfSubject {
  id: number;
  orgId: string;
  mode: string;
  reference: string;
  record: ReturnType<typeof renderScreening>;
}

/**
 * Screenings of the person (a subject request, src/privacy/subjects.ts): screenings hold no ID
 * number, so they are found by name: a person screened under one of the person's names (or with
 * it as an alias), words compared whole, in any order, without case or accents, and with no date
 * of birth that contradicts theirs. Read in batches, decrypted as they are read.
 */
export async function findScreeningsOf(db: Kysely<DB>, person: KnownPerson, scope: { orgId?: string | undefined }): Promise<ScreeningOfSubject[]> {
  const found: ScreeningOfSubject[] = [];
  if (person.names.size === 0) return found;
  let after = 0;
  for (;;) {
    let query = db.selectFrom('screenings').selectAll().where('id', '>', after).orderBy('id').limit(500);
    if (scope.orgId) query = query.where('org_id', '=', scope.orgId);
    const rows = await query.execute();
    const named = rows.filter((row) => {
      const s = row.subject;
      if (s.type !== 'person' || ![s.name, ...s.aliases].some((name) => person.names.has(nameKey(name)))) return false;
      return !s.dob || person.birthYears.size === 0 || person.birthYears.has(s.dob.slice(0, 4));
    });
    const hits = await hitsOf(db, named.map((row) => Number(row.id)));
    for (const row of named) found.push({ id: Number(row.id), orgId: row.org_id, mode: row.mode, reference: row.reference, record: renderScreening(row, hits.get(Number(row.id)) ?? []) });
    if (rows.length < 500) return found;
    after = Number(rows[rows.length - 1]!.id);
  }
}

/** Deletes the screenings (their hits with them) and the webhook deliveries about them. */
export async function eraseScreenings(db: Kysely<DB>, ids: readonly number[]): Promise<{ screenings: number; webhookDeliveries: number }> {
  if (ids.length === 0) return { screenings: 0, webhookDeliveries: 0 };
  return db.transaction().execute(async (trx) => {
    const deliveries = await trx.deleteFrom('webhook_deliveries').where('resource_kind', '=', 'screening').where('resource_id', 'in', [...ids]).executeTakeFirst();
    const screenings = await trx.deleteFrom('screenings').where('id', 'in', [...ids]).executeTakeFirst();
    return { screenings: Number(screenings.numDeletedRows), webhookDeliveries: Number(deliveries.numDeletedRows) };
  });
}
