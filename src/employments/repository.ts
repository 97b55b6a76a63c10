import type { Kysely, Transaction, Updateable } from 'kysely';
import type { DB } from '../platform/db/schema.js';
import { pageBySequence, type Page, type Scope } from '../platform/pagination.js';
import type { EmploymentRow, EmploymentVerificationsTable } from './tables.js';
import type { EmploymentInput } from './validate.js';

/** The `sequences` kind that numbers an organization's employment verifications per mode. */
export const EMPLOYMENT_SEQUENCE = 'employment';

export interface NewEmployment {
  seq: number;
  input: EmploymentInput;
  price: number;
  now: Date;
}

export async function insertEmployment(trx: Transaction<DB>, scope: Scope, { seq, input, price, now }: NewEmployment): Promise<EmploymentRow> {
  return trx
    .insertInto('employment_verifications')
    .values({
      org_id: scope.orgId,
      mode: scope.mode,
      seq,
      reference: input.reference,
      applicant: JSON.stringify(input.applicant),
      employer_name: input.employerName,
      employer_email: input.employerEmail,
      employer_phone: input.employerPhone,
      claimed_title: input.title,
      claimed_start_date: input.startDate,
      claimed_end_date: input.endDate,
      reason: null,
      price,
      created_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function referenceTaken(db: Kysely<DB>, scope: Scope, reference: string): Promise<boolean> {
  const row = await db
    .selectFrom('employment_verifications')
    .select('id')
    .where('org_id', '=', scope.orgId)
    .where('mode', '=', scope.mode)
    .where('reference', '=', reference)
    .executeTakeFirst();
  return row !== undefined;
}

export async function findEmployment(db: Kysely<DB>, scope: Scope, id: number): Promise<EmploymentRow | undefined> {
  return db
    .selectFrom('employment_verifications')
    .selectAll()
    .where('org_id', '=', scope.orgId)
    .where('mode', '=', scope.mode)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** The row, locked until the transaction ends: every state change starts here. */
export async function lockEmployment(trx: Transaction<DB>, scope: Scope, id: number, options: { skipLocked?: boolean } = {}): Promise<EmploymentRow | undefined> {
  let query = trx
    .selectFrom('employment_verifications')
    .selectAll()
    .where('org_id', '=', scope.orgId)
    .where('mode', '=', scope.mode)
    .where('id', '=', id)
    .forUpdate();
  if (options.skipLocked) query = query.skipLocked();
  return query.executeTakeFirst();
}

export async function updateEmployment(
  trx: Transaction<DB>,
  scope: Scope,
  id: number,
  patch: Updateable<EmploymentVerificationsTable>,
): Promise<EmploymentRow> {
  return trx
    .updateTable('employment_verifications')
    .set(patch)
    .where('org_id', '=', scope.orgId)
    .where('mode', '=', scope.mode)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Newest first; the page is a range of `seq`, so its cost does not grow with the offset. */
export async function listEmployments(db: Kysely<DB>, scope: Scope, page: Page): Promise<{ rows: EmploymentRow[]; total: number }> {
  return pageBySequence<EmploymentRow>(db, { table: 'employment_verifications', kind: EMPLOYMENT_SEQUENCE }, scope, page);
}
