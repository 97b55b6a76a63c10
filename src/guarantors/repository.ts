import type { Kysely, Transaction, Updateable } from 'kysely';
import type { DB } from '../platform/db/schema.js';
import { pageBySequence, type Page, type Scope } from '../platform/pagination.js';
import type { GuarantorInput } from './validate.js';
import type { GuarantorRow, GuarantorVerificationsTable } from './tables.js';

/** The `sequences` kind that numbers an organization's guarantor verifications per mode. */
export const GUARANTOR_SEQUENCE = 'guarantor';

export interface NewGuarantor {
  seq: number;
  input: GuarantorInput;
  /** What the creation cost (kobo): refunded if it is cancelled before the guarantor answers. */
  price: number;
  now: Date;
}

export async function insertGuarantor(trx: Transaction<DB>, scope: Scope, { seq, input, price, now }: NewGuarantor): Promise<GuarantorRow> {
  return trx
    .insertInto('guarantor_verifications')
    .values({
      org_id: scope.orgId,
      mode: scope.mode,
      seq,
      reference: input.reference,
      applicant: JSON.stringify(input.applicant),
      firstname: input.firstname,
      lastname: input.lastname,
      phone: input.phone,
      email: input.email,
      acceptable_id_types: JSON.stringify(input.acceptableIdTypes),
      address: JSON.stringify(input.address),
      verify_address: input.verifyAddress,
      address_verification_id: null,
      address_outcome: null,
      reason: null,
      price,
      created_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findGuarantor(db: Kysely<DB>, scope: Scope, id: number): Promise<GuarantorRow | undefined> {
  return db
    .selectFrom('guarantor_verifications')
    .selectAll()
    .where('org_id', '=', scope.orgId)
    .where('mode', '=', scope.mode)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function referenceTaken(db: Kysely<DB>, scope: Scope, reference: string): Promise<boolean> {
  const row = await db
    .selectFrom('guarantor_verifications')
    .select('id')
    .where('org_id', '=', scope.orgId)
    .where('mode', '=', scope.mode)
    .where('reference', '=', reference)
    .executeTakeFirst();
  return row !== undefined;
}

/** The row, locked until the transaction ends: every state change starts here. */
export async function lockGuarantor(trx: Transaction<DB>, scope: Scope, id: number, options: { skipLocked?: boolean } = {}): Promise<GuarantorRow | undefined> {
  let query = trx
    .selectFrom('guarantor_verifications')
    .selectAll()
    .where('org_id', '=', scope.orgId)
    .where('mode', '=', scope.mode)
    .where('id', '=', id)
    .forUpdate();
  if (options.skipLocked) query = query.skipLocked();
  return query.executeTakeFirst();
}

export async function updateGuarantor(
  trx: Transaction<DB>,
  scope: Scope,
  id: number,
  patch: Updateable<GuarantorVerificationsTable>,
): Promise<GuarantorRow> {
  return trx
    .updateTable('guarantor_verifications')
    .set(patch)
    .where('org_id', '=', scope.orgId)
    .where('mode', '=', scope.mode)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Newest first; the page is a range of `seq`, so its cost does not grow with the offset. */
export async function listGuarantors(db: Kysely<DB>, scope: Scope, page: Page): Promise<{ rows: GuarantorRow[]; total: number }> {
  return pageBySequence<GuarantorRow>(db, { table: 'guarantor_verifications', kind: GUARANTOR_SEQUENCE }, scope, page);
}
