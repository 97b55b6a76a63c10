import type { PageViewer } from '../access-log/service.js';
import type { Kysely, Transaction } from 'kysely';
import { consentColumns } from '../consent/consent.js';
import type { DB } from '../platform/db/schema.js';
import type { Page, Scope } from '../platform/pagination.js';
import { scopedTable } from '../platform/scoped-table.js';
import type { GuarantorInput } from './validate.js';
import type { GuarantorRow } from './tables.js';

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
      ...consentColumns(input.consent),
      created_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

const guarantors = scopedTable('guarantor_verifications', GUARANTOR_SEQUENCE);

export const findGuarantor = guarantors.find;
export const lockGuarantor = guarantors.lock;
export const updateGuarantor = guarantors.update;
export const referenceTaken = guarantors.referenceTaken;

/** A page of the scope's verifications, newest first; with a `viewer`, logged in the statement that reads it. */
export async function listGuarantors(db: Kysely<DB>, scope: Scope, page: Page, viewer?: PageViewer): Promise<{ rows: GuarantorRow[]; total: number }> {
  return guarantors.page(db, scope, page, undefined, viewer);
}
