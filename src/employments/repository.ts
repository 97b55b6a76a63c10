import type { PageViewer } from '../access-log/service.js';
import type { Kysely, Transaction } from 'kysely';
import { consentColumns } from '../consent/consent.js';
import type { DB } from '../platform/db/schema.js';
import type { Page, Scope } from '../platform/pagination.js';
import { scopedTable } from '../platform/scoped-table.js';
import type { EmploymentRow } from './tables.js';
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
      ...consentColumns(input.consent),
      created_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

const employments = scopedTable('employment_verifications', EMPLOYMENT_SEQUENCE);

export const findEmployment = employments.find;
export const lockEmployment = employments.lock;
export const updateEmployment = employments.update;
export const referenceTaken = employments.referenceTaken;

/** A page of the scope's verifications, newest first; with a `viewer`, logged in the statement that reads it. */
export async function listEmployments(db: Kysely<DB>, scope: Scope, page: Page, viewer?: PageViewer): Promise<{ rows: EmploymentRow[]; total: number }> {
  return employments.page(db, scope, page, undefined, viewer);
}
